"""CPU tests of the own Triton GEMM (kernels/triton/gemm.py) under the Triton interpreter."""

from __future__ import annotations

import os

os.environ.setdefault("TRITON_INTERPRET", "1")

import subprocess  # noqa: E402
import sys  # noqa: E402
from dataclasses import replace  # noqa: E402

import pytest  # noqa: E402
import torch  # noqa: E402
from harness_kernels.triton import gemm_tune  # noqa: E402
from harness_kernels.triton.gemm import (  # noqa: E402
    RUNGS,
    build_launch,
    prepare_matmul,
)
from harness_kernels.triton.gemm_candidates import (  # noqa: E402
    DEEP_CANDIDATES,
    DEEP_TWINS,
    MAX_CANDIDATES,
    REDUCE_APART_CANDIDATES,
    STREAM_K_CANDIDATES,
    _listed_candidates,
    candidate_configs,
    decode_swap_configs,
    deep_configs,
    tiny_n_configs,
    wide_k_twins,
)
from harness_kernels.triton.gemm_configs import GemmConfig, shared_mem_bytes  # noqa: E402
from harness_kernels.triton.gemm_cost_model import estimate_seconds, uses_mid_model  # noqa: E402
from harness_kernels.triton.gemm_operands import check_operands  # noqa: E402
from harness_kernels.triton.gemm_split import (  # noqa: E402
    REDUCE_MIN_ELEMS,
    REDUCE_REGS,
    offers_stream_k,
    splitk_reduce_rows,
    stream_k_plan,
)
from harness_kernels.triton.gemm_target import KernelTarget, kernel_target  # noqa: E402

# stream-K twins and one-wave deep configs ride beyond the cap
MAX_LISTED = (
    MAX_CANDIDATES + STREAM_K_CANDIDATES + REDUCE_APART_CANDIDATES + DEEP_CANDIDATES + DEEP_TWINS
)

FP8 = torch.float8_e4m3fn
# Relative Frobenius error allowed per input dtype: output rounding (bf16 8 bits, fp16 11 bits),
# tf32's 10-bit mantissa, exact fp32 under "ieee".
TOL = {torch.float16: 2e-3, torch.bfloat16: 1e-2, "tf32": 3e-3, "ieee": 1e-5, FP8: 1e-2}
# K per dtype: not a multiple of the interpreter's BLOCK_K, but 16-byte aligned rows (TMA on).
K_FOR = {torch.float32: 52, torch.float16: 56, torch.bfloat16: 56, FP8: 80}


# Tests that launch kernels on CPU tensors need the interpreter (a GPU run of the suite with
# TRITON_INTERPRET=0 skips them; the GPU smoke test below covers that case).
needs_interpreter = pytest.mark.skipif(
    os.environ.get("TRITON_INTERPRET") != "1", reason="runs kernels under TRITON_INTERPRET=1"
)


@pytest.fixture(autouse=True)
def _seed_and_fresh_cache():
    torch.manual_seed(0)
    gemm_tune.clear_cache()
    yield
    gemm_tune.clear_cache()


def _rel_err(out: torch.Tensor, ref: torch.Tensor) -> float:
    return (torch.linalg.vector_norm(out.float() - ref) / torch.linalg.vector_norm(ref)).item()


def _operands(m: int, n: int, k: int, dtype: torch.dtype, b_col: bool):
    """Fresh random a [M, K] and b [K, N] (b column-major when b_col), plus fp8 scales."""
    a = torch.randn(m, k).to(dtype)
    b = torch.randn(n, k).to(dtype).t() if b_col else torch.randn(k, n).to(dtype)
    scales = {}
    if dtype == FP8:
        scales = {"a_scale": torch.tensor(0.5), "b_scale": torch.tensor([1.25])}
    return a, b, scales


def _reference(a, b, scales) -> torch.Tensor:
    ref = a.float() @ b.float()
    if scales:
        ref = ref * (scales["a_scale"].item() * scales["b_scale"].item())
    return ref


def _run(launch) -> torch.Tensor:
    """Poison the preallocated output, launch, and return it (so skipped tiles show as NaN)."""
    launch.out.fill_(float("nan"))
    return launch()


DTYPE_CASES = [
    pytest.param(torch.float16, "tf32", id="fp16"),
    pytest.param(torch.bfloat16, "tf32", id="bf16"),
    pytest.param(torch.float32, "tf32", id="fp32-tf32"),
    pytest.param(torch.float32, "ieee", id="fp32-ieee"),
    pytest.param(FP8, "tf32", id="fp8e4m3"),
]


@needs_interpreter
@pytest.mark.parametrize("m", [1, 7, 33])
@pytest.mark.parametrize("b_col", [False, True], ids=["b-row", "b-col"])
@pytest.mark.parametrize("dtype,precision", DTYPE_CASES)
def test_matches_fp32_reference(dtype, precision, b_col, m):
    n, k = 40, K_FOR[dtype]
    a, b, scales = _operands(m, n, k, dtype, b_col)
    launch = prepare_matmul(a, b, fp32_precision=precision, **scales)
    out = _run(launch)
    expected_dtype = torch.bfloat16 if dtype == FP8 else dtype
    assert out.shape == (m, n) and out.dtype == expected_dtype
    tol = TOL[precision] if dtype == torch.float32 else TOL[dtype]
    assert _rel_err(out, _reference(a, b, scales)) < tol
    assert launch.config["b_layout"] == ("col" if b_col else "row")
    assert launch.config["tuned"] is False and launch.config["candidates_tried"] == 0


@needs_interpreter
@pytest.mark.parametrize("rung", RUNGS)
@pytest.mark.parametrize("m", [1, 33])
def test_every_rung_is_correct_and_removes_its_feature(rung, m):
    a, b, _ = _operands(m, 40, 128, torch.bfloat16, b_col=True)
    launch = prepare_matmul(a, b, rung=rung)
    assert _rel_err(_run(launch), _reference(a, b, {})) < TOL[torch.bfloat16]
    cfg = launch.config
    assert cfg["variant"] == rung  # the rung's stored provider_config key
    assert cfg["tma"] == (rung != "no-tma")
    assert cfg["persistent"] == (rung != "not-persistent")
    assert cfg["tensor_cores"] == (rung != "no-tensor-cores")
    assert (cfg["num_stages"] == 1) == (rung == "no-pipeline")
    if rung == "not-persistent":
        assert cfg["num_programs"] == cfg["units"]
    if m == 1:  # two output tiles on four pretend SMs: split-K unless the rung removes it
        assert (cfg["split_k"] > 1) == (rung != "no-splitk")


@needs_interpreter
def test_fp32_ieee_is_exact_to_fp32_rounding():
    a, b, _ = _operands(33, 40, 52, torch.float32, b_col=False)
    launch = prepare_matmul(a, b, fp32_precision="ieee")
    assert launch.config["input_precision"] == "ieee"
    torch.testing.assert_close(_run(launch), a @ b, rtol=1e-5, atol=1e-5)


