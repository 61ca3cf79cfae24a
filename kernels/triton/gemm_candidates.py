"""Which configs the own Triton GEMM times for one problem on one device.

The fixed per-vendor lists (gemm_configs.py) with their split-K and stream-K twins
(gemm_split.py), or, on Hopper at 32 < M <= 512, a generated space ranked by the cost model
(gemm_cost_model.py) with the fixed list's choices appended as anchors. Under the CPU
interpreter: one small deterministic config.
"""

from __future__ import annotations

import functools
from dataclasses import replace

from .gemm_configs import (
    RUNGS,
    GemmConfig,
    apply_rung,
    get_cuda_configs,
    get_fma_configs,
    get_hip_configs,
    interpreter_config,
    keep_config,
    shared_mem_bytes,
)
from .gemm_cost_model import ACC_REGS, estimate_seconds, fits_sm, uses_mid_model
from .gemm_split import offers_stream_k, split_k_choices
from .gemm_target import KernelTarget, kernel_target

# Candidate lists are capped so that tuning one shape stays at a few seconds on the GPU.
MAX_CANDIDATES = 12
STREAM_K_CANDIDATES = 2  # stream-K configs added to a mid-M list (beyond MAX_CANDIDATES)
# split-K configs whose partials a second launch sums (GemmConfig.reduce_apart), added to a mid-M
# list beside the stream-K ones
REDUCE_APART_CANDIDATES = 2
# one-wave deep-pipeline configs added on Hopper (beyond MAX_CANDIDATES), and up to two
# wide-K twins of the whole-K one (wide_k_twins) plus up to two of its transposed partner
# (_transposed_partner)
DEEP_CANDIDATES = 2
DEEP_TWINS = 4
MAX_DEEP_STAGES = 16
# fp8 at 16-32 rows (mma.sync, 256-wide K tiles): fewer stages stream faster. Over ten decode
# shapes on an H100 (scripts/gemm_decode_probe.py, results/h100/_logs/session47) the tile's
# 4-stage config beat its deeper ones at every tile timed: 16x128x256 at 16x10240x8192 took
# 34.9 us at 4 stages, 39.1 at 6; 16x32x256 at 16x4096x4096 13.4 / 14.1 / 14.4 / 14.7 / 15.5 us
# at 4 / 6 / 8 / 12 / 16. bf16 deep tiles keep as many stages as fit (they won six H200 points
# in results/h200/gemm_llama-deep), but an H100 probe (session 48) found 16x32x128 6% slower at
# 16 stages than at 12, so wide_k_twins offers fewer, wider stages beside them.
MAX_DEEP_STAGES_FP8_NARROW = 4
DEEP_MAX_M = 512


def candidate_configs(
    rung: str, m: int, n: int, k: int, in_bytes: int, out_bytes: int, dev: KernelTarget
) -> list[GemmConfig]:
    """The configs prepare_matmul times for one problem on one device (at most MAX_CANDIDATES).

    Hopper at 32 < M <= 512 gets a generated space ranked by the cost model (_mid_candidates);
    every other case gets the fixed per-vendor lists, with split-K from split_k_choices. Hopper
    at M <= 512 adds deep_configs and, at N <= TINY_N, tiny_n_configs."""
    if rung not in RUNGS:
        raise ValueError(f"unknown rung {rung!r}; expected one of {RUNGS}")
    if rung != "no-tensor-cores" and uses_mid_model(m, dev):
        out = list(_mid_candidates(rung, m, n, k, in_bytes, out_bytes, dev))
    else:
        out = _listed_candidates(rung, m, n, k, in_bytes, out_bytes, dev)
    deep = deep_configs(rung, m, n, k, in_bytes, out_bytes, dev)
    deep += tiny_n_configs(rung, m, n, k, in_bytes, out_bytes, dev)
    return out + [c for c in dict.fromkeys(deep) if c not in out]


def one_wave_split(tiles: int, k_tiles: int, num_sms: int) -> int:
    """The largest power-of-two split-K that keeps tiles x split within one wave of num_sms and
    gives every split at least 4 K tiles (1 where the tiles alone fill half the SMs)."""
    split = 1
    while 2 * split * tiles <= num_sms and 4 * split <= k_tiles:
        split *= 2
    return split


