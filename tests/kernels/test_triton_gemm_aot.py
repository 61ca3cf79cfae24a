"""Ahead-of-time compiles of the own Triton GEMM for sm_90 and gfx942, without a GPU.

The interpreter (TRITON_INTERPRET=1, set for the test session) replaces triton.jit functions by
Python ones, so the compiles run in a child process with TRITON_INTERPRET removed.
"""

from __future__ import annotations

import pytest
from aot_child import compile_in_child

# One child process compiles every case (imports dominate); it prints a JSON summary per case.
_SCRIPT = r"""
import json, sys
import torch
from harness_kernels.triton.aot import TARGETS, GemmCase, compile_gemm_case, gemm_cases
from harness_kernels.triton.gemm_candidates import candidate_configs
from harness_kernels.triton.gemm_configs import GemmConfig, get_fma_configs, shared_mem_bytes

# Mid-M (Llama projection, M=128 N=4096 K=4096): generated candidates, not a fixed list.
mid = candidate_configs("full", 128, 4096, 4096, 2, 2, TARGETS["sm_90"][1])
mid_split = next(c for c in mid if c.block_m >= 128 and c.split_k >= 2 and c.programs_per_sm == 1)
mid_2progs = next(c for c in mid if c.block_m >= 128 and c.programs_per_sm == 2)
# Stream-K at the worst gemm_llama shape (80 tiles of 128x256 on 132 SMs).
weak = candidate_configs("full", 256, 10240, 8192, 2, 2, TARGETS["sm_90"][1])
mid_sk = next(c for c in weak if c.stream_k and (c.block_m, c.block_n) == (128, 256))
from dataclasses import replace
qkv = candidate_configs("full", 256, 2304, 16384, 2, 2, TARGETS["sm_90"][1])
split_apart = next(c for c in qkv if c.reduce_apart and (c.block_m, c.block_n) == (128, 256))
from harness_kernels.triton.gemm_candidates import decode_swap_configs
swap_decode = decode_swap_configs("full", 16, 4096, 4096, 1, 2, TARGETS["sm_90"][1])[0]
swap_decode_bf16 = decode_swap_configs("full", 16, 4096, 4096, 2, 2, TARGETS["sm_90"][1])[0]
# The deep tile's wide-K twins (gemm_candidates.wide_k_twins): every one offered at these shapes.
from harness_kernels.triton.gemm_candidates import deep_configs, tiny_n_configs, wide_k_twins
twin_cases = {}
for (m, n, k), dtype in [((128, 4096, 4096), torch.bfloat16), ((16, 4096, 4096), torch.bfloat16),
                         ((32, 6144, 4096), torch.bfloat16), ((256, 6144, 4096), torch.bfloat16),
                         ((16, 4096, 4096), torch.float8_e4m3fn)]:
    dev = TARGETS["sm_90"][1]
    whole = deep_configs("full", m, n, k, dtype.itemsize, 2, dev)[0]
    for c in wide_k_twins(whole, m, n, k, dtype.itemsize, 2, dev):
        name = f"twin-{m}x{n}x{k}-{dtype.itemsize}B-{c.block_m}x{c.block_n}x{c.block_k}s{c.num_stages}"
        twin_cases[("sm_90", name)] = GemmCase(m, n, k, dtype, config=c)
cases = {
    ("sm_90", "full"): gemm_cases()["full-bf16-8192"],
    ("sm_90", "no-tensor-cores"): gemm_cases()["no-tensor-cores-bf16-8192"],
    # the rung's FMA-dot candidates (tl.dot over fp32 operands at ieee precision)
    **{("sm_90", f"fma-dot-{dt}-{c.block_m}x{c.block_n}"): GemmCase(
           4096, 4096, 4096, getattr(torch, dt), rung="no-tensor-cores", config=c)
       for c in get_fma_configs("cuda") if c.fma_dot for dt in ("float16", "bfloat16", "float8_e4m3fn")},
    ("sm_90", "no-tma"): gemm_cases()["no-tma-bf16-8192"],
    ("sm_90", "splitk-decode"): GemmCase(16, 4096, 4096, config=GemmConfig(64, 128, 64, split_k=4)),
    ("sm_90", "fp8"): gemm_cases()["full-fp8-8192"],
    ("sm_90", "mid-m-splitk"): GemmCase(128, 4096, 4096, config=mid_split),
    ("sm_90", "mid-m-2progs"): GemmCase(128, 4096, 4096, config=mid_2progs),
    ("sm_90", "stream-k"): GemmCase(256, 10240, 8192, config=mid_sk),
    # Llama-3.1-405B's fused QKV at M 256: the split-K twin whose partials a second launch sums
    ("sm_90", "split-apart"): GemmCase(256, 2304, 16384, config=split_apart),
    ("sm_90", "split-apart-fp8"): GemmCase(256, 2304, 16384, torch.float8_e4m3fn,
                                           config=replace(split_apart, block_k=128, num_stages=3)),
    ("sm_90", "tf32-nn"): GemmCase(4096, 4096, 4096, torch.float32, b_col_major=False,
                                   config=GemmConfig(128, 128, 32, 8, 4)),
    ("sm_90", "tf32-nn-copied"): GemmCase(4096, 4096, 4096, torch.float32, b_col_major=False,
                                          config=GemmConfig(128, 128, 32, 8, 4, transpose_b=True)),
    # M 128, the worst tf32 nn point on the H200 (one tile loop, so its K loop is easy to find)
    ("sm_90", "tf32-nn-m128"): GemmCase(128, 57344, 8192, torch.float32, b_col_major=False,
                                        config=GemmConfig(128, 64, 32, 4, 4, persistent=False)),
    ("sm_90", "tf32-nn-swapped"): GemmCase(128, 57344, 8192, torch.float32, b_col_major=False,
                                           config=GemmConfig(128, 64, 32, 4, 4, persistent=False,
                                                             swap_ab=True)),
    # fp8 decode, swapped (C^T = W A^T): the weight's rows on wgmma's 64-row tiles
    ("sm_90", "fp8-decode-swapped"): GemmCase(16, 4096, 4096, torch.float8_e4m3fn,
                                              config=swap_decode),
    ("sm_90", "bf16-decode-swapped"): GemmCase(16, 4096, 4096, config=swap_decode_bf16),
    **twin_cases,
    # an MoE router's gate (Mixtral: N 8): the tiny-N tiles, 64 rows (wgmma) and 16 (mma.sync)
    **{("sm_90", f"tiny-n-{c.block_m}x16-sk{c.split_k}"): GemmCase(512, 8, 4096, config=c)
       for c in tiny_n_configs("full", 512, 8, 4096, 2, 2, TARGETS["sm_90"][1])
       if c.split_k > 1},
    ("gfx942", "full"): gemm_cases()["full-bf16-8192"],
    ("gfx942", "no-tensor-cores"): gemm_cases()["no-tensor-cores-bf16-8192"],
}
def loop_st_shared(ptx):
    # st.shared inside the loops that issue wgmma (from each loop's label to the branch back
    # to it): a tile re-laid out every K step, not the epilogue's once per tile.
    import re
    lines, total = ptx.splitlines(), 0
    for i, line in enumerate(lines):
        label = re.match(r"(\$L__BB\d+_\d+):\s*// =>This Inner Loop", line.strip())
        if not label:
            continue
        back = re.compile(r"bra(\.uni)?\s+" + re.escape(label.group(1)) + ";")
        end = next((j for j in range(i + 1, len(lines)) if back.search(lines[j])), None)
        body = lines[i:end] if end is not None else []
        if any("wgmma.mma_async" in b for b in body):
            total += sum("st.shared" in b for b in body)
    return total

out = {}
for (target, name), case in cases.items():
    info = compile_gemm_case(case, target)
    asm = info.pop("asm")
    if "sum" in info:
        sum_ptx = info["sum"].pop("asm").get("ptx", "")
        info["sum"]["has"] = {s: s in sum_ptx for s in ("ld.global.cg", "atom.global", "bar.sync")}
    text = asm.get("ptx", "") + asm.get("amdgcn", "")
    info["has"] = {s: s in text for s in ("wgmma", "mma.sync", "v_mfma", "cp.async.bulk.tensor",
                                          "atom.global", "fma.rn.f32")}
    info["ld_shared"] = text.count("ld.shared")
    info["loop_st_shared"] = loop_st_shared(asm.get("ptx", ""))
    if case.config is not None and target == "sm_90":
        info["smem_estimate"] = shared_mem_bytes(case.config, case.dtype.itemsize, 2)
    out[f"{target}/{name}"] = info
print(json.dumps(out, default=str))
"""