@needs_interpreter
@pytest.mark.parametrize("split_k", [2, 3, 4])
@pytest.mark.parametrize("tma", [False, True], ids=["ptr", "tma"])
@pytest.mark.parametrize("persistent", [False, True], ids=["grid", "persistent"])
@pytest.mark.parametrize("dtype", [torch.float16, FP8], ids=["fp16", "fp8"])
def test_reduce_apart_sums_the_same_bits_as_the_one_launch_split(split_k, tma, persistent, dtype):
    """The second launch (gemm_reduce_kernel.py) sums the parts in split order, as the last unit
    does in one launch: the same bits, with fp8's scales applied once, by the sum."""
    a, b, scales = _operands(20, 40, 72 if dtype != FP8 else 160, dtype, b_col=True)
    a_scale, b_scale = scales.get("a_scale"), scales.get("b_scale")
    p = check_operands(a, b, None, a_scale, b_scale, "tf32", kernel_target(None))
    cfg = GemmConfig(
        16,
        32,
        16 if dtype != FP8 else 32,
        split_k=split_k,
        tma=tma,
        persistent=persistent,
        group_m=2,
    )
    one = build_launch(p, cfg, kernel_target(None))
    apart = build_launch(p, replace(cfg, reduce_apart=True), kernel_target(None))
    assert apart._args[6] is None and apart.config["sum_programs"] == 4  # 2x2 tiles, 1 chunk
    out = _run(apart).clone()
    assert _rel_err(out, _reference(a, b, scales)) < TOL[dtype]
    assert torch.equal(out, _run(one))
    assert torch.equal(_run(apart), out)  # a second launch overwrites with the same bits


def test_reduce_apart_needs_a_split():
    a, b, _ = _operands(20, 40, 72, torch.float16, b_col=True)
    p = check_operands(a, b, None, None, None, "tf32", kernel_target(None))
    for cfg in (
        GemmConfig(16, 32, 16, reduce_apart=True),
        GemmConfig(16, 32, 16, stream_k=True, reduce_apart=True),
    ):
        with pytest.raises(ValueError, match=r"it needs split_k > 1"):
            build_launch(p, cfg, kernel_target(None))


@needs_interpreter
@pytest.mark.parametrize("split_k", [2, 3, 4])
@pytest.mark.parametrize("tma", [False, True], ids=["ptr", "tma"])
@pytest.mark.parametrize("persistent", [False, True], ids=["grid", "persistent"])
def test_split_k_reduction_is_deterministic_and_resets_counters(split_k, tma, persistent):
    # K=72: 5 K tiles of 16, so some splits are uneven and split 4 owns a single tile.
    a, b, _ = _operands(20, 40, 72, torch.float16, b_col=True)
    p = check_operands(a, b, None, None, None, "tf32", kernel_target(None))
    cfg = GemmConfig(16, 32, 16, split_k=split_k, tma=tma, persistent=persistent, group_m=2)
    launch = build_launch(p, cfg, kernel_target(None))
    first = _run(launch).clone()
    assert _rel_err(first, _reference(a, b, {})) < TOL[torch.float16]
    counters = launch._args[6]
    assert counters is not None and int(counters.abs().sum()) == 0
    assert torch.equal(_run(launch), first)  # second launch: counters were reset, same bits


@needs_interpreter
def test_epilogue_subtile_and_misaligned_tma_fallback():
    a, b, _ = _operands(33, 64, 56, torch.bfloat16, b_col=True)
    p = check_operands(a, b, None, None, None, "tf32", kernel_target(None))
    launch = build_launch(p, GemmConfig(16, 32, 16, epilogue_subtile=True), kernel_target(None))
    assert launch.config["tma_store"] and launch.config["epilogue_subtile"]
    assert _rel_err(_run(launch), _reference(a, b, {})) < TOL[torch.bfloat16]
    # K=50 bf16: rows are 100 bytes, not a multiple of 16 -> pointer loads, reason recorded.
    a, b, _ = _operands(7, 40, 50, torch.bfloat16, b_col=True)
    launch = prepare_matmul(a, b)
    assert launch.config["tma"] is False and "16-byte" in launch.config["tma_fallback"]
    assert _rel_err(_run(launch), _reference(a, b, {})) < TOL[torch.bfloat16]


@needs_interpreter
def test_launch_only_launches_into_the_same_output():
    a, b, _ = _operands(9, 40, 56, torch.float16, b_col=False)
    launch = prepare_matmul(a, b)
    ptr = launch.out.data_ptr()
    first = launch().clone()
    second = launch()
    assert second is launch.out and second.data_ptr() == ptr and torch.equal(first, second)
    assert prepare_matmul(a, b).config == launch.config  # cached decision, same config


def test_rejects_invalid_problems():
    a, b, scales = _operands(4, 8, 16, torch.float16, b_col=False)
    with pytest.raises(ValueError, match="rung"):
        prepare_matmul(a, b, rung="fastest")
    with pytest.raises(ValueError, match=r"\[K, N\]"):
        prepare_matmul(a, b.t())
    with pytest.raises(ValueError, match="share"):
        prepare_matmul(a, b.float())
    with pytest.raises(ValueError, match="row- or column-major"):
        prepare_matmul(a, torch.randn(16, 16).half()[:, ::2])
    a8, b8, scales = _operands(4, 8, 16, FP8, b_col=True)
    with pytest.raises(ValueError, match="a_scale"):
        prepare_matmul(a8, b8)
    with pytest.raises(ValueError, match="only for float8"):
        prepare_matmul(a, b, **scales)
    with pytest.raises(ValueError, match="fp32_precision"):
        prepare_matmul(a.float(), b.float(), fp32_precision="bf16")


def _pretend(target: str):
    from harness_kernels.triton.aot import TARGETS

    return TARGETS[target][1]


@pytest.mark.parametrize("target", ["sm_80", "sm_90", "gfx90a", "gfx942"])
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float32, FP8], ids=["bf16", "fp32", "fp8"])
@pytest.mark.parametrize("m", [1, 64, 512, 8192])
def test_candidate_spaces_fit_the_device(target, dtype, m):
    dev = _pretend(target)
    in_bytes = torch.empty((), dtype=dtype).element_size()
    out_bytes = 4 if dtype == torch.float32 else 2
    for rung in RUNGS:
        cands = candidate_configs(rung, m, 8192, 8192, in_bytes, out_bytes, dev)
        assert 1 <= len(cands) <= MAX_LISTED and len(set(cands)) == len(cands)
        deep = deep_configs(rung, m, 8192, 8192, in_bytes, out_bytes, dev)
        ranked = [c for c in cands if not (c.stream_k or c.reduce_apart) and c not in deep]
        assert len(ranked) <= MAX_CANDIDATES
        assert len([c for c in cands if c.reduce_apart]) <= REDUCE_APART_CANDIDATES
        for cfg in cands:
            assert shared_mem_bytes(cfg, in_bytes, out_bytes, dev.backend) <= dev.max_shared_mem
            assert cfg.tma == (dev.capability >= 90 and rung != "no-tma")
            assert cfg.tensor_cores == (rung != "no-tensor-cores")
            if rung == "no-splitk" or m == 8192:
                assert cfg.split_k == 1
            if rung in ("no-splitk", "not-persistent"):
                assert not cfg.stream_k
            assert not cfg.reduce_apart or (cfg.split_k > 1 and not cfg.stream_k)
    full = candidate_configs("full", m, 4096, 4096, in_bytes, out_bytes, dev)
    if m == 1:  # decode: 4096/BN tiles cannot fill the machine, so split-K is on offer
        assert any(cfg.split_k > 1 for cfg in full)


