"""Ahead-of-time compiles of the attention kernels for sm_90 (H100/H200) and gfx942 (MI300X),
without a GPU: the prefill must emit wgmma (and TMA bulk copies on the TMA rungs), decode and
AMD must emit tensor-core / MFMA instructions, and every config must fit shared memory.

AOT compiling needs real JITFunctions, which do not exist once TRITON_INTERPRET=1 was set at
import (the test session sets it), so the compiles run in subprocesses with it removed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

os.environ.setdefault("TRITON_INTERPRET", "1")

import pytest  # noqa: E402

SM90_SMEM_BYTES = 232448
GFX942_LDS_BYTES = 65536

# Runs in a clean interpreter; prints {spec name: facts} as JSON on its last line.
_SCRIPT = textwrap.dedent(
    """
    import json, re, sys
    import torch, triton
    from triton.backends.compiler import GPUTarget
    from harness_kernels.triton import attention_configs as C
    from harness_kernels.triton import attention_decode as D
    from harness_kernels.triton import attention_prefill as P
    from harness_kernels.triton.resource_usage import resource_usage

    backend = sys.argv[1]
    target = GPUTarget("cuda", 90, 32) if backend == "cuda" else GPUTarget("hip", "gfx942", 64)

    specs = []
    for head_dim in (64, 128, 256):
        specs += P.aot_specs(torch.bfloat16, head_dim, backend)
    specs += P.aot_specs(torch.float16, 128, backend, rungs=("q-reload", "no-pipeline"),
                         causal=(True,))
    specs += P.aot_specs(torch.bfloat16, 128, backend, rungs=("reg-stage",))
    cands = C.get_cuda_prefill_configs(128) if backend == "cuda" else C.get_hip_prefill_configs(128)
    for i, cfg in enumerate(cands[1:]):
        for spec in P.aot_specs(torch.bfloat16, 128, backend, rungs=("full",), causal=(False,),
                                config=cfg):
            specs.append(dict(spec, name=f"{spec['name']}_cand{i + 1}"))
    if backend == "cuda":  # V of the masked tail tiles by pointers (V sliced from a cache)
        specs += [dict(s, name=s["name"] + "_vtail", constexprs=dict(s["constexprs"],
                  V_TAIL_TMA=False)) for s in P.aot_specs(torch.bfloat16, 128, backend,
                  rungs=("full",), causal=(True,))]
    specs += D.aot_specs(torch.bfloat16, 128, backend)
    if backend == "cuda":  # every decode candidate at D 128, over pages of 256, at 16 and 64 rows
        for i, cfg in enumerate(C.get_cuda_decode_configs(128)):
            for rows, group, seq_q in ((16, 4, 1), (64, 8, 8)):
                if not C.keep_decode_config(dict(cfg, BLOCK_M=rows), ("cuda", 90), 128, 2, 256):
                    continue  # the tuner would not time it at these rows
                spec = D.aot_specs(torch.bfloat16, 128, backend, group=group, seq_q=seq_q,
                                   page_size=256, config=dict(cfg, BLOCK_M=rows))[1]
                specs.append(dict(spec, name=f"dcand{i}_m{rows}_{spec['name']}"))
                whole = dict(spec["constexprs"], SPLIT=False)  # one split: the final output
                specs.append(dict(spec, name=f"dcand{i}_m{rows}_whole_{spec['name']}",
                                  constexprs=whole))
    specs += [dict(s, name=s["name"] + "_g8q4") for s in
              D.aot_specs(torch.float16, 64, backend, group=8, seq_q=4, page_size=64)[:2]]

    report = {}
    for spec in specs:
        src = triton.compiler.ASTSource(spec["fn"], spec["signature"], spec["constexprs"],
                                        spec["attrs"])
        try:
            cc = triton.compile(src, target=target, options=spec["options"])
        except Exception as exc:
            report[spec["name"]] = dict(error=f"{type(exc).__name__}: {exc}"[:2000])
            continue
        asm = cc.asm["ptx"] if backend == "cuda" else cc.asm["amdgcn"]
        facts = dict(
            shared=cc.metadata.shared,
            wgmma=asm.count("wgmma.mma_async"),
            mma_sync=asm.count("mma.sync"),
            mfma=len(re.findall(r"\\bv_mfma_", asm)),
            tma_loads=asm.count("cp.async.bulk.tensor"),
            cp_async=len(re.findall(r"cp\\.async\\.c[ag]", asm)),
            # PTX atom.* (with its memory-order qualifiers) or AMDGCN *_atomic_*
            atomics=len(re.findall(r"\\batom\\.|_atomic_", asm)),
            acq_rel_atomics=len(re.findall(r"\\batom(\\.\\w+)*\\.acq_rel\\b", asm)),
            gdc_wait=asm.count("griddepcontrol.wait"),
        )
        if backend == "cuda":  # ptxas spill-store + spill-load bytes
            facts["spills"] = resource_usage(cc, target).get("n_spills", -1)
        else:
            m = re.search(r"\\.vgpr_spill_count:\\s+(\\d+)", asm)
            facts["spills"] = int(m.group(1)) if m else -1
        report[spec["name"]] = facts
    print(json.dumps(report))
    """
)


@pytest.fixture(scope="module")
def aot_reports() -> dict[str, dict[str, dict]]:
    """Compile for both targets at once (two processes on two cores)."""
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    procs = {
        backend: subprocess.Popen(
            [sys.executable, "-c", _SCRIPT, backend],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for backend in ("cuda", "hip")
    }
    reports = {}
    for backend, proc in procs.items():
        out, err = proc.communicate(timeout=600)
        assert proc.returncode == 0, f"{backend} AOT script failed:\n{err[-4000:]}"
        reports[backend] = json.loads(out.strip().splitlines()[-1])
    return reports


def _no_errors(report: dict[str, dict]) -> None:
    errors = {name: facts["error"] for name, facts in report.items() if "error" in facts}
    assert not errors, errors


def test_sm90_prefill_uses_wgmma_and_tma(aot_reports: dict) -> None:
    report = aot_reports["cuda"]
    _no_errors(report)
    prefill = {n: f for n, f in report.items() if n.startswith("attn_prefill")}
    assert len(prefill) >= 12
    for name, facts in prefill.items():
        assert facts["wgmma"] > 0, name
        assert facts["shared"] <= SM90_SMEM_BYTES, name
        assert facts["spills"] == 0, name
        if "_no-tma_" in name:
            assert facts["tma_loads"] == 0 and facts["cp_async"] > 0, name
        elif "_reg-stage_" in name:  # K/V through registers: neither async copy is left
            assert facts["tma_loads"] == 0 and facts["cp_async"] == 0, name
        elif name.endswith("_vtail"):
            assert facts["tma_loads"] > 0 and facts["cp_async"] > 0, name
        else:
            assert facts["tma_loads"] > 0, name


def test_sm90_decode_uses_tensor_cores(aot_reports: dict) -> None:
    report = aot_reports["cuda"]
    splits = {n: f for n, f in report.items() if n.startswith("attn_decode_split")}
    assert len(splits) == 5
    # the fused merge counts finished splits with an acq_rel atomic; nothing else does
    fused = {n for n, f in splits.items() if f["atomics"]}
    assert fused == {"attn_decode_split_paged16_fused"}
    assert splits["attn_decode_split_paged16_fused"]["acq_rel_atomics"] > 0
    for name, facts in splits.items():
        # M = GQA group x q_len is 16..64 rows: mma.sync (wgmma needs 64-row warpgroup tiles)
        assert facts["mma_sync"] + facts["wgmma"] > 0, name
        assert facts["cp_async"] > 0, name  # K/V pipelined through shared memory
        assert facts["shared"] <= SM90_SMEM_BYTES and facts["spills"] == 0, name
    assert "attn_decode_reduce" in report
    # the "pdl" merge's reduction waits for the split kernel on the GPU; the plain one does not
    assert report["attn_decode_reduce_pdl"]["gdc_wait"] == 1
    assert report["attn_decode_reduce"]["gdc_wait"] == 0


def test_sm90_decode_candidates_fit_without_spills(aot_reports: dict) -> None:
    """Every candidate the decode tuner may time on Hopper (D 128, pages of 256), split and
    whole, at 16 rows (GQA 4 x 1 token) and 64 (GQA 8 x 8 tokens) where its shared-memory model
    admits it, compiles and fits shared memory, without spills but for the 128-wide tiles'
    whole-KV kernel at 64 rows; and the model's price
    bounds what Triton allocates for each (Triton keeps fewer K/V tiles than 2 x num_stages,
    and more at 64 rows than at 16: sm90_decode_smem_bytes)."""
    from harness_kernels.triton.attention_configs import (
        get_cuda_decode_configs,
        keep_decode_config,
        sm90_decode_smem_bytes,
    )

    report = aot_reports["cuda"]
    cands = {n: f for n, f in report.items() if n.startswith("dcand")}
    configs = get_cuda_decode_configs(128)
    admitted = [
        (c, rows)
        for c in configs
        for rows in (16, 64)
        if keep_decode_config(dict(c, BLOCK_M=rows), ("cuda", 90), 128, 2, 256)
    ]
    assert len(cands) == 2 * len(admitted) and len(admitted) > len(configs)
    for name, facts in cands.items():
        assert "error" not in facts, (name, facts)
        assert facts["cp_async"] > 0, name
        index, rows = name.split("_")[:2]
        cfg = dict(configs[int(index.removeprefix("dcand"))], BLOCK_M=int(rows.removeprefix("m")))
        price = sm90_decode_smem_bytes(cfg, 128, 2)
        assert facts["shared"] <= price <= SM90_SMEM_BYTES, (name, facts["shared"], price)
        # 64 x 128 score tiles of the whole-KV kernel spill a little (Triton 3.9: 72-120 bytes);
        # the tuner times them beside the rest, so a spill costs only where it is slower
        assert facts["spills"] == 0 or (cfg["BLOCK_M"], cfg["BLOCK_N"]) == (64, 128), (name, facts)


def test_gfx942_compiles_to_mfma(aot_reports: dict) -> None:
    report = aot_reports["hip"]
    _no_errors(report)
    dots = {n: f for n, f in report.items() if n != "attn_decode_reduce"}
    assert len(dots) >= 10
    for name, facts in dots.items():
        assert facts["mfma"] > 0, name
        assert facts["tma_loads"] == 0, name
        assert facts["shared"] <= GFX942_LDS_BYTES, name
        assert facts["spills"] == 0, name  # VGPR spills
    assert report["attn_decode_split_paged16_fused"]["atomics"] > 0  # the fused merge's count