@pytest.fixture(scope="module")
def compiled() -> dict:
    return compile_in_child(_SCRIPT)


def test_full_bf16_uses_wgmma_and_tma_on_sm90(compiled):
    info = compiled["sm_90/full"]
    assert info["has"]["wgmma"] and info["has"]["cp.async.bulk.tensor"]
    assert info["config"]["tma"] and info["config"]["persistent"]
    assert info["n_spills"] == 0 and 0 < info["n_regs"] <= 255
    assert 0 < info["shared"] <= 232448  # H100/H200 opt-in shared memory per block


def test_no_tensor_cores_rung_emits_only_fma(compiled):
    for target in ("sm_90", "gfx942"):
        info = compiled[f"{target}/no-tensor-cores"]
        assert info["mma_count"] == 0, info["mma"]
        assert not (info["has"]["wgmma"] or info["has"]["mma.sync"] or info["has"]["v_mfma"])
    assert compiled["sm_90/no-tensor-cores"]["has"]["fma.rn.f32"]


def test_the_fma_dot_runs_on_fp32_fma_alone_without_spills(compiled):
    """The no-tensor-cores rung's FMA dot: fp32 FMAs and no tensor-core instruction, no
    spills, and shared memory within the estimate the candidate filter uses."""
    found = {k: v for k, v in compiled.items() if k.startswith("sm_90/fma-dot-")}
    assert len(found) == 9  # three tiles x fp16, bf16, fp8
    for name, info in found.items():
        assert info["config"]["fma_dot"] and not info["config"]["tensor_cores"], name
        assert info["mma_count"] == 0 and not (info["has"]["wgmma"] or info["has"]["mma.sync"])
        assert info["has"]["fma.rn.f32"] and info["n_spills"] == 0, name
        assert 0.9 * info["smem_estimate"] <= info["shared"] <= info["smem_estimate"], name


