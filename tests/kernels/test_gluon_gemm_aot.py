"""The Gluon GEMM (kernels/triton/gemm_gluon_kernel.py) compiled ahead of time for sm_90, without
a GPU: every candidate tile of a mid-band and a large shape in both schedules (cooperative and
ping-pong), B column- and row-major, compiles
to the structure the kernel claims (TMA loads and stores, one wgmma shape per N part, setmaxnreg
24 for the producer and 240 for the consumers, one wgmma group per part left in flight, single-
thread stage releases), without spills and inside the shared memory the launcher budgets for.
Runs in a child process: the test session imports Triton under the interpreter."""

from __future__ import annotations

import os
import re
import textwrap

os.environ.setdefault("TRITON_INTERPRET", "1")

import pytest  # noqa: E402
from aot_child import compile_in_child  # noqa: E402

SM90_SMEM_BYTES = 232448

_SCRIPT = textwrap.dedent(
    """
    import json, re
    import torch
    from triton.backends.compiler import GPUTarget
    from harness_kernels.triton import aot
    from harness_kernels.triton import gemm_gluon as G

    target = GPUTarget("cuda", 90, 32)
    report = {}
    # the in-place split twins with B K-major only (the 405B QKV's layout; each spec costs CI time)
    specs = G.aot_specs(torch.bfloat16, True)
    specs += [s for s in G.aot_specs(torch.bfloat16, False) if not s["constexprs"]["SUM_IN_PLACE"]]
    specs += [dict(s, name=s["name"] + "_fp16") for s in G.aot_specs(torch.float16, True)[:2]]
    # fp8 e4m3 (B K-major, scales, bf16 C): the 160-accumulator tiles and a ping-pong one
    specs += G.aot_specs(torch.float8_e4m3fn, True, shapes=((512, 10240, 8192),))[:6]
    # three N parts (64 + 32 + 16 = 112; a probe's tile, not offered): both schedules
    kept, G.N_PARTS = G.N_PARTS, ((64, 32, 16),)
    specs += G.aot_specs(torch.bfloat16, True, shapes=((512, 3584, 3584),), split_shapes=())
    G.N_PARTS = kept
    for spec in specs:
        c = spec["constexprs"]
        try:
            info = aot.compile_for(spec["fn"], target, spec["signature"], c, spec["attrs"],
                                   spec["options"])
        except Exception as exc:
            report[spec["name"]] = dict(error=f"{type(exc).__name__}: {exc}"[:2000])
            continue
        ptx = info["asm"]["ptx"]
        bk = c["BK"]
        in_bytes = 1 if "fp8" in spec["name"] else 2
        report[spec["name"]] = dict(
            shared=info["shared"],
            budget=G.smem_bytes(c["SLICE_M"], c["BN0"] + c["BN1"] + c["BN2"], bk, c["STAGES"], in_bytes, 2,
                                c["C_SMEM"], c["PINGPONG"], c["BN0"] if c["C_HALVES"] else None),
            halves=c["C_HALVES"],
            fp8=in_bytes == 1, has_scale=c["HAS_SCALE"],
            c_smem=c["C_SMEM"], pingpong=c["PINGPONG"],
            bn0=c["BN0"], bn1=c["BN1"], bn2=c["BN2"], spills=info.get("n_spills", -1), mma=info["mma"],
            split=c["SPLIT_K"], in_place=c["SUM_IN_PLACE"], st_global=ptx.count("st.global"),
            atomics=re.findall(r"atom\\.global\\.[\\w.]+", ptx), ld_cg=ptx.count("ld.global.cg"),
            tma_loads=len(re.findall(r"cp\\.async\\.bulk\\.tensor\\.2d\\.shared::\\w+\\.global", ptx)),
            tma_stores=ptx.count("cp.async.bulk.tensor.2d.global.shared"),
            setmaxnreg=sorted(set(re.findall(r"setmaxnreg\\.(inc|dec)\\.sync\\.aligned\\.u32\\s+(\\d+);", ptx))),
            waits=sorted(set(re.findall(r"wgmma\\.wait_group\\.sync\\.aligned (\\d+);", ptx))),
            arrives=re.findall(r"(@%p\\d+ )?mbarrier\\.arrive\\.shared::cta\\.b64", ptx),
        )
    print(json.dumps(report))
    """
)