def deep_configs(
    rung: str, m: int, n: int, k: int, in_bytes: int, out_bytes: int, dev: KernelTarget
) -> list[GemmConfig]:
    """Hopper, M <= DEEP_MAX_M: cuBLAS's shape for few tiles, which our lists lacked.

    cuBLAS's nvjet kernels at small M run one CTA per SM on a tile small enough that the tiles
    (times their split-K) fill at most one wave, with 10-16 pipeline stages (the stage count is
    in the kernel name: H200 32x6144x4096 is 96 CTAs of 64x32 with 16 stages, 128x4096x4096 is
    128 CTAs of 64x64 with 13; results/h200/gemm_llama-deep). Our lists put two programs on
    an SM at 4-5 stages, and a tile count just above a wave leaves some SMs with two programs
    and the rest with one: H200 32x6144x4096 own Triton 0.823x cuBLAS. So: among power-of-two
    tiles (BLOCK_M 16-128 within M, BLOCK_N 32-128) with a split-K that keeps the units within
    one wave, the whole-K tile and the split one that fill it best (ties: fewer bytes read per
    wave), one program per SM, as many stages as shared memory holds (at most MAX_DEEP_STAGES,
    4 for fp8 tiles of 16-32 rows, and no more than the K tiles of one split).

    Measured (session 45, results/h200/gemm_llama-deep): fastest at 6 of 49 H200 points, five
    of them the split ones (32x10240x8192 by 12.7%). The whole-K tiles, cuBLAS's own, stream
    slower than cuBLAS does (H100 ncu: 56% of peak against 67.5% at the same 96 CTAs;
    results/h100/README.md, session 45)."""
    if dev.backend != "cuda" or dev.capability // 10 != 9 or m > DEEP_MAX_M:
        return []
    if rung in ("no-tensor-cores", "no-pipeline"):
        return []  # the rung's own list is the measurement; deep stages are a pipeline feature
    bk0 = max(128 // in_bytes, 16)
    m_cap = max(16, 1 << max(m - 1, 0).bit_length())
    ranked: list[tuple[tuple[float, float], GemmConfig]] = []
    for bm in (16, 32, 64, 128):
        for bn in (32, 64, 128):
            if bm > min(m_cap, 128) or bn > max(32, 1 << max(n - 1, 0).bit_length()):
                continue
            tiles = -(-m // bm) * -(-n // bn)
            if tiles > dev.num_sms:
                continue
            # 128-byte K rows (the widest TMA swizzle) for wgmma's 64+ rows; 256-byte ones at
            # 16-32 rows, as the decode list has. cuBLAS keeps 64-wide K tiles there, but twins
            # of ours with them (more stages in the same bytes) ran 7% slower than these over 66
            # pairs and won none of 36 points (session 46, results/h100/gemm_llama-narrowk).
            bk = bk0 if bm >= 64 else 2 * bk0
            k_tiles = -(-k // bk)
            split = 1 if rung == "no-splitk" else one_wave_split(tiles, k_tiles, dev.num_sms)
            units = tiles * split
            if 2 * units < dev.num_sms:
                continue
            cfg = GemmConfig(bm, bn, bk, 4, 1, split_k=split, programs_per_sm=1)
            cfg = apply_rung(cfg, rung)
            most = MAX_DEEP_STAGES_FP8_NARROW if in_bytes == 1 and bm < 64 else MAX_DEEP_STAGES
            cap = min(most, -(-k_tiles // split))
            cfg = replace(cfg, num_stages=most_stages_that_fit(cfg, cap, in_bytes, out_bytes, dev))
            if cfg.num_stages < 3 or not keep_config(cfg, m, n, k, in_bytes, out_bytes, dev):
                continue
            read = units * (bm + bn) * k / split  # operand elements read by the wave
            ranked.append(((-units / dev.num_sms, read), cfg))
    ranked.sort(key=lambda rc: rc[0])
    # The best whole-K tile, then the best split one: split-K's partial sums cost a reduction
    # that the fill and the bytes read do not price, so each kind gets its own place.
    whole_ranked = [(key, c) for key, c in ranked if c.split_k == 1]
    whole = [c for _, c in whole_ranked[:1]]
    parted = [c for _, c in ranked if c.split_k > 1][: DEEP_CANDIDATES - len(whole)]
    twins = [t for c in whole for t in wide_k_twins(c, m, n, k, in_bytes, out_bytes, dev)]
    partner = _transposed_partner(whole_ranked, m, n, k, in_bytes, out_bytes, dev)
    return whole + parted + [c for c in twins + partner if c not in parted]


# An MoE router's gate GEMM has N = the expert count (Mixtral 8): N at most this gets
# tiny_n_configs.
TINY_N = 16
TINY_N_STAGES = 4


def tiny_n_configs(
    rung: str, m: int, n: int, k: int, in_bytes: int, out_bytes: int, dev: KernelTarget
) -> list[GemmConfig]:
    """Hopper, N <= TINY_N, M <= DEEP_MAX_M: 16-wide N tiles over M, K split to fill the SMs.

    Mixtral's router (N 8, K 4096) ran 0.49-0.83x cuBLAS at M 1-512 on an H200 (session 80,
    `results/h200/mixtral_8x7b_decode-s80`): nothing offered there fits it. deep_configs'
    N tiles start at 32, which keep_config drops at N 8, so the tuner took one CTA's swapped
    tile at M 1-32 and 16x64 or 64x64 tiles at M 64-512: 1-8 CTAs streaming all of K. The
    problem is a few MB of activations and 64 KB of weight: only many programs in flight make
    it fast. So: 16-wide N tiles (wgmma and
    mma.sync take N 16; the 8 columns past N are TMA's zero fill and a masked store), 16 rows
    (mma.sync) or 64 (one wgmma warpgroup) over M, and the largest power-of-two split that
    keeps the units within one wave with at least 2 K tiles each (at most 16, split_k_choices'
    cap), then a quarter of it (fewer partials to reduce); at most TINY_N_STAGES stages. The
    tuner times them beside the rest.

    Measured (session 80, `results/h200/mixtral_router-s80`, one H200 run): the router at
    0.989-1.096x cuBLAS (1.024x over M 1-512); the tuner took the 16-row tile at every M, split
    16 up to M 128, 8 at 256, 4 at 512."""
    if dev.backend != "cuda" or dev.capability // 10 != 9 or n > TINY_N or m > DEEP_MAX_M:
        return []
    if rung in ("no-tensor-cores", "no-pipeline"):
        return []  # as deep_configs: the rung's own list is its measurement
    bk0 = max(128 // in_bytes, 16)
    out: list[GemmConfig] = []
    for bm in (16, 64):
        if bm == 64 and m <= 16:
            continue  # 16 rows hold the tokens; 64 would compute 48 rows of zeros
        bk = bk0 if bm >= 64 else 2 * bk0  # as deep_configs: 128-byte rows at 64, 256 at 16
        tiles, k_tiles = -(-m // bm), -(-k // bk)
        split = 1
        while 2 * split * tiles <= dev.num_sms and 4 * split <= k_tiles and split < 16:
            split *= 2
        for s in dict.fromkeys((split, max(split // 4, 1))):
            s = 1 if rung == "no-splitk" else s
            cfg = GemmConfig(bm, 16, bk, 4, min(TINY_N_STAGES, -(-k_tiles // s)), split_k=s)
            cfg = apply_rung(cfg, rung)
            if cfg not in out and keep_config(cfg, m, n, k, in_bytes, out_bytes, dev):
                out.append(cfg)
    return out


def _transposed_partner(
    whole_ranked: list[tuple[tuple[float, float], GemmConfig]],
    m: int,
    n: int,
    k: int,
    in_bytes: int,
    out_bytes: int,
    dev: KernelTarget,
) -> list[GemmConfig]:
    """The whole-K tile that ties with the best one and has more rows, as its wide-K twins
    (256-byte rows, and 512-byte ones at 4 stages), or none.

    A tile and its transpose (32x64, 64x32) tie on fill and on elements read per unit, and
    the ranking keeps the first, the one of fewer rows; but at 64 tokens 32x64 reads each
    weight tile twice and 64x32 once. In session 75's H200 probe the unswapped 64x32 was the
    fastest unswapped tile at 64x4096x4096 (256-byte rows, 8 stages: 10.62 us) and
    64x4096x14336 (512-byte rows, 4 stages: 20.64 us), against the tuner's 64x64 at 10.72 and
    20.96; the deep 32x64 had taken 15.0 us. Offered in the wide-K form, which beat the deep
    narrow rows of the same tile in every probe (wide_k_twins). Both widths: session 76 offered
    the 256-byte one alone, and the sweep picked it at 64x4096x4096 fp8 (10.11 us, from the
    swapped pick's 10.46 on another card), where session 77's capped probe timed the 512-byte
    one 3.8% faster (10.37 us against 10.78, cuBLASLt 10.40; results/h200/_logs/session77)."""
    if not whole_ranked:
        return []
    best_key, best = whole_ranked[0]
    for key, cfg in whole_ranked[1:]:
        if key == best_key and cfg.block_m > best.block_m:
            return wide_k_twins(cfg, m, n, k, in_bytes, out_bytes, dev)
    return []


def wide_k_twins(
    cfg: GemmConfig, m: int, n: int, k: int, in_bytes: int, out_bytes: int, dev: KernelTarget
) -> list[GemmConfig]:
    """The whole-K deep tile again with wider K rows and fewer stages: 256-byte rows at up to
    6 stages and 512-byte rows at 4 (bf16 and fp8; fp8 tiles of 16-32 rows stay at 4).

    The deep tile fills shared memory with narrow K rows (128 bytes at 64+ rows, 256 at 16-32).
    A reading, not measured: each K step of the `tl` kernel passes the same barriers whatever
    its width, so narrow steps spend more of their time waiting. In H100 probes
    (scripts/gemm_decode_probe.py, results/h100/_logs/session48, session47) wider rows in fewer
    stages ran faster at the same tile: 128x4096x4096 bf16 64x64x128 s6 17.5 us against the
    deep 64x64x64 s13's 19.3 (cuBLAS 17.3); 64x4096x4096 64x32x256 s4 16.6 against 64x32x128
    s6-s8 17.1-17.2; 16x4096x4096 16x32x256 s4 17.6 against 16x32x128 at 6-16 stages 18.1-19.2;
    fp8 16x32x512 s4 12.5 against 16x32x256 s4 13.0."""
    if in_bytes not in (1, 2):
        return []
    most = MAX_DEEP_STAGES_FP8_NARROW if in_bytes == 1 and cfg.block_m < 64 else 6
    out: list[GemmConfig] = []
    # 512-byte rows only at the 4 stages measured; 256-byte ones at the most stages up to the
    # cap that fit (none with fewer than 3, as deep_configs)
    for row_bytes, stage_cap, stage_floor in ((256, most, 3), (512, 4, 4)):
        twin = replace(cfg, block_k=row_bytes // in_bytes)
        cap = min(stage_cap, -(-k // twin.block_k))
        twin = replace(twin, num_stages=most_stages_that_fit(twin, cap, in_bytes, out_bytes, dev))
        ok = twin.num_stages >= stage_floor and twin != cfg and twin not in out
        if ok and keep_config(twin, m, n, k, in_bytes, out_bytes, dev):
            out.append(twin)
    return out


def most_stages_that_fit(
    cfg: GemmConfig, cap: int, in_bytes: int, out_bytes: int, dev: KernelTarget
) -> int:
    """The most pipeline stages, up to `cap`, whose shared memory fits the device (1 if even
    two do not)."""
    stages = 1
    for s in range(2, cap + 1):
        if shared_mem_bytes(replace(cfg, num_stages=s), in_bytes, out_bytes) > dev.max_shared_mem:
            break
        stages = s
    return stages


# Not past 32 tokens: at 33-64 two 32-wide token tiles read each weight tile twice. Offered at
# M 64 (session 75, results/h200/gemm_llama_lowp-fp8-swap-m64-s75), the tuner took swapped
# 64x32x512 s4 at 64x4096x4096 and 64x4096x14336 on its timings (10.0 and 20.1 us, the
# unswapped 64x64 s6 10.1 and 21.0), and the sweep timed it at 10.5 and 22.6 us: 0.899x and
# 0.854x cuBLASLt, where the unswapped tile had run 0.91-0.93x.
SWAP_DECODE_MAX_M = 32
SWAP_DECODE_STAGES = 4


def decode_swap_configs(
    rung: str, m: int, n: int, k: int, in_bytes: int, out_bytes: int, dev: KernelTarget
) -> list[GemmConfig]:
    """Hopper, fp8 or bf16, B the transpose of a row-major weight (nt), M <= SWAP_DECODE_MAX_M:
    configs of C^T = W A^T (swap_ab), tiled for [N, M].

    At decode our tiles put the few tokens on BLOCK_M (16 rows: mma.sync), and no fp8 config of
    them came within 12% of cuBLASLt at 16x4096x4096. cuBLASLt's kernel there tiles the weight's
    rows (nvjet 64x8: 64 CTAs). Swapped, the weight's rows fill wgmma's 64-row tiles and the
    tokens are its N; both operands stay K-major, so TMA reads both (the kernel stores C^T into
    C's layout by pointers, a few KB). In H100 probes (scripts/gemm_decode_probe.py --swapped)
    the best swapped config beat the tuner's pick at every shape probed: fp8 by 5.6-8.8% at 1
    and 16x4096x4096, 16x8192x8192 and 32x6144x4096 (results/h100/_logs/session47); bf16 by
    2.3-5.9% at eight shapes of M 1-32 (session48), and cuBLAS by 0.8-4.6% at six of them.
    Offered: 64-row weight tiles, the tokens in 16- and 32-wide tiles (bf16's fastest at
    32x4096x14336 put 32 tokens in two 16-wide tiles; fp8's at 16x8192x8192 put 16 in a 32-wide
    one), K tiles of 256 and 512 bytes at up to 4 stages (none with fewer than 3, as
    deep_configs), split-K as deep_configs splits (units within one wave); at wide N also
    128-row weight tiles (_wide_weight_tiles). Every rung that offers deep_configs offers these,
    with the rung applied, so a rung's gap measures its feature and not the swap."""
    if dev.backend != "cuda" or dev.capability // 10 != 9 or in_bytes not in (1, 2):
        return []
    if m > SWAP_DECODE_MAX_M or rung in ("no-tensor-cores", "no-pipeline", "no-swap-ab"):
        return []
    out: list[GemmConfig] = []
    for bn in (16, 32):
        for bk in (256 // in_bytes, 512 // in_bytes):  # 256- and 512-byte K rows
            k_tiles = -(-k // bk)
            tiles = -(-n // 64) * -(-m // bn)
            for split, per_sm in _swap_grids(tiles, k_tiles, dev.num_sms):
                stages = min(SWAP_DECODE_STAGES, -(-k_tiles // split))
                cfg = GemmConfig(
                    64, bn, bk, 4, stages, split_k=split, programs_per_sm=per_sm, swap_ab=True
                )
                cfg = apply_rung(cfg, rung)
                # Not keep_config: it drops a 32-wide token tile at 16 tokens as far larger
                # than the problem, and that tile was the probe's fastest at 16x8192x8192.
                smem = shared_mem_bytes(cfg, in_bytes, out_bytes) * cfg.programs_per_sm
                if stages >= 3 and smem <= dev.max_shared_mem and cfg not in out:
                    out.append(cfg)
        out += _wide_weight_tiles(rung, n, k, bn, in_bytes, out_bytes, dev, out)
    return out


def _wide_weight_tiles(
    rung: str,
    n: int,
    k: int,
    bn: int,
    in_bytes: int,
    out_bytes: int,
    dev: KernelTarget,
    offered: list[GemmConfig],
) -> list[GemmConfig]:
    """Where the weight's rows in 128-row tiles outnumber the SMs but fit two per SM (N 28672
    on 132 SMs: 224 tiles), the tile of 128 weight rows with 128-byte K rows at 4 stages, two
    programs per SM: one round of the persistent grid, where 64-row tiles take 448 units.

    cuBLASLt's fp8 decode kernel there runs 128-row tiles (nvjet 128x8 in 2x1 clusters). On an
    H200 (session 76, `results/h200/_logs/session76/`) the probe found 128x16x128 s4 two per SM
    the fastest swapped config at 4x28672x4096 (31.7 us, the tuner's 64x16x512 s4 32.2); in
    the sweep's tune pass (one card, the tuner's timer) the 128-row tile beat every other
    candidate at N 28672 by 0.3-3.8% (fp8) and 1.1-2.2% (bf16) at M 1-32, and lost to the
    64-row tiles by 2-4% at N 57344 (448 tiles of 128 rows: two rounds), so not offered there."""
    if not dev.num_sms < -(-n // 128) <= 2 * dev.num_sms:  # the weight's rows, any token tile
        return []
    bk = 128 // in_bytes
    stages = min(SWAP_DECODE_STAGES, -(-k // bk))
    cfg = apply_rung(GemmConfig(128, bn, bk, 4, stages, programs_per_sm=2, swap_ab=True), rung)
    smem = shared_mem_bytes(cfg, in_bytes, out_bytes) * cfg.programs_per_sm
    if stages < 3 or smem > dev.max_shared_mem or cfg in offered:
        return []
    return [cfg]


def _swap_grids(tiles: int, k_tiles: int, num_sms: int) -> list[tuple[int, int]]:
    """(split-K, programs per SM) of the swapped decode candidates at `tiles` output tiles.

    The one-wave split first (deep_configs' rule), then the whole K range where that split cut
    it: on an H200 (session 75's probe, `results/h200/_logs/session75/`) 64x16x512 s4 whole, 64
    CTAs as cuBLASLt runs there, took 9.2-9.3 us at 1, 4 and 16x4096x4096 where the tuner's
    two-way split took 10.7-11.3 (cuBLASLt 9.1-9.6). Where the tiles outnumber the SMs, a
    second program per SM, so the persistent grid holds every tile at once instead of a
    partial second round: 64x32x256 s4 at 2 per SM took 24.4 us at 32x10240x8192 (160 tiles),
    the tuner's one per SM 28.8 (cuBLASLt 24.6)."""
    split = one_wave_split(tiles, k_tiles, num_sms)
    grids = [(split, 1)] + ([(1, 1)] if split > 1 else [])
    if num_sms < tiles <= 2 * num_sms:
        grids.append((1, 2))
    return grids


def _listed_candidates(
    rung: str, m: int, n: int, k: int, in_bytes: int, out_bytes: int, dev: KernelTarget
) -> list[GemmConfig]:
    """Candidates from the fixed lists, in list order (split 1 before its split-K twin)."""
    if rung == "no-tensor-cores":
        base = get_fma_configs(dev.backend, in_bytes)
    elif dev.backend == "hip":
        base = get_hip_configs(dev.arch, in_bytes, m)
    else:
        base = get_cuda_configs(dev.capability, in_bytes, m)
    if dev.backend == "hip" or dev.capability < 90:
        # TMA and wgmma warp specialization are Hopper+ features.
        base = [replace(c, tma=False, warp_specialize=False, epilogue_subtile=False) for c in base]
    out: list[GemmConfig] = []
    for cfg in base:
        twins = [replace(cfg, split_k=split) for split in split_k_choices(cfg, m, n, k, dev)]
        if offers_stream_k(cfg, m, n, k, dev):
            twins.append(replace(cfg, stream_k=True))
        for twin in twins:
            cand = apply_rung(twin, rung)
            if cand.split_k > 1 or cand.stream_k:
                cand = replace(cand, warp_specialize=False, epilogue_subtile=False)
            if cand not in out and keep_config(cand, m, n, k, in_bytes, out_bytes, dev):
                out.append(cand)
    if not out:  # everything pruned (tiny problem): fall back to the smallest tile
        smallest = min(base, key=lambda c: c.block_m * c.block_n * c.block_k)
        out = [apply_rung(smallest, rung)]
    # Stream-K twins go last and add at most STREAM_K_CANDIDATES (see _mid_candidates).
    plain = [c for c in out if not c.stream_k][:MAX_CANDIDATES]
    return plain + [c for c in out if c.stream_k][:STREAM_K_CANDIDATES]


def _mid_space(
    rung: str, m: int, n: int, k: int, in_bytes: int, out_bytes: int, dev: KernelTarget
) -> list[GemmConfig]:
    """Every config worth modelling: BLOCK_M 64/128/256 (not above M's power of two), BLOCK_N
    64/128/256, BLOCK_K of 128 and 256 bytes, 4 or 8 warps (<= 128 fp32 accumulators per
    thread), 3-8 stages, one or two programs per SM, split-K 1-16, C stored whole or in halves
    (split 1: split-K writes its partials from registers)."""
    bk0 = max(128 // in_bytes, 16)
    k_tiles = -(-k // bk0)
    splits = [1] if rung == "no-splitk" else range(1, 17)
    stages = [1] if rung == "no-pipeline" else range(3, 9)
    out = []
    for bm in (64, 128, 256):
        for bn in (64, 128, 256):
            # One warpgroup (4 warps) per 64 rows, two for 256 (each 128 rows), either for 128.
            for warps in {64: (4,), 128: (4, 8), 256: (8,)}[bm]:
                if bm * bn // (32 * warps) > ACC_REGS:
                    continue
                for bk in (bk0, 2 * bk0):
                    for pps in (1, 2) if warps == 4 and rung != "not-persistent" else (1,):
                        for split in splits:
                            if split > 1 and split * 2 > k_tiles * bk0 // bk:
                                break
                            for s in stages:
                                cfg = GemmConfig(
                                    bm, bn, bk, warps, s, split_k=split, programs_per_sm=pps
                                )
                                cfg = apply_rung(cfg, rung)
                                # Storing C in two halves frees half its staging tile: on
                                # 128x256 that is the 4th stage (as in the large-M list).
                                subtile = split == 1 and cfg.tma and bn >= 128
                                shapes = [
                                    replace(cfg, epilogue_subtile=sub)
                                    for sub in ((False, True) if subtile else (False,))
                                ]
                                streamed = apply_rung(replace(cfg, stream_k=True), rung)
                                if streamed.stream_k and offers_stream_k(cfg, m, n, k, dev):
                                    shapes.append(streamed)
                                for c in shapes:
                                    if keep_config(
                                        c, m, n, k, in_bytes, out_bytes, dev
                                    ) and fits_sm(c, in_bytes, out_bytes, dev):
                                        out.append(c)
    return out


@functools.lru_cache(maxsize=256)
def _mid_candidates(
    rung: str, m: int, n: int, k: int, in_bytes: int, out_bytes: int, dev: KernelTarget
) -> tuple[GemmConfig, ...]:
    """Rank _mid_space by estimate_seconds; keep a diverse best few, then two anchors.

    Per (BLOCK_M, BLOCK_N, BLOCK_K, warps, programs/SM, split) only one stage count survives:
    the fewest within 1% of that key's best (deeper pipelines only pay while memory-bound).
    Configs modelled at more than 2x the best are dropped. Then, in model order:
      1. the best config of each tile shape (BLOCK_M x BLOCK_N), up to 7 shapes, so that one
         mis-modelled effect cannot fill the list with near-copies of one shape;
      2. if none of those covers all of M (up to 256 rows), the best one that does;
      3. per chosen shape, the best config differing in warps, programs per SM, split-K on/off
         or BLOCK_K (the effects the model is least sure of); then whatever ranks next;
    up to MAX_CANDIDATES minus the anchors, which are appended verbatim from the old fixed list:
    its model-best entry, its default (what tune=False ran) and its most frequent H200 winner
    (64x128 on two programs per SM, with the old split), so the tuner always has the old choice
    to beat. The first entry is the model's best: what tune=False runs now."""
    listed = _listed_candidates(rung, m, n, k, in_bytes, out_bytes, dev)
    listed = [c for c in listed if not c.stream_k]  # anchors are the old list's choices
    best: dict[tuple, tuple[float, GemmConfig]] = {}
    for cfg in _mid_space(rung, m, n, k, in_bytes, out_bytes, dev):
        t = estimate_seconds(cfg, m, n, k, in_bytes, out_bytes, dev)
        key: tuple = (cfg.block_m, cfg.block_n, cfg.block_k, cfg.num_warps, cfg.programs_per_sm)
        key += (cfg.split_k, cfg.stream_k)
        held = best.get(key)
        if held is None or t < held[0] * 0.99:
            best[key] = (t, cfg)
    if not best:  # N or K below the smallest generated tile: the fixed lists handle it
        return tuple(listed)
    timed = sorted(best.values(), key=lambda tc: tc[0])
    # Stream-K configs ride along (STREAM_K_CANDIDATES of them, distinct tiles, model order)
    # instead of competing for the list: they are not yet measured on hardware, so the rest
    # of the list, and the untuned default, stay what they were.
    streamed = [c for t, c in timed if c.stream_k and t <= 2.0 * timed[0][0]]
    timed = [(t, c) for t, c in timed if not c.stream_k]
    extra: list[GemmConfig] = []
    for cfg in streamed:
        if len(extra) < STREAM_K_CANDIDATES and all(
            (c.block_m, c.block_n) != (cfg.block_m, cfg.block_n) for c in extra
        ):
            extra.append(cfg)
    extra += _reduce_apart_twins(timed, m, n, k, in_bytes, out_bytes, dev)
    anchors = [min(listed, key=lambda c: estimate_seconds(c, m, n, k, in_bytes, out_bytes, dev))]
    # 64x128, 4 warps, two programs per SM won 7 of the 11 weak H200 shapes under the old list.
    old_winner = [c for c in listed if (c.block_m, c.block_n, c.programs_per_sm) == (64, 128, 2)]
    for cfg in [listed[0]] + old_winner[-1:]:
        if cfg not in anchors:
            anchors.append(cfg)
    ranked = [c for t, c in timed if t <= 2.0 * timed[0][0] and c not in anchors]
    picked: list[GemmConfig] = []

    def take(cfg: GemmConfig) -> None:
        if cfg not in picked and len(picked) < MAX_CANDIDATES - len(anchors):
            picked.append(cfg)

    def tile(c: GemmConfig) -> tuple:
        return c.block_m, c.block_n

    def variety(c: GemmConfig) -> tuple:
        return tile(c), c.num_warps, c.programs_per_sm, c.split_k > 1 or c.stream_k, c.block_k

    for cfg in ranked:  # 1.
        shapes = {tile(c) for c in picked}
        if tile(cfg) not in shapes and len(shapes) < 7:
            take(cfg)
    whole_m = [c for c in ranked if c.block_m >= min(m, 256)]
    if whole_m and not any(c.block_m >= min(m, 256) for c in picked):  # 2.
        take(whole_m[0])
    shapes = {tile(c) for c in picked}
    for cfg in ranked:  # 3.
        if tile(cfg) in shapes and variety(cfg) not in {variety(c) for c in picked}:
            take(cfg)
    for cfg in ranked:
        take(cfg)
    order = {c: i for i, c in enumerate(ranked)}
    picked.sort(key=lambda c: order[c])
    return tuple(picked + anchors + extra)


def _reduce_apart_twins(
    timed: list[tuple[float, GemmConfig]],
    m: int,
    n: int,
    k: int,
    in_bytes: int,
    out_bytes: int,
    dev: KernelTarget,
) -> list[GemmConfig]:
    """Up to REDUCE_APART_CANDIDATES split-K configs of the modelled space with their partials
    summed by a second launch (gemm_reduce_kernel.py), the best modelled of distinct tiles, only
    where the model prices them below the best one-launch config it ranks (stream-K configs and
    the anchors aside). They ride along as stream-K
    does: the ranking and the untuned default stay as they were.

    Session 82 offered them within 2x of the best on an H200 (27 shapes): they won only where the
    one-launch sum is long (Llama-3.1-405B's N 2304, K 16384: 128x256 / 256x128 split 7 at M 256,
    tuner times 1.30x their one-launch twins, 1.16x the best one-launch config; 1.09x at M 128),
    and the model priced them below the best one-launch config at exactly those two and two
    ties (1.00-1.03 modelled, 0.92 and 1.00 measured); at the other 23 it had them 0.3-17%
    slower, and they took 2-46% longer than the best one-launch candidate there
    (results/h200/_logs/session82/tune-apart-s82.txt)."""
    best = min((t for t, _ in timed), default=0.0)
    apart = [replace(c, reduce_apart=True) for _, c in timed if c.split_k > 1]
    twins = sorted(
        ((estimate_seconds(c, m, n, k, in_bytes, out_bytes, dev), c) for c in apart),
        key=lambda tc: tc[0],
    )
    out: list[GemmConfig] = []
    for t, cfg in twins:
        tile = (cfg.block_m, cfg.block_n)
        if len(out) < REDUCE_APART_CANDIDATES and t < best:
            if all((c.block_m, c.block_n) != tile for c in out):
                out.append(cfg)
    return out


def interpreter_pick(rung: str, m: int, n: int, k: int, in_bytes: int) -> GemmConfig:
    """Deterministic small config for TRITON_INTERPRET, with split-K when the heuristic wants it."""
    dev = kernel_target(None)
    cfg = interpreter_config(m, in_bytes)
    if rung == "no-tensor-cores":
        cfg = replace(cfg, block_k=16 if in_bytes == 1 else 8, tensor_cores=False)
    cfg = replace(cfg, split_k=split_k_choices(cfg, m, n, k, dev)[-1])
    return apply_rung(cfg, rung)
