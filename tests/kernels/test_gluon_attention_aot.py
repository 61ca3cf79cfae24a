"""The Gluon FMHA (kernels/triton/attention_gluon_kernel.py) compiled ahead of time for sm_90,
without a GPU: every rung, head dim, mask and consumer count compiles to the structure the
kernel claims (TMA loads and stores, wgmma of the right shapes, setmaxnreg 24 for the producer
and 240 / 160 for the consumers, one mbarrier arrival per consumer, wgmma.wait_group 1 only with
the overlap), without spills and inside the shared memory the launcher budgets for.
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
    from harness_kernels.triton import attention_gluon as G

    target = GPUTarget("cuda", 90, 32)
    report = {}
    specs = [s for d in (64, 128, 256) for s in G.aot_specs(torch.bfloat16, d)]
    specs += [dict(s, name=s["name"] + "_fp16") for s in G.aot_specs(torch.float16, 128)]
    # the per-tile math's rungs: one spec each (the conversion and mask are their only change)
    specs += [G.aot_specs(torch.float16, 128, rungs=(r,), causal=(True,))[-1]
              for r in ("two-compare-mask", "scalar-cvt", "scaled-mask")]
    for spec in specs:
        c = spec["constexprs"]
        try:
            info = aot.compile_for(spec["fn"], target, spec["signature"], c, spec["attrs"],
                                   spec["options"])
        except Exception as exc:
            report[spec["name"]] = dict(error=f"{type(exc).__name__}: {exc}"[:2000])
            continue
        ptx = info["asm"]["ptx"]
        report[spec["name"]] = dict(
            shared=info["shared"],
            budget=G.smem_bytes(c["HEAD_DIM"], c["BLOCK_N"], c["STAGES"], c["CONSUMERS"],
                                qbuf=c["QBUF"]),
            consumers=c["CONSUMERS"], overlap=c["OVERLAP"], head_dim=c["HEAD_DIM"],
            pingpong=c["PINGPONG"],
            block_n=c["BLOCK_N"], spills=info.get("n_spills", -1), mma=info["mma"],
            # the load's state space reads shared::cluster under Triton 3.6, shared::cta under 3.9
            tma_loads=len(re.findall(r"cp\\.async\\.bulk\\.tensor\\.2d\\.shared::\\w+\\.global", ptx)),
            tma_stores=ptx.count("cp.async.bulk.tensor.2d.global.shared"),
            setmaxnreg=sorted(set(re.findall(r"setmaxnreg\\.(inc|dec)\\.sync\\.aligned\\.u32\\s+(\\d+);", ptx))),
            wait1=len(re.findall(r"wgmma\\.wait_group\\.sync\\.aligned 1;", ptx)),
            arrives=re.findall(r"(@%p\\d+ )?mbarrier\\.arrive\\.shared::cta\\.b64", ptx),
            waits=len(re.findall(r"mbarrier\\.try_wait\\.parity", ptx)),
            tile_math=c["TILE_MATH"],
            packed_cvt=len(re.findall(r"cvt\\.rn\\.b?f16x2\\.f32", ptx)),
            scalar_cvt=len(re.findall(r"cvt\\.rn\\.b?f16\\.f32", ptx)),
            fma=len(re.findall(r"fma\\.rn\\.f32", ptx)),
            mul=len(re.findall(r"mul\\.f32", ptx)),
            # the mask's compares and selects
            setp=len(re.findall(r"setp\\.", ptx)),
            selp=len(re.findall(r"selp\\.", ptx)),
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
    # 2 rungs x 2 masks x D 64/128/256, three consumers at D 64 where allowed, fp16 at D 128
    assert len(report) >= 16


def test_structure(report: dict) -> None:
    for name, f in report.items():
        d, bn = f["head_dim"], f["block_n"]
        assert f["spills"] == 0, name
        assert f["shared"] <= SM90_SMEM_BYTES and f["shared"] <= f["budget"], name
        # S = Q K^T: m64 x BLOCK_N; O += P V: m64 x D (one instruction shape when they match)
        shapes = {re.sub(r"\.f32.*", "", k) for k in f["mma"]}
        assert shapes == {f"wgmma.mma_async.sync.aligned.m64n{n}k16" for n in {bn, d}}, name
        assert f["tma_loads"] >= 3 and f["tma_stores"] >= 1, name  # Q, K, V in; O out
        consumer_regs = "240" if f["consumers"] == 2 else "160"
        assert ["dec", "24"] in f["setmaxnreg"], name
        assert ["inc", consumer_regs] in f["setmaxnreg"] or [
            "dec",
            consumer_regs,
        ] in f["setmaxnreg"], name
        # releases are single-thread arrivals (a predicate), never one per thread
        assert f["arrives"] and all(p for p in f["arrives"]), name
        assert (f["wait1"] > 0) == f["overlap"], name


def test_pingpong_adds_the_turns(report: dict) -> None:
    """A ping-pong spec is its twin plus the turn barriers: each turn ends in one more
    single-thread arrival (on the other consumer's turn barrier), so its PTX holds more arrivals
    than the twin's, and each turn begins with a wait, so it holds more waits too; the rest of
    the structure is the twin's (test_structure)."""
    twins = [(n, n.removesuffix("_pp")) for n in report if n.endswith("_pp")]
    assert twins, "no ping-pong spec compiled"
    for pp, plain in twins:
        assert report[pp]["pingpong"] and not report[plain]["pingpong"], pp
        assert report[pp]["consumers"] == 2 and report[pp]["overlap"], pp
        assert len(report[pp]["arrives"]) > len(report[plain]["arrives"]), pp
        assert report[pp]["waits"] > report[plain]["waits"], pp


def test_per_tile_math_rungs(report: dict) -> None:
    """Each per-tile rung is its full twin (same config, fp16, D 128, causal) but for one step
    down the ladder: the full kernel masks against a key limit a row (one compare a score), the
    two-compare-mask rung ANDs two compares a score, the scalar-cvt rung also converts P one at
    a time as Triton's `.to` does (no cvt.rn.f16x2.f32), and the scaled-mask rung also masks the
    scaled scores, which turns FMAs into multiplies on the masked tiles."""
    rungs = ("two-compare-mask", "scalar-cvt", "scaled-mask")
    names = {r: [n for n in report if n.startswith(f"attn_prefill_gluon_{r}_")] for r in rungs}
    assert all(len(v) == 1 for v in names.values()), names
    f = {r: report[names[r][0]] for r in rungs}
    f["full"] = report[names["scalar-cvt"][0].replace("scalar-cvt", "full", 1) + "_fp16"]
    assert [f[r]["tile_math"] for r in ("full", *rungs)] == [3, 2, 1, 0]
    # the mask: more compares and selects with two compares a score (Triton 3.9: 416 setp and
    # 516 selp against 318 and 292); the rest as the full kernel's
    assert f["two-compare-mask"]["setp"] > f["full"]["setp"]
    assert f["two-compare-mask"]["selp"] > f["full"]["selp"]
    assert f["two-compare-mask"]["packed_cvt"] == f["full"]["packed_cvt"] > 0
    # the conversion
    assert f["scalar-cvt"]["packed_cvt"] == 0
    assert f["scalar-cvt"]["scalar_cvt"] > f["two-compare-mask"]["scalar_cvt"]
    assert (f["scalar-cvt"]["mul"], f["scalar-cvt"]["fma"]) == (
        f["two-compare-mask"]["mul"],
        f["two-compare-mask"]["fma"],
    )
    # the scaled scores' mask
    assert f["scaled-mask"]["mul"] > f["scalar-cvt"]["mul"]
    assert f["scaled-mask"]["fma"] < f["scalar-cvt"]["fma"]