@pytest.fixture(scope="module")
def report() -> dict[str, dict]:
    return compile_in_child(_SCRIPT)


def test_every_spec_compiles(report: dict) -> None:
    errors = {n: f["error"] for n, f in report.items() if "error" in f}
    assert not errors, errors
    # both B layouts of the candidate tiles (160 and 192 wide among them), and fp16
    assert len(report) >= 10
    assert any(f["bn1"] == 32 for f in report.values())  # 128 + 32 = 160
    assert any(f["bn1"] == 64 for f in report.values())  # 128 + 64 = 192
    assert any(f["bn1"] == 16 for f in report.values())  # 128 + 16 = 144 (a wave tile)
    assert any(f["bn2"] == 16 for f in report.values())  # 64 + 32 + 16 = 112 (three parts)
    assert not all(f["c_smem"] for f in report.values())  # 256x160 stores from registers
    # 128x256 and 256x128 stage C by halves (C_HALVES: two equal parts, one buffer in turn)
    halves = {n: f for n, f in report.items() if f["halves"]}
    assert any("128x256s4h" in n for n in halves) and any("256x128s4h" in n for n in halves)
    assert all(f["c_smem"] and f["bn0"] == f["bn1"] and not f["bn2"] for f in halves.values())
    assert {f["pingpong"] for f in report.values()} == {True, False}
    assert any(f["fp8"] for f in report.values())
    # split-K twins (Llama-3.1-405B's fused QKV), both schedules, summed apart and in place
    assert {f["pingpong"] for f in report.values() if f["split"] > 1} == {True, False}
    assert {f["pingpong"] for f in report.values() if f["in_place"]} == {True, False}


def test_structure(report: dict) -> None:
    for name, f in report.items():
        assert f["spills"] == 0, name
        assert f["shared"] <= SM90_SMEM_BYTES and f["shared"] <= f["budget"], name
        parts = [n for n in (f["bn0"], f["bn1"], f["bn2"]) if n]  # C_HALVES: two equal ones
        shapes = {re.sub(r"\.f32.*", "", k) for k in f["mma"]}
        # wgmma's K is 32 bytes of operand: k16 for bf16/fp16, k32 (e4m3 x e4m3) for fp8
        ks, kinds = ("k32", "e4m3.e4m3") if f["fp8"] else ("k16", "")
        assert shapes == {f"wgmma.mma_async.sync.aligned.m64n{n}{ks}" for n in parts}, name
        assert all(kinds in k for k in f["mma"]) and f["has_scale"] == f["fp8"], name
        # A (one box per consumer, cooperative; one per tile, ping-pong) and each B part in;
        # each C part out by TMA when staged
        assert f["tma_loads"] >= (1 if f["pingpong"] else 2) + len(parts), name
        assert (f["tma_stores"] >= len(parts)) == f["c_smem"], name
        # split-K units store fp32 partials from registers, nothing by TMA
        if f["split"] > 1:
            assert f["st_global"] > 0 and f["tma_stores"] == 0 and not f["c_smem"], name
        # in place: one acq_rel count at GPU scope per slice, the parts read from L2 (.cg);
        # summed apart, neither (gemm_reduce_kernel.py reads them)
        if f["in_place"]:
            assert f["atomics"] and all("acq_rel" in a and ".gpu" in a for a in f["atomics"]), name
            assert f["ld_cg"] > 0, name
        else:
            assert not f["atomics"] and f["ld_cg"] == 0, name
        assert ["dec", "24"] in f["setmaxnreg"], name
        assert ["inc", "240"] in f["setmaxnreg"] or ["dec", "240"] in f["setmaxnreg"], name
        # the main loop leaves one group per N part in flight; the tile's end drains to 0
        assert f["waits"] == sorted({"0", str(len(parts))}), name
        assert f["arrives"] and all(p for p in f["arrives"]), name