def test_no_tma_rung_uses_pointer_loads(compiled):
    info = compiled["sm_90/no-tma"]
    assert info["has"]["wgmma"] and not info["has"]["cp.async.bulk.tensor"]


def test_split_k_decode_compiles_with_atomics_and_no_spills(compiled):
    info = compiled["sm_90/splitk-decode"]
    assert info["config"]["split_k"] == 4 and info["has"]["atom.global"]
    assert info["n_spills"] == 0


def test_fp8_uses_e4m3_wgmma(compiled):
    assert any("e4m3" in op for op in compiled["sm_90/fp8"]["mma"])


def test_full_bf16_uses_mfma_on_gfx942(compiled):
    info = compiled["gfx942/full"]
    assert info["has"]["v_mfma"] and info["mma_count"] > 0
    assert any("bf16" in op for op in info["mma"])
    assert info["shared"] <= 65536  # CDNA3 LDS per workgroup


def test_mid_m_split_k_tile_compiles_to_its_estimate(compiled):
    """A generated mid-M candidate (>= 128 rows, split-K, deep pipeline) is a real sm_90 kernel:
    wgmma + TMA, the split-K atomics, no spills, and the shared memory the search assumed."""
    info = compiled["sm_90/mid-m-splitk"]
    assert info["config"]["block_m"] >= 128 and info["config"]["split_k"] >= 2
    assert info["has"]["wgmma"] and info["has"]["cp.async.bulk.tensor"]
    assert info["has"]["atom.global"] and info["n_spills"] == 0
    assert 0.9 * info["smem_estimate"] <= info["shared"] <= info["smem_estimate"] <= 232448


def test_mid_m_two_programs_per_sm_are_co_resident(compiled):
    """programs_per_sm=2 only pays if both programs fit one SM: 228 KB of shared memory (1 KB
    reserved per block) and 64K registers."""
    info = compiled["sm_90/mid-m-2progs"]
    assert info["config"]["programs_per_sm"] == 2 and info["n_spills"] == 0
    assert info["shared"] <= info["smem_estimate"]
    assert 2 * (info["shared"] + 1024) <= 232448 + 1024
    assert 2 * 32 * info["num_warps"] * info["n_regs"] <= 65536


@pytest.mark.parametrize("case", ["split-apart", "split-apart-fp8"])
def test_split_k_summed_apart_compiles_to_two_kernels_without_atomics(compiled, case):
    """reduce_apart: the GEMM (wgmma + TMA, no spills) stores its partials with no counter
    atomic, and a second kernel sums them, reading L2 (ld.global.cg), with no atomic or barrier
    of its own and no spills."""
    info = compiled[f"sm_90/{case}"]
    cfg = info["config"]
    assert cfg["reduce_apart"] and cfg["split_k"] > 1 and cfg["sum_programs"] > cfg["num_programs"]
    assert info["has"]["wgmma"] and info["has"]["cp.async.bulk.tensor"]
    assert not info["has"]["atom.global"] and info["n_spills"] == 0
    summed = info["sum"]
    assert summed["has"]["ld.global.cg"] and not summed["has"]["atom.global"]
    assert summed["n_spills"] == 0 and summed["mma_count"] == 0