# A pretend H200 for the config search: 132 SMs, 227 KB of opt-in shared memory per block.
H200 = KernelTarget("cuda", "sm_90", 90, "fake H200", 132, 232448)
# The H200 shapes that ran at 0.75-0.85 of cuBLAS with the old fixed mid-M list (M, N, K).
WEAK_MID_M = [
    (64, 4096, 4096),
    (64, 10240, 8192),
    (128, 4096, 4096),
    (128, 6144, 4096),
    (128, 8192, 8192),
    (128, 10240, 8192),
    (256, 4096, 4096),
    (256, 10240, 8192),
    (256, 57344, 8192),
    (512, 6144, 4096),
    (512, 10240, 8192),
]


def _wave_fill(cfg: GemmConfig, m: int, n: int, sms: int = 132) -> float:
    """Units over the SM slots of the rounds they need (1.0: the last round is full)."""
    units = -(-m // cfg.block_m) * -(-n // cfg.block_n) * cfg.split_k
    return units / (-(-units // sms) * sms)


@pytest.mark.parametrize("m,n,k", WEAK_MID_M)
def test_mid_m_candidates_are_diverse_and_fit_sm90(m, n, k):
    assert uses_mid_model(m, H200)
    cands = candidate_configs("full", m, n, k, 2, 2, H200)
    assert 1 <= len(cands) <= MAX_LISTED and len(set(cands)) == len(cands)
    for cfg in cands:
        smem = shared_mem_bytes(cfg, 2, 2)
        assert smem <= H200.max_shared_mem
        # programs_per_sm programs must be co-resident (1 KB reserved per block).
        assert cfg.programs_per_sm * (smem + 1024) <= H200.max_shared_mem + 1024
        assert cfg.block_m * cfg.block_n // (32 * cfg.num_warps) <= 128  # fp32 acc per thread
        assert cfg.tma and cfg.persistent and cfg.tensor_cores
        assert cfg.split_k == 1 or 2 * cfg.split_k <= -(-k // cfg.block_k)
    assert len({(c.block_m, c.block_n) for c in cands}) >= 3
    assert {c.block_k for c in cands} >= {64} and any(c.num_stages >= 5 for c in cands)
    # The old default (tune=False before) is always kept for the tuner to beat.
    assert _listed_candidates("full", m, n, k, 2, 2, H200)[0] in cands
    # Each candidate's recorded timing has its own name: stream-K twins were recorded under
    # their data-parallel config's name (one overwrote the other in provider_config).
    assert any(c.stream_k for c in cands)
    assert len({gemm_tune._short(c) for c in cands}) == len(cands)
    # A tile that covers M (<= 256 rows) reads each weight tile once.
    assert any(c.block_m >= min(m, 256) for c in cands)
    # Somewhere in the list the units fill >= 90% of their last wave of 132 SMs.
    assert max(_wave_fill(c, m, n) for c in cands) >= 0.9


def test_mid_m_offers_big_tiles_with_split_k_when_tiles_are_few():
    # M=128, N=4096: 128x128 tiles make only 32 units on 132 SMs -> split-K must be on offer.
    cands = candidate_configs("full", 128, 4096, 4096, 2, 2, H200)
    assert any(c.block_m >= 128 and c.split_k >= 2 for c in cands)
    assert any(c.block_m >= 128 and c.block_n >= 128 and c.split_k >= 4 for c in cands)
    # M=256, N=10240: 128x256 tiles are 80 units (61% of a wave); the model's pick splits them.
    best = candidate_configs("full", 256, 10240, 8192, 2, 2, H200)[0]
    assert _wave_fill(best, 256, 10240) >= 0.85 and best.split_k > 1


def test_cost_model_prefers_full_waves_and_deep_pipelines():
    est = lambda cfg, m, n, k: estimate_seconds(cfg, m, n, k, 2, 2, H200)
    # 80 tiles on 132 SMs vs the same tiles split 3 ways (240 units: 91% of two waves).
    one = GemmConfig(128, 256, 64, num_warps=8, num_stages=3)
    assert est(replace(one, split_k=3), 256, 10240, 8192) < 0.9 * est(one, 256, 10240, 8192)
    # Memory-bound (M=64): more stages in flight per SM stream the weights faster.
    thin = GemmConfig(64, 128, 64, num_warps=4, num_stages=4)
    assert est(replace(thin, num_stages=8), 64, 10240, 8192) < 0.9 * est(thin, 64, 10240, 8192)
    # Compute-bound (M=512): a wider wgmma N is modelled faster at the same wave fill.
    wide, narrow = GemmConfig(128, 256, 64, num_warps=8), GemmConfig(128, 64, 64, num_warps=8)
    assert est(wide, 512, 16896, 8192) < est(narrow, 512, 16896, 8192)


@pytest.mark.parametrize("target", ["sm_80", "sm_90", "gfx942"])
@pytest.mark.parametrize("m", [1, 16, 32, 1024, 8192])
def test_decode_large_m_and_other_vendors_keep_the_fixed_lists(target, m):
    dev = _pretend(target)
    assert not uses_mid_model(m, dev) and not uses_mid_model(128, _pretend("sm_80"))
    for rung in RUNGS:
        listed = _listed_candidates(rung, m, 4096, 4096, 2, 2, dev)
        deep = [c for c in deep_configs(rung, m, 4096, 4096, 2, 2, dev) if c not in listed]
        assert candidate_configs(rung, m, 4096, 4096, 2, 2, dev) == listed + deep
        assert bool(deep) == (target == "sm_90" and m <= 32 and rung in DEEP_RUNGS)


DEEP_RUNGS = (
    "full",
    "no-gluon",
    "no-swap-ab",
    "no-wave-tiles",
    "burst-ties",
    "no-tma",
    "not-persistent",
    "no-splitk",
)


# (M, N, K) -> the (BLOCK_M, BLOCK_N) of cuBLAS's nvjet kernel there (its name, transposed), at
# 10-16 stages, one CTA per SM (results/h200/gemm_llama-deep, the cuBLAS rows; moved out of the
# tree in session 51).
CUBLAS_DEEP_TILES = {
    (32, 6144, 4096): (32, 64),
    (64, 4096, 4096): (32, 64),
    (64, 6144, 4096): (64, 64),
    (128, 4096, 4096): (64, 64),
}


@pytest.mark.parametrize("shape", sorted(CUBLAS_DEEP_TILES))
def test_deep_configs_offer_cublas_one_wave_shape(shape):
    m, n, k = shape
    deep = deep_configs("full", m, n, k, 2, 2, H200)
    assert deep and deep[0].split_k == 1
    assert (deep[0].block_m, deep[0].block_n) == CUBLAS_DEEP_TILES[shape]
    for cfg in deep:
        units = -(-m // cfg.block_m) * -(-n // cfg.block_n) * cfg.split_k
        assert H200.num_sms // 2 <= units <= H200.num_sms and cfg.programs_per_sm == 1
        if cfg in wide_k_twins(deep[0], m, n, k, 2, 2, H200):  # (test_deep_configs_add_wide...)
            continue
        if (cfg.block_m, cfg.block_n) == (deep[0].block_n, deep[0].block_m):  # (...partner)
            continue
        assert cfg.num_stages >= 5 and shared_mem_bytes(cfg, 2, 2) <= H200.max_shared_mem
        # One stage more would not fit (or would outrun the split's K tiles).
        deeper = replace(cfg, num_stages=cfg.num_stages + 1)
        k_tiles = -(-k // cfg.block_k) // cfg.split_k
        assert shared_mem_bytes(deeper, 2, 2) > H200.max_shared_mem or deeper.num_stages > k_tiles
    assert deep[0] in candidate_configs("full", m, n, k, 2, 2, H200)


@pytest.mark.parametrize("in_bytes", [1, 2])
def test_deep_configs_offer_the_transposed_tile_that_reads_the_weight_once(in_bytes):
    """At 64 tokens 32x64 and 64x32 tie on fill and elements read per unit; the ranking keeps
    32x64 (each weight tile read twice), so 64x32 (the 64 tokens in one tile, each weight tile
    read once: the H200 probe's fastest unswapped tile at 64x4096x4096 and 64x4096x14336,
    session 75) comes too, with 256-byte K rows and with 512-byte ones at 4 stages (session
    77's capped probe: the faster of the two at 64x4096x4096 fp8); the split tile stays."""
    for k in (4096, 14336):
        deep = deep_configs("full", 64, 4096, k, in_bytes, 2, H200)
        assert (deep[0].block_m, deep[0].block_n) == (32, 64) and deep[1].split_k > 1
        partner = [c for c in deep if (c.block_m, c.block_n) == (64, 32)]
        assert [c.block_k * in_bytes for c in partner] == [256, 512]
        assert all(c.split_k == 1 for c in partner)
        assert 3 <= partner[0].num_stages <= 6 and partner[1].num_stages == 4
        offered = candidate_configs("full", 64, 4096, k, in_bytes, 2, H200)
        assert all(c in offered for c in partner)
    # no tie, no partner: at 16 tokens the tiles have at most 16 rows
    assert all(c.block_m <= 16 for c in deep_configs("full", 16, 4096, 4096, in_bytes, 2, H200))


def test_deep_configs_follow_the_rungs_and_stay_on_hopper():
    assert deep_configs("full", 32, 6144, 4096, 2, 2, _pretend("sm_80")) == []
    assert deep_configs("full", 32, 6144, 4096, 2, 2, _pretend("gfx942")) == []
    assert deep_configs("full", 1024, 6144, 4096, 2, 2, H200) == []  # M above DEEP_MAX_M
    for rung in ("no-pipeline", "no-tensor-cores"):
        assert deep_configs(rung, 32, 6144, 4096, 2, 2, H200) == []
    assert all(c.split_k == 1 for c in deep_configs("no-splitk", 1, 4096, 4096, 2, 2, H200))
    assert all(not c.tma for c in deep_configs("no-tma", 1, 4096, 4096, 2, 2, H200))
    # N 4096 at M 1: whole-K 16x32 tiles (128 units) and a split twin both fill a wave (then
    # the whole tile's wide-K twin).
    whole, split, *wide = deep_configs("full", 1, 4096, 4096, 2, 2, H200)
    assert whole.split_k == 1 and split.split_k > 1 and wide[-1].block_k == 2 * whole.block_k


@pytest.mark.parametrize("rung", RUNGS)
def test_mid_m_rungs_remove_their_feature(rung):
    for m, n, k in [(128, 4096, 4096), (256, 10240, 8192), (96, 40, 64)]:
        cands = candidate_configs(rung, m, n, k, 2, 2, H200)
        assert 1 <= len(cands) <= MAX_LISTED and len(set(cands)) == len(cands)
        assert all(c.tma == (rung != "no-tma") for c in cands)
        assert all((c.num_stages == 1) == (rung == "no-pipeline") for c in cands)
        assert all(c.persistent == (rung != "not-persistent") for c in cands)
        assert all(c.tensor_cores == (rung != "no-tensor-cores") for c in cands)
        if rung == "no-splitk":
            assert all(c.split_k == 1 and not c.stream_k for c in cands)


# ---- stream-K -----------------------------------------------------------------------------


def _owners(tiles: int, k_tiles: int, programs: int) -> dict[int, list[int]]:
    """Brute force: which programs each tile's K iterations fall to (ranges p*total//P)."""
    total = tiles * k_tiles
    owners: dict[int, list[int]] = {}
    for p in range(programs):
        for it in range(p * total // programs, (p + 1) * total // programs):
            owners.setdefault(it // k_tiles, [])
            if p not in owners[it // k_tiles]:
                owners[it // k_tiles].append(p)
    return owners


@pytest.mark.parametrize(
    "tiles,k_tiles,programs",
    [
        (80, 128, 132),
        (96, 64, 132),
        (160, 128, 132),
        (896, 64, 132),
        (6, 5, 4),
        (1, 4, 4),
        (2048, 128, 132),
        (7, 3, 264),
        (264, 64, 264),
    ],
)
def test_stream_k_plan_shares_work_evenly_and_counts_parts(tiles, k_tiles, programs):
    plan = stream_k_plan(tiles, k_tiles, programs)
    full, rest = divmod(tiles, programs)
    if rest == 0:  # whole waves: nothing to share
        assert plan.sk_tiles == 0 and plan.dp_tiles == tiles
        return
    assert plan.dp_tiles % plan.num_programs == 0 and plan.dp_tiles + plan.sk_tiles == tiles
    assert plan.sk_tiles == (tiles if full == 0 else rest + programs)
    assert plan.num_programs <= programs and plan.num_programs <= max(
        plan.sk_tiles * k_tiles, programs if full else 0
    )
    owners = _owners(plan.sk_tiles, k_tiles, plan.num_programs)
    assert sorted(owners) == list(range(plan.sk_tiles))  # every shared tile is covered
    assert plan.max_parts == max(len(o) for o in owners.values())
    assert plan.shared_tiles == sum(len(o) > 1 for o in owners.values())
    shares = [
        (p + 1) * plan.sk_tiles * k_tiles // plan.num_programs
        - p * plan.sk_tiles * k_tiles // plan.num_programs
        for p in range(plan.num_programs)
    ]
    assert max(shares) - min(shares) <= 1  # no SM waits on a tail


def test_stream_k_is_offered_only_for_partial_waves():
    big = GemmConfig(128, 256, 64, num_warps=8)
    assert offers_stream_k(big, 256, 10240, 8192, H200)  # 80 tiles: 61% of a wave
    assert offers_stream_k(big, 512, 6144, 4096, H200)  # 96 tiles: 73%
    assert not offers_stream_k(big, 4224, 8192, 8192, H200)  # 33 x 32 = 8 whole waves
    assert not offers_stream_k(big, 2048, 4096, 4096, H200)  # 16 x 16 = 256 of 2 x 132: 97%
    assert not offers_stream_k(replace(big, split_k=2), 256, 10240, 8192, H200)
    assert not offers_stream_k(replace(big, persistent=False), 256, 10240, 8192, H200)


def test_cost_model_prefers_stream_k_on_a_partial_wave():
    est = lambda cfg, m, n, k: estimate_seconds(cfg, m, n, k, 2, 2, H200)
    big = GemmConfig(128, 256, 64, num_warps=8, num_stages=3)
    sk = replace(big, stream_k=True)
    assert est(sk, 256, 10240, 8192) < 0.8 * est(big, 256, 10240, 8192)  # 80 tiles
    assert est(sk, 256, 10240, 8192) < est(replace(big, split_k=3), 256, 10240, 8192)
    assert est(sk, 4224, 8192, 8192) > est(big, 4224, 8192, 8192)  # 33 x 32: whole waves


def test_mid_m_list_adds_stream_k_after_the_measured_choices():
    cands = candidate_configs("full", 256, 10240, 8192, 2, 2, H200)
    plain = [c for c in cands if not (c.stream_k or c.reduce_apart)]
    streamed = [c for c in cands if c.stream_k]
    apart = [c for c in cands if c.reduce_apart]
    # the ride-alongs last: stream-K, then the split-K twins summed by a second launch
    assert 1 <= len(streamed) <= STREAM_K_CANDIDATES and len(apart) <= REDUCE_APART_CANDIDATES
    assert cands[len(plain) :] == streamed + apart
    assert not (cands[0].stream_k or cands[0].reduce_apart)  # the untuned default stays
    assert len(plain) <= MAX_CANDIDATES
    assert all(c.split_k == 1 and c.persistent for c in streamed)
    assert all(c.split_k > 1 and not c.stream_k for c in apart)


def test_reduce_apart_twins_are_offered_where_the_one_launch_sum_is_long():
    """Llama-3.1-405B's fused QKV at M 256 (N 2304, K 16384; own 0.759x cuBLAS in session 81):
    the 128x256 tile split 7 ways (126 units), whose last unit read ~770 KB of partials alone,
    is offered with its partials summed by a second launch, and the model prices that below the
    one-launch twin (session 82's ncu: 47.7 us one launch; cuBLAS 29.3 + a 6.7 us reduce)."""
    m, n, k = 256, 2304, 16384
    cands = candidate_configs("full", m, n, k, 2, 2, H200)
    apart = [c for c in cands if c.reduce_apart]
    wide = [c for c in apart if (c.block_m, c.block_n, c.split_k) == (128, 256, 7)]
    assert wide, apart
    one_launch = replace(wide[0], reduce_apart=False)
    assert estimate_seconds(wide[0], m, n, k, 2, 2, H200) < estimate_seconds(
        one_launch, m, n, k, 2, 2, H200
    )
    # the untuned default is not a ride-along
    assert not cands[0].reduce_apart
    # where the model has them slower than a one-launch config they are not timed (session 82:
    # they took 2-46% longer at all 23 such H200 shapes)
    assert not any(c.reduce_apart for c in candidate_configs("full", 256, 10240, 8192, 2, 2, H200))


@needs_interpreter
@pytest.mark.parametrize(
    "m,n,k,pps",
    [(40, 64, 72, 1), (100, 96, 200, 1), (16, 32, 64, 1), (70, 160, 40, 2), (33, 64, 1000, 1)],
)
@pytest.mark.parametrize("tma", [False, True], ids=["ptr", "tma"])
def test_stream_k_is_correct_deterministic_and_resets_counters(m, n, k, pps, tma):
    # Four pretend SMs: shapes with less than a wave (all tiles shared), a wave and a tail
    # (dp tiles + shared), one tile over every program, two programs per SM.
    a, b, _ = _operands(m, n, k, torch.float16, b_col=True)
    p = check_operands(a, b, None, None, None, "tf32", kernel_target(None))
    cfg = GemmConfig(16, 32, 16, stream_k=True, tma=tma, group_m=2, programs_per_sm=pps)
    launch = build_launch(p, cfg, kernel_target(None))
    first = _run(launch).clone()
    assert _rel_err(first, _reference(a, b, {})) < TOL[torch.float16]
    assert launch.config["sk_tiles"] > 0 and not launch.config["tma_store"]
    counters = launch._args[6]
    assert int(counters.abs().sum()) == 0
    assert torch.equal(_run(launch), first)


@needs_interpreter
def test_stream_k_with_fp8_scales_and_bf16_row_major_b():
    for dtype in (FP8, torch.bfloat16):
        a, b, scales = _operands(40, 64, 80, dtype, b_col=False)
        p = check_operands(
            a, b, None, scales.get("a_scale"), scales.get("b_scale"), "tf32", kernel_target(None)
        )
        launch = build_launch(
            p, GemmConfig(16, 32, 16 if dtype != FP8 else 32, stream_k=True), kernel_target(None)
        )
        assert _rel_err(_run(launch), _reference(a, b, scales)) < TOL[dtype]


def test_stream_k_needs_a_persistent_split_1_config():
    a, b, _ = _operands(8, 32, 32, torch.float16, b_col=True)
    p = check_operands(a, b, None, None, None, "tf32", kernel_target(None))
    with pytest.raises(ValueError, match="stream_k needs"):
        build_launch(p, GemmConfig(16, 32, 16, stream_k=True, split_k=2), kernel_target(None))


def test_tuner_picks_fastest_correct_config_and_caches(monkeypatch):
    """tune_or_lookup with fake launches: wrong results are rejected, the fastest wins, and a
    second call for the same key neither builds nor times anything."""
    ref = torch.ones(2, 2)
    times = {16: 3.0, 32: 1.0, 64: 0.5}  # block_m -> fake ms; 64 is fastest but wrong

    class FakeLaunch:
        def __init__(self, cfg):
            self.cfg, self.out = cfg, torch.empty(2, 2)

        def __call__(self):
            self.out.fill_(2.0 if self.cfg.block_m == 64 else 1.0)
            return self.out

    built = []

    def build(cfg):
        built.append(cfg)
        return FakeLaunch(cfg)

    monkeypatch.setattr(gemm_tune, "bench_cold", lambda fn, device: times[fn.cfg.block_m])
    cands = [GemmConfig(bm, 32, 16) for bm in (16, 32, 64)]
    with pytest.warns(UserWarning, match="rejected 1 config"):
        result = gemm_tune.tune_or_lookup(("k",), cands, build, lambda: ref, 1e-3)
    assert result.config.block_m == 32 and result.tuned and result.candidates_tried == 3
    assert len(result.rejected) == 1 and "wrong result" in next(iter(result.rejected.values()))
    again = gemm_tune.tune_or_lookup(("k",), [replace(cands[0], block_n=64)], build, None, 0.0)
    assert again is result and len(built) == 3


@pytest.mark.parametrize("bm", [16, 32, 64, 128, 256])
@pytest.mark.parametrize("bn", [32, 64, 128, 256])
@pytest.mark.parametrize("split", [2, 3, 4, 8, 16])
@pytest.mark.parametrize("warps", [4, 8])
def test_splitk_reduce_chunk_is_a_power_of_two_inside_the_register_budget(bm, bn, split, warps):
    rows = splitk_reduce_rows(bm, bn, split, warps)
    assert rows & (rows - 1) == 0 and 1 <= rows <= bm
    in_flight = rows * bn * split // (32 * warps)  # fp32 loads per thread for one chunk
    assert in_flight <= REDUCE_REGS or rows * bn <= REDUCE_MIN_ELEMS or rows == 1
    budget = max(REDUCE_REGS * 32 * warps // split, REDUCE_MIN_ELEMS)
    assert rows == bm or rows == 1 or 2 * rows * bn > budget  # the widest chunk that fits


def test_splitk_reduce_chunks_widen_for_few_splits():
    # 128x256 on 8 warps: the old fixed 2048-element chunk walked 16 chunks at any split.
    assert [128 // splitk_reduce_rows(128, 256, s, 8) for s in (2, 3, 4, 8)] == [4, 8, 8, 16]


# Run by the GPU test in a fresh process without TRITON_INTERPRET (real JIT, real tuning).
_GPU_SMOKE = """
import gc
import torch
from harness_kernels.triton.gemm import RUNGS, prepare_matmul
torch.manual_seed(0)
dev = "cuda"
fp8 = torch.float8_e4m3fn
for m, n, k in [(1, 4096, 4096), (7, 1000, 520), (300, 1024, 768), (2048, 2048, 2048)]:
    for dtype in (torch.bfloat16, torch.float16, torch.float32, fp8):
        if dtype == fp8 and torch.cuda.get_device_capability() < (8, 9):
            continue
        a = torch.randn(m, k, device=dev).to(dtype)
        b = torch.randn(n, k, device=dev).to(dtype).t()
        kw = {"a_scale": torch.tensor(0.5, device=dev), "b_scale": torch.tensor(2.0, device=dev)}
        kw = kw if dtype == fp8 else {}
        ref = a.float() @ b.float()
        for rung in RUNGS if dtype == torch.bfloat16 else ("full",):
            launch = prepare_matmul(a, b, rung=rung, **kw)
            # The peak, not the current figure: tuning leaves garbage that the collector may
            # free during the launch, which lowers the current figure without any allocation.
            gc.collect()
            torch.cuda.synchronize()
            before = torch.cuda.memory_allocated()
            torch.cuda.reset_peak_memory_stats()
            out = launch()
            torch.cuda.synchronize()
            peak = torch.cuda.max_memory_allocated()
            assert peak <= before, ("launch allocated memory", rung, before, peak)
            err = ((out.float() - ref).norm() / ref.norm()).item()
            assert err < 2e-2, (m, n, k, dtype, rung, err, launch.config)
            print(m, n, k, dtype, rung, f"{err:.1e}", launch.config.get("tuned_ms"))
"""


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA/ROCm GPU")
def test_gpu_smoke_tunes_and_matches_torch():
    """On a GPU: tune every rung for a few shapes in a process without the interpreter."""
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    proc = subprocess.run(
        [sys.executable, "-c", _GPU_SMOKE],
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]


# ---- tf32 with a row-major B: copy B K-major first ----------------------------------------------


def test_transpose_b_is_offered_for_tf32_row_major_b_on_hopper():
    from harness_kernels.triton.gemm_operands import transposes_b

    a, b_row = torch.randn(64, 64), torch.randn(64, 64)
    sm90, sm80 = _pretend("sm_90"), _pretend("sm_80")
    tf32_row = check_operands(a, b_row, None, None, None, "tf32", sm90)
    assert transposes_b(tf32_row, sm90, "full")
    assert not transposes_b(tf32_row, sm90, "no-tensor-cores")
    assert not transposes_b(check_operands(a, b_row, None, None, None, "tf32", sm80), sm80, "full")
    assert not transposes_b(check_operands(a, b_row, None, None, None, "ieee", sm90), sm90, "full")
    col = check_operands(a, torch.randn(64, 64).t(), None, None, None, "tf32", sm90)
    assert not transposes_b(col, sm90, "full")  # already K-major
    bf16 = check_operands(a.bfloat16(), b_row.bfloat16(), None, None, None, "tf32", sm90)
    assert not transposes_b(bf16, sm90, "full")  # 16-bit wgmma transposes B in the descriptor


@needs_interpreter
@pytest.mark.parametrize("split", ["none", "split-k", "stream-k"])
def test_transpose_b_copies_b_each_call_and_leaves_it_alone(split):
    a, b, _ = _operands(33, 40, 52, torch.float32, b_col=False)
    before = b.clone()
    p = check_operands(a, b, None, None, None, "tf32", kernel_target(None))
    extra = {"none": {}, "split-k": {"split_k": 2}, "stream-k": {"stream_k": True}}[split]
    launch = build_launch(
        p, GemmConfig(16, 32, 16, transpose_b=True, group_m=2, **extra), kernel_target(None)
    )
    assert launch.config["b_layout"] == "row, copied K-major per call"
    assert _rel_err(_run(launch), _reference(a, b, {})) < TOL["tf32"]
    b.mul_(-1)  # a new B: the next call copies it again
    assert _rel_err(_run(launch), _reference(a, b, {})) < TOL["tf32"]
    assert torch.equal(b, -before)


@needs_interpreter
@pytest.mark.parametrize("split", ["none", "split-k", "stream-k"])
def test_swap_ab_computes_c_from_its_transpose(split):
    """swap_ab tiles C^T = B^T A^T and writes C in place: every element right, split or not, the
    output [M, N] row-major, and B read where it lies (no copy)."""
    a, b, _ = _operands(33, 40, 52, torch.float32, b_col=False)
    p = check_operands(a, b, None, None, None, "tf32", kernel_target(None))
    extra = {"none": {}, "split-k": {"split_k": 2}, "stream-k": {"stream_k": True}}[split]
    launch = build_launch(
        p, GemmConfig(16, 32, 16, swap_ab=True, group_m=2, **extra), kernel_target(None)
    )
    assert launch.config["b_layout"].startswith("row, as wgmma's A operand")
    assert not launch.config["tma"]
    out = _run(launch)
    assert out.shape == (33, 40) and out.stride() == (40, 1)
    assert _rel_err(out, _reference(a, b, {})) < TOL["tf32"]


def test_swap_ab_is_tuned_beside_the_copy_for_tf32_row_major_b():
    """Where transposes_b offers the copy, the swapped product is a candidate too (tiled for
    [N, M]); nothing else gets it."""
    import inspect

    from harness_kernels.triton import gemm

    source = inspect.getsource(gemm.prepare_matmul)
    assert "swap_ab=True" in source and "candidate_configs(tl_rung, n, m, k" in source


@pytest.mark.parametrize("m", [1, 16, 32])
def test_fp8_deep_configs_keep_four_stages_at_decode(m):
    """fp8 tiles of 16-32 rows stream faster at 4 stages than deeper (an H100 probe over ten
    decode shapes): the deep candidates stop there; the 4-stage whole-K 16x128x256 tile that
    beat the tuner's pick by 7-9% at 10240x8192 is offered."""
    deep = deep_configs("full", m, 10240, 8192, 1, 2, H200)
    assert deep and all(c.num_stages == 4 for c in deep if c.block_m < 64)
    if m <= 16:
        assert GemmConfig(16, 128, 256, 4, 4, split_k=1, programs_per_sm=1) in deep
    assert any(c.num_stages > 4 for c in deep_configs("full", m, 10240, 8192, 2, 2, H200))


def test_decode_swap_configs_for_bf16_keep_the_bytes_of_a_k_row():
    """bf16 gets the fp8 tiles with K rows of the same bytes (128 and 256 wide): the H100
    probe's bf16 winners (session 48) were 64x32x128 s4 at 32x6144x4096, 64x16x128 and 64x16x256
    s4 at 2 and 8x6144x4096, 64x16x256 s4 at 16x8192x8192 and at 32x4096x14336 (32 tokens in two
    tiles)."""
    tiles = lambda m, n, k: {  # noqa: E731
        (c.block_m, c.block_n, c.block_k, c.num_stages, c.split_k)
        for c in decode_swap_configs("full", m, n, k, 2, 2, H200)
    }
    assert (64, 32, 128, 4, 1) in tiles(32, 6144, 4096)
    assert (64, 16, 256, 4, 1) in tiles(32, 4096, 14336)
    assert {(64, 16, 128, 4, 1), (64, 16, 256, 4, 1)} <= tiles(8, 6144, 4096)
    assert (64, 16, 256, 4, 1) in tiles(16, 8192, 8192)
    fp8 = decode_swap_configs("full", 16, 4096, 4096, 1, 2, H200)
    bf16 = decode_swap_configs("full", 16, 4096, 4096, 2, 2, H200)
    assert [(2 * c.block_k, c.split_k) for c in bf16] == [(c.block_k, c.split_k) for c in fp8]
    assert all(shared_mem_bytes(c, 2, 2) <= H200.max_shared_mem for c in bf16)


def test_decode_swap_configs_offer_whole_k_and_two_programs_per_sm():
    """Beside the one-wave split, the whole K range (H200 probe, session 75: 64x16x512 s4 whole,
    64 CTAs, 1.16-1.22x the two-way split at 1-16x4096x4096), and where the tiles outnumber the
    SMs but fit two per SM, a grid of two per SM (64x32x256 s4: 1.18x one per SM at
    32x10240x8192, 160 tiles); never two per SM past shared memory."""
    grids = lambda m, n, k: {  # noqa: E731  (64-row tiles; 128-row ones: the test below)
        (c.block_n, c.block_k, c.split_k, c.programs_per_sm)
        for c in decode_swap_configs("full", m, n, k, 1, 2, H200)
        if c.block_m == 64
    }
    for m in (1, 4, 16):
        assert {(16, 512, 2, 1), (16, 512, 1, 1)} <= grids(m, 4096, 4096)
    assert (32, 256, 1, 2) in grids(32, 10240, 8192)
    assert (16, 256, 1, 2) in grids(4, 10240, 8192)  # 160 tiles of 16 tokens
    assert all(p == 1 for *_, p in grids(1, 4096, 4096))  # 64 tiles: one per SM holds them
    assert all(p == 1 for *_, p in grids(32, 57344, 8192))  # 896 tiles: past two per SM
    for c in decode_swap_configs("full", 32, 10240, 8192, 1, 2, H200):
        assert shared_mem_bytes(c, 1, 2) * c.programs_per_sm <= H200.max_shared_mem


@pytest.mark.parametrize("in_bytes", [1, 2])
def test_decode_swap_configs_offer_128_row_weight_tiles_at_wide_n(in_bytes):
    """Where the weight's 128-row tiles outnumber the SMs but fit two per SM (N 28672: 224 on
    132 SMs), 128 rows with 128-byte K rows at 4 stages, two per SM (H200, session 76: the
    probe's fastest swapped config at 4x28672x4096, and 0.3-3.8% ahead in the tune pass); not
    at N 57344 (two rounds: 2-4% behind the 64-row tiles there), nor where 64-row tiles already
    leave SMs idle (N 4096-10240)."""
    wide = lambda m, n, k: [  # noqa: E731
        c for c in decode_swap_configs("full", m, n, k, in_bytes, 2, H200) if c.block_m == 128
    ]
    bk = 128 // in_bytes
    for m in (1, 4, 16, 32):
        assert wide(m, 28672, 4096) == [
            GemmConfig(128, bn, bk, 4, 4, programs_per_sm=2, swap_ab=True) for bn in (16, 32)
        ]
        no_tma = decode_swap_configs("no-tma", m, 28672, 4096, in_bytes, 2, H200)
        assert replace(wide(m, 28672, 4096)[0], tma=False) in no_tma  # the rung, not the tile
    for m, n, k in ((1, 4096, 4096), (32, 10240, 8192), (16, 8192, 28672), (1, 57344, 8192)):
        assert wide(m, n, k) == []
    for c in wide(32, 28672, 4096):
        assert shared_mem_bytes(c, in_bytes, 2) * 2 <= H200.max_shared_mem


@pytest.mark.parametrize("dtype_bytes", [1, 2])
@pytest.mark.parametrize(
    "shape", [(1, 4096, 4096), (16, 4096, 4096), (32, 6144, 4096), (128, 4096, 4096)]
)
def test_deep_configs_add_wide_k_twins_of_the_whole_tile(shape, dtype_bytes):
    """The whole-K deep tile comes again with 256-byte K rows at up to 6 stages (the most that
    fit) and 512-byte ones at 4 (the probes' fastest: bf16 64x64x128 s6
    at 128x4096x4096, 16x32x256 s4 at 16x4096x4096; fp8 16x32x512 s4); fp8 tiles of 16-32 rows
    stay at 4 stages."""
    m, n, k = shape
    deep = deep_configs("full", m, n, k, dtype_bytes, 2, H200)
    whole = deep[0]
    twins = wide_k_twins(whole, m, n, k, dtype_bytes, 2, H200)
    assert whole.split_k == 1 and 1 <= len(twins) <= DEEP_TWINS and len(set(deep)) == len(deep)
    assert deep[-len(twins) :] == twins
    for twin in twins:
        assert replace(twin, block_k=whole.block_k, num_stages=whole.num_stages) == whole
        row_bytes = twin.block_k * dtype_bytes
        cap = {256: 4 if dtype_bytes == 1 and whole.block_m < 64 else 6, 512: 4}[row_bytes]
        assert 3 <= twin.num_stages <= cap and (row_bytes == 256 or twin.num_stages == 4)
        assert shared_mem_bytes(twin, dtype_bytes, 2) <= H200.max_shared_mem
        deeper = replace(twin, num_stages=twin.num_stages + 1)
        assert twin.num_stages == cap or shared_mem_bytes(deeper, dtype_bytes, 2) > 232448
    bk = 512 // dtype_bytes
    if whole.block_m < 64:
        assert replace(whole, block_k=bk, num_stages=4) in twins
    if (m, dtype_bytes) == (128, 2):
        assert GemmConfig(64, 64, 128, 4, 6, split_k=1, programs_per_sm=1) in twins


@pytest.mark.parametrize("m", [5, 8])  # at 8 fp32 columns C^T's rows are 32 bytes: TMA-storable
@pytest.mark.parametrize("split", [1, 2])
def test_swap_ab_with_a_column_major_b_stores_c_in_place(split, m):
    """nt decode swapped: C^T = W A^T with both operands K-major, C^T written into C's [M, N]
    row-major layout by pointers (split-K too): never by a TMA store, which would write C^T's
    tiles as if C were [N, M]."""
    a, b, _ = _operands(m, 96, 64, torch.float32, b_col=True)
    p = check_operands(a, b, None, None, None, "ieee", kernel_target(None))
    cfg = GemmConfig(64, 16, 16, swap_ab=True, split_k=split, group_m=2)
    launch = build_launch(p, cfg, kernel_target(None))
    assert launch.config["b_layout"].startswith("col, the weight as wgmma's A operand")
    assert not launch.config["tma_store"]
    out = _run(launch)
    assert out.shape == (m, 96) and out.stride() == (96, 1)
    assert _rel_err(out, _reference(a, b, {})) < TOL["ieee"]


def test_decode_swap_configs_tile_the_weight_rows_for_fp8_nt_on_hopper():
    """The swapped fp8 decode candidates: 64 weight rows, the tokens in 16- and 32-wide tiles,
    256- and 512-wide K at 4 stages, split-K within one wave (the H100 probe's winners: 64x16x256
    in 2 splits at 16x4096x4096, 64x32x256 whole at 16x8192x8192, 64x32x512 at 32x6144x4096);
    none for fp32, M > 32, the rungs without tensor cores or pipelining, or other GPUs."""
    tiles = lambda m, n, k: {  # noqa: E731
        (c.block_m, c.block_n, c.block_k, c.num_stages, c.split_k)
        for c in decode_swap_configs("full", m, n, k, 1, 2, H200)
    }
    assert (64, 16, 256, 4, 2) in tiles(16, 4096, 4096)
    assert (64, 16, 256, 4, 2) in tiles(1, 4096, 4096)
    assert (64, 32, 256, 4, 1) in tiles(16, 8192, 8192)
    assert (64, 32, 512, 4, 1) in tiles(32, 6144, 4096)
    # 32 tokens in two 16-wide tiles too (bf16's winner at 32x4096x14336)
    assert {bn for _, bn, *_ in tiles(32, 6144, 4096)} == {16, 32}
    for m, n, k in ((1, 4096, 4096), (32, 57344, 8192)):
        for c in decode_swap_configs("full", m, n, k, 1, 2, H200):
            units = -(-n // c.block_m) * -(-m // c.block_n) * c.split_k
            assert c.swap_ab and units <= H200.num_sms or c.split_k == 1
            assert shared_mem_bytes(c, 1, 2) <= H200.max_shared_mem
    assert decode_swap_configs("full", 8, 4096, 512, 1, 2, H200) == []  # < 3 stages of K
    # a split's share of K under 3 stages: only the whole K range is offered
    assert {c.split_k for c in decode_swap_configs("full", 8, 4096, 1024, 1, 2, H200)} == {1}
    assert decode_swap_configs("full", 16, 4096, 4096, 4, 4, H200) == []
    # none past 32 tokens: two token tiles read each weight tile twice (session 75's M 64 run)
    assert decode_swap_configs("full", 64, 4096, 4096, 1, 2, H200) == []
    assert decode_swap_configs("full", 16, 4096, 4096, 1, 2, _pretend("sm_80")) == []
    for rung in ("no-tensor-cores", "no-pipeline", "no-swap-ab"):
        assert decode_swap_configs(rung, 16, 4096, 4096, 1, 2, H200) == []
    # the other rungs get them with their feature removed (their gap is not the swap's)
    assert all(not c.tma for c in decode_swap_configs("no-tma", 16, 4096, 4096, 1, 2, H200))
    assert all(c.split_k == 1 for c in decode_swap_configs("no-splitk", 1, 4096, 4096, 1, 2, H200))
    assert all(
        not c.persistent for c in decode_swap_configs("not-persistent", 16, 4096, 4096, 1, 2, H200)
    )


# ---- tiny N: an MoE router's gate (N = the expert count) -----------------------------------------


@pytest.mark.parametrize("in_bytes", [1, 2])
@pytest.mark.parametrize("m", [1, 16, 64, 512])
def test_tiny_n_configs_tile_n_16_wide_and_split_k_to_fill_the_sms(m, in_bytes):
    """Mixtral's router (N 8, K 4096): 16-wide N tiles, 16 or 64 rows, a split that keeps the
    units within one wave with at least 2 K tiles each (at most 16 ways), and a quarter of it;
    all of them in the tuner's list (session 80: nothing there fitted N 8)."""
    tiny = tiny_n_configs("full", m, 8, 4096, in_bytes, 2, H200)
    assert tiny and len(set(tiny)) == len(tiny)
    offered = candidate_configs("full", m, 8, 4096, in_bytes, 2, H200)
    for cfg in tiny:
        assert cfg.block_n == 16 and cfg.block_m in (16, 64) and cfg in offered
        assert cfg.block_m == 16 or m > 16
        units = -(-m // cfg.block_m) * cfg.split_k
        k_per_split = -(-4096 // cfg.block_k) // cfg.split_k
        assert units <= H200.num_sms and k_per_split >= 2 and cfg.split_k <= 16
        assert 2 <= cfg.num_stages <= min(4, k_per_split)
    widest = max(c.split_k for c in tiny if c.block_m == 16)
    assert [c.split_k for c in tiny if c.block_m == 16] == [widest, max(widest // 4, 1)]


def test_tiny_n_configs_stay_at_tiny_n_on_hopper_and_follow_the_rungs():
    assert tiny_n_configs("full", 64, 32, 4096, 2, 2, H200) == []  # N above TINY_N
    assert tiny_n_configs("full", 1024, 8, 4096, 2, 2, H200) == []  # M above DEEP_MAX_M
    assert tiny_n_configs("full", 64, 8, 4096, 2, 2, _pretend("sm_80")) == []
    assert tiny_n_configs("full", 64, 8, 4096, 2, 2, _pretend("gfx942")) == []
    for rung in ("no-pipeline", "no-tensor-cores"):
        assert tiny_n_configs(rung, 64, 8, 4096, 2, 2, H200) == []
    assert all(c.split_k == 1 for c in tiny_n_configs("no-splitk", 64, 8, 4096, 2, 2, H200))
    assert all(not c.tma for c in tiny_n_configs("no-tma", 64, 8, 4096, 2, 2, H200))


@needs_interpreter
@pytest.mark.parametrize("split", [1, 4])
def test_a_16_wide_tile_computes_an_8_column_c(split):
    """N 8 in a 16-wide tile: the loads past N read zeros and the store leaves nothing past N
    (C is [M, 8], row stride 8), split or not; ragged M and K."""
    a, b, _ = _operands(33, 8, 200, torch.float32, b_col=True)
    p = check_operands(a, b, None, None, None, "tf32", kernel_target(None))
    launch = build_launch(p, GemmConfig(16, 16, 16, 4, 2, split_k=split), kernel_target(None))
    out = _run(launch)
    assert out.shape == (33, 8) and out.stride() == (8, 1)
    assert _rel_err(out, _reference(a, b, {})) < TOL["tf32"]


@needs_interpreter
@pytest.mark.parametrize("bm,bn,split", [(32, 144, 3), (64, 48, 2), (128, 16, 4)])
def test_split_sum_reads_every_part_of_every_tile_in_grouped_order(bm, bn, split):
    """gemm_reduce_kernel's second launch on its own, as the Gluon GEMM feeds it: tiles of any
    width (144: columns padded to 256 and masked), several row chunks per tile, ragged M and N,
    tile ids in the grouped order, the scales applied once. A Python model of the workspace
    ([tiles, split, BM, BN]) gives the expected C."""
    from harness_kernels.triton.gemm_reduce_kernel import splitk_sum, sum_rows

    m, n, group_m = 3 * bm - 5, 2 * bn - 3, 2
    tiles_m, tiles_n = -(-m // bm), -(-n // bn)
    tiles = tiles_m * tiles_n
    ws = torch.randn(tiles, split, bm, bn)
    out = torch.full((m, n), float("nan"), dtype=torch.bfloat16)
    scales = torch.tensor(0.5), torch.tensor([1.5])
    summed = splitk_sum(ws.flatten(), out, *scales, tiles, bm, bn, group_m, split)
    assert summed.grid[0] == tiles * (bm // sum_rows(bm, bn)) > tiles  # several chunks a tile
    summed()
    expect = torch.empty(tiles_m * bm, tiles_n * bn)
    for t in range(tiles):  # gemm_kernel._tile_coords, in Python
        per_group = group_m * tiles_n
        first_m = (t // per_group) * group_m
        rows_in_group = min(tiles_m - first_m, group_m)
        pid_m = first_m + (t % per_group) % rows_in_group
        pid_n = (t % per_group) // rows_in_group
        part_sum = ws[t, 0].clone()
        for s in range(1, split):  # in split order, as the kernel adds them
            part_sum += ws[t, s]
        expect[pid_m * bm : (pid_m + 1) * bm, pid_n * bn : (pid_n + 1) * bn] = part_sum
    expect = (expect[:m, :n] * 0.75).to(torch.bfloat16)
    torch.testing.assert_close(out, expect, rtol=1e-2, atol=1e-2)
