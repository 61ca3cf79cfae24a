"""The own Triton GEMM's candidate spaces on pretend targets: what each shape, dtype and rung is
offered (mid-M wave fill, deep one-wave tiles, decode swaps, tiny N) and that it fits the device."""

from __future__ import annotations

import os

os.environ.setdefault("TRITON_INTERPRET", "1")

from dataclasses import replace  # noqa: E402

import pytest  # noqa: E402
import torch  # noqa: E402
from harness_kernels.triton import gemm_tune  # noqa: E402
from harness_kernels.triton.gemm import (  # noqa: E402
    RUNGS,
)
from harness_kernels.triton.gemm_candidates import (  # noqa: E402
    DEEP_TWINS,
    MAX_CANDIDATES,
    REDUCE_APART_CANDIDATES,
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
from triton_gemm_cases import (  # noqa: E402
    FP8,
    H200,
    MAX_LISTED,
    _pretend,
)

pytestmark = pytest.mark.usefixtures("fresh_gemm_tune")


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
    "tl-ties",
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


def test_the_fma_dot_is_offered_on_nvidia_at_16_bit_and_narrower():
    """The no-tensor-cores rung times the FMA dot beside the broadcast tiles on NVIDIA, for bf16,
    fp16 and fp8 operands; not on AMD (an fp32 dot is v_mfma_f32 there) and not for fp32
    operands (no upcast to save, and its 128x64 tile spills)."""
    for in_bytes, offered in ((2, True), (1, True), (4, False)):
        cands = candidate_configs("no-tensor-cores", 4096, 4096, 4096, in_bytes, 2, H200)
        assert any(c.fma_dot for c in cands) == offered, in_bytes
        assert not any(c.tensor_cores for c in cands)
    amd = candidate_configs("no-tensor-cores", 4096, 4096, 4096, 2, 2, _pretend("gfx942"))
    assert amd and not any(c.fma_dot for c in amd)
    for rung in RUNGS:
        if rung != "no-tensor-cores":
            assert not any(c.fma_dot for c in candidate_configs(rung, 4096, 4096, 4096, 2, 2, H200))