def test_stream_k_compiles_to_wgmma_tma_and_atomics_without_spills(compiled):
    """The stream-K candidate of the worst gemm_llama shape is a real sm_90 kernel: both the
    data-parallel and the shared-tile loops on wgmma + TMA loads, the partial-tile atomics, no
    spills, shared memory within the search's estimate."""
    info = compiled["sm_90/stream-k"]
    cfg = info["config"]
    assert cfg["stream_k"] and cfg["sk_tiles"] == 80 and cfg["dp_tiles"] == 0
    assert cfg["num_programs"] == 132 and not cfg["tma_store"]
    assert info["has"]["wgmma"] and info["has"]["cp.async.bulk.tensor"]
    assert info["has"]["atom.global"] and info["n_spills"] == 0
    assert info["shared"] <= info["smem_estimate"] <= 232448


def test_tf32_with_b_copied_k_major_skips_the_shared_memory_relayout(compiled):
    """tf32 wgmma reads B only K-major: with a row-major B the kernel re-lays each B tile out
    through registers (ld.shared + st.shared every K step); copied K-major first, it does not."""
    nn, copied = compiled["sm_90/tf32-nn"], compiled["sm_90/tf32-nn-copied"]
    assert nn["has"]["wgmma"] and copied["has"]["wgmma"]
    assert nn["ld_shared"] > 0 and copied["ld_shared"] == 0
    assert copied["config"]["b_layout"] == "row, copied K-major per call"


def test_tf32_swapped_product_reads_b_in_place_without_a_shared_memory_relayout(compiled):
    """swap_ab: B's tiles are wgmma's A operand, loaded from shared memory into registers as
    they lie; no st.shared in the K loop (the nn kernel stores every B tile back re-laid out)."""
    nn, swapped = compiled["sm_90/tf32-nn-m128"], compiled["sm_90/tf32-nn-swapped"]
    assert swapped["has"]["wgmma"] and swapped["n_spills"] == 0
    assert nn["loop_st_shared"] > 0 and swapped["loop_st_shared"] == 0
    assert swapped["config"]["b_layout"].startswith("row, as wgmma's A operand")


@pytest.mark.parametrize("dtype", ["fp8", "bf16"])
def test_decode_swapped_reads_both_operands_by_tma_into_wgmma(compiled, dtype):
    """The swapped decode candidate (C^T = W A^T, 64 weight rows x 16 tokens, split-K 2): wgmma
    of the dtype (the tokens are its N), TMA loads of both K-major operands, the split-K
    atomics, pointer stores of C^T into C, no spills, shared memory within the search's
    estimate."""
    info = compiled[f"sm_90/{dtype}-decode-swapped"]
    cfg = info["config"]
    assert (cfg["block_m"], cfg["block_n"], cfg["split_k"]) == (64, 16, 2)
    assert cfg["tma"] and not cfg["tma_store"] and cfg["b_layout"].startswith("col, the weight")
    mma_type = "e4m3" if dtype == "fp8" else "bf16"
    assert info["has"]["wgmma"] and any(mma_type in op for op in info["mma"])
    assert info["has"]["cp.async.bulk.tensor"] and info["has"]["atom.global"]
    assert info["n_spills"] == 0 and info["shared"] <= info["smem_estimate"] <= 232448


def test_deep_tile_wide_k_twins_compile_within_their_estimate(compiled):
    """Every wide-K twin of the deep tile offered at five decode and mid-M shapes (bf16 and
    fp8) is a real sm_90 kernel: wgmma and TMA, no spills, and no more shared memory than the
    search priced (so the tuner never times a config that cannot launch)."""
    twins = {name: info for name, info in compiled.items() if "/twin-" in name}
    assert len(twins) >= 7, sorted(twins)
    for name, info in twins.items():
        assert info["has"]["wgmma"] or info["has"]["mma.sync"], name
        assert info["has"]["cp.async.bulk.tensor"] and info["n_spills"] == 0, name
        assert info["shared"] <= info["smem_estimate"] <= 232448, name


def test_tiny_n_tiles_compile_to_tensor_cores_with_atomics_and_no_spills(compiled):
    """The router's 16-wide N tiles at 512x8x4096, split: 64 rows on wgmma, 16 on mma.sync;
    TMA loads (B's 8 rows past N are its zero fill), the split-K counter's atomics."""
    tiny = {key: info for key, info in compiled.items() if key.startswith("sm_90/tiny-n-")}
    assert {key.split("-")[2].split("x")[0] for key in tiny} == {"16", "64"}
    for key, info in tiny.items():
        mma = "wgmma" if "/tiny-n-64x" in key else "mma.sync"
        assert info["has"][mma] and info["has"]["cp.async.bulk.tensor"], key
        assert info["has"]["atom.global"] and info["n_spills"] == 0, key
