"""What the attention launchers try: per-vendor config spaces for prefill and decode with their
prune predicates (shared memory / LDS budgets, padding), and the split-KV count for decode.

attention_prefill.py and attention_decode.py pick from these lists (attention_tune.py times
them on a GPU); this module holds no kernel and reads no device.
"""

from __future__ import annotations

import math
from typing import Any

# Largest dynamic shared memory one CTA may use on sm_90 (H100/H200): 227 KiB.
SM90_SMEM_BYTES = 232448
MAX_SPLITS = 64  # KV splits per (sequence, KV head) at most
# LDS per workgroup on CDNA3 (MI300): 64 KiB.
GFX942_LDS_BYTES = 65536


def next_pow2(x: int) -> int:
    return 1 << max(0, math.ceil(math.log2(max(1, x))))


# ----------------------------------------------------------------------------------------------
# Prefill config space
# ----------------------------------------------------------------------------------------------


def _cfg(block_m: int, block_n: int, num_warps: int, num_stages: int, **options: Any) -> dict:
    return dict(
        BLOCK_M=block_m,
        BLOCK_N=block_n,
        num_warps=num_warps,
        num_stages=num_stages,
        options=options,
    )


def get_cuda_prefill_configs(head_dim: int) -> list[dict]:
    """sm_90 candidates, best guess first. One 128-row Q tile per CTA feeds two warpgroups
    (num_warps 8) of wgmma m64; K/V tiles are multi-buffered by TMA, so stages are bounded by
    the 227 KiB of shared memory, not by registers."""
    # Single-stage candidates too: on the H200 (b4 s4096 D128 bf16) the no-pipeline rung beat
    # every multi-stage config here (470 vs 433 TFLOP/s): the TMA loads already run ahead of the
    # math, and extra stages only cost shared memory and occupancy.
    # Two CTAs per SM: with registers capped at 128 per thread (maxnreg), two 8-warp CTAs fit
    # the 64K register file, so one CTA's softmax overlaps the other's wgmma (what FA3 gets by
    # ping-pong scheduling within one CTA). sm_90 AOT, no spills: D128 128x64 s2 128 regs and
    # 96 KiB shared, s1 127 regs and 48 KiB; D64 128x64 s3 122 regs and 65 KiB. (128x128 tiles
    # spill under the cap; Triton 3.6's tl.range(warp_specialize=True) leaves this loop as it is.)
    # FA3's intra-warpgroup overlap cannot be written in Triton either: a KV loop that issues
    # the next tile's Q K^T before this tile's softmax (scores carried one iteration) compiled
    # (3.9, sm_90 AOT, 128x64 D128) to a wgmma.wait_group 0 right after that score wgmma, so
    # the softmax still waits for it; only an accumulator carried into its own dot stays async.
    two_per_sm = dict(maxnreg=128)
    if head_dim <= 64:
        return [
            _cfg(128, 128, 8, 3),
            _cfg(128, 64, 8, 4),
            _cfg(128, 128, 4, 3),
            _cfg(64, 64, 4, 4),
            _cfg(64, 64, 4, 1),
            _cfg(128, 128, 8, 1),
            _cfg(128, 64, 8, 3, **two_per_sm),
        ]
    if head_dim <= 128:
        return [
            _cfg(128, 128, 8, 2),
            _cfg(128, 64, 8, 3),
            _cfg(128, 64, 8, 4),
            _cfg(128, 128, 8, 3),
            _cfg(64, 64, 4, 3),
            # The 64x64 4-warp tile won the tuning of both the full rung (3 stages, 460 TFLOP/s)
            # and the no-pipeline rung (1 stage, 487) on the H200 (ladder-r2, b4 s4096 D128):
            # its single- and two-stage forms are candidates of the full rung too.
            _cfg(64, 64, 4, 2),
            _cfg(64, 64, 4, 1),
            _cfg(128, 128, 8, 1),
            _cfg(128, 64, 8, 1),
            _cfg(128, 64, 8, 2, **two_per_sm),
            _cfg(128, 64, 8, 1, **two_per_sm),
        ]
    # head_dim 256: the fp32 accumulator alone is 128 regs/thread at 128x256 on 8 warps, so
    # K/V tiles stay narrow (64) and only two stages fit beside the 64 KiB Q tile.
    return [_cfg(128, 64, 8, 2), _cfg(64, 64, 4, 2), _cfg(128, 32, 8, 3)]


def get_hip_prefill_configs(head_dim: int) -> list[dict]:
    """CDNA candidates: no TMA; Q, the fp32 accumulator and the scores share the 256 VGPRs a
    wave may address (Triton allocates no AGPRs), K/V go through the 64 KiB LDS. waves_per_eu 2
    keeps that cap and lets two waves share each SIMD to hide the exp/max latency."""
    # KV tiles 32 wide at head_dim <= 128: 64-wide ones used 236-256 VGPRs under Triton 3.6
    # and spilled under 3.9's newer LLVM (AOT, gfx942 and gfx90a). 32 wide, no rung spills
    # under either (bf16/fp16, D64/D128, causal or not); the tightest, 128 rows on 4 waves
    # pipelined, peaks at 242 and spills 1-2 VGPRs only as q-reload on gfx90a under 3.9.
    if head_dim <= 128:
        return [
            _cfg(128, 32, 8, 2, waves_per_eu=2),
            _cfg(128, 32, 4, 1, waves_per_eu=2),
            _cfg(128, 32, 4, 2, waves_per_eu=2),
            _cfg(64, 32, 4, 2, waves_per_eu=2),
        ]
    return [_cfg(64, 32, 4, 2), _cfg(128, 32, 8, 1), _cfg(64, 64, 4, 1)]


def get_interpret_prefill_configs(head_dim: int) -> list[dict]:
    """One small config for the CPU interpreter; BLOCK_M != BLOCK_N so the causal diagonal
    spans several KV tiles and both loop halves run."""
    return [_cfg(32, 16, 4, 1)]


def prefill_smem_bytes(
    cfg: dict, head_dim: int, elem_bytes: int, q_reload: bool, backend: str = "cuda"
) -> int:
    """Upper estimate of shared memory (LDS on AMD) for one CTA. sm_90: the Q tile
    (num_stages buffers when reloaded in the loop) plus num_stages K and V tiles; the TMA
    store reuses a freed buffer. CDNA: Q stays in VGPRs and the stream pipeliner keeps
    num_stages - 1 K/V buffers in LDS (a reloaded Q is staged through LDS too: Triton 3.9
    does, 3.6 loads it straight into VGPRs), plus the [BLOCK_M, BLOCK_N] P tile, which moves
    from the MFMA result layout to the second dot's operand layout through LDS; after the
    loop the output tile takes the same way to the store layout, reusing that space."""
    tile = head_dim * elem_bytes
    if backend == "hip":
        bufs = max(1, cfg["num_stages"] - 1)
        q = bufs * cfg["BLOCK_M"] * tile if q_reload else 0
        loop = q + 2 * bufs * cfg["BLOCK_N"] * tile + cfg["BLOCK_M"] * cfg["BLOCK_N"] * elem_bytes
        return max(loop, cfg["BLOCK_M"] * tile)
    q_bufs = cfg["num_stages"] if q_reload else 1
    return q_bufs * cfg["BLOCK_M"] * tile + 2 * cfg["num_stages"] * cfg["BLOCK_N"] * tile


def keep_prefill_config(
    cfg: dict, target: tuple[str, Any], head_dim: int, elem_bytes: int, q_reload: bool, seq_q: int
) -> bool:
    """Prune predicate: drop configs that overflow shared memory/LDS or whose Q tile is mostly
    padding (a 128-row tile for a 40-row prompt wastes 2/3 of the tensor-core work)."""
    backend = target[0]
    if backend == "interpret":
        return True
    limit = SM90_SMEM_BYTES if backend == "cuda" else GFX942_LDS_BYTES
    if prefill_smem_bytes(cfg, head_dim, elem_bytes, q_reload, backend) > limit:
        return False
    if cfg["BLOCK_M"] > 64 and seq_q <= 64:
        return False
    return True


def prefill_configs(
    target: tuple[str, Any], head_dim: int, elem_bytes: int, rung: str, seq_q: int
) -> list[dict]:
    """The candidate list for one prefill problem and ladder rung, pruned, best guess first."""
    backend = target[0]
    if backend == "interpret":
        cands = get_interpret_prefill_configs(head_dim)
    elif backend == "hip":
        cands = get_hip_prefill_configs(head_dim)
    else:
        cands = get_cuda_prefill_configs(head_dim)
    q_reload = rung == "q-reload"
    if rung == "no-pipeline":
        # One buffer per operand: every K/V load is waited on before its dot issues.
        cands = [dict(c, num_stages=1) for c in cands]
    elif rung == "reg-stage":
        # One shared buffer per operand; the wait is hidden by the rung's own prefetch of the
        # next K/V tile into registers. Those registers sit beside the fp32 accumulator: with
        # 128-wide K/V tiles the D128 kernel spilled 1 KB (sm_90 AOT), so at most 64 (32 at D256).
        width = 32 if head_dim > 128 else 64
        cands = [dict(c, num_stages=1, BLOCK_N=min(c["BLOCK_N"], width)) for c in cands]
    elif q_reload and backend == "cuda":
        # A reloaded Q is pipelined like K/V, so it takes num_stages buffers: keep stages low.
        cands = [dict(c, num_stages=min(c["num_stages"], 2)) for c in cands]
    elif rung == "no-tma" and backend == "cuda" and head_dim > 128:
        # cp.async addresses live in registers beside the 128-register fp32 accumulator: with
        # 64-wide K/V tiles the D256 kernel sat at the 255 cap (sm_90 AOT) and spilled under
        # Triton 3.9; 32 wide it uses 246-251 and spills under neither 3.6 nor 3.9.
        cands = [dict(c, BLOCK_N=min(c["BLOCK_N"], 32)) for c in cands]
    kept = [
        c for c in cands if keep_prefill_config(c, target, head_dim, elem_bytes, q_reload, seq_q)
    ]
    kept = kept or cands[-1:]
    unique: list[dict] = []
    for c in kept:
        if c not in unique:
            unique.append(c)
    return unique


# ----------------------------------------------------------------------------------------------
# Decode config space
# ----------------------------------------------------------------------------------------------


def get_cuda_decode_configs(head_dim: int) -> list[dict]:
    """sm_90 candidates for the split-KV kernel. Decode is HBM-bound: what matters is bytes in
    flight per SM, i.e. BLOCK_N x stages x CTAs per SM; 4 warps keep register use low so two or
    more CTAs fit per SM. BLOCK_M is set per problem from the GQA group size."""
    if head_dim <= 128:
        # 64 x 6 stages was the fastest of 154 (config, split count) pairs at batch 16, KV 4k,
        # pages of 256 on two H100s, 1.3-1.9% ahead of the tuner's pick from the other four
        # (scripts/decode_probe.py; results/h100/_logs/session46/decode_probe*.txt). On an
        # H200 there, with deeper configs in the grid, 128 x 6 and 64 x 10 (whole KV) were
        # 6.0% and 5.1% ahead of the joint search's pick (results/h200/_logs/session47).
        return [
            _cfg(16, 64, 4, 3),
            _cfg(16, 64, 4, 4),
            _cfg(16, 128, 4, 2),
            _cfg(16, 32, 4, 4),
            _cfg(16, 64, 4, 6),
            _cfg(16, 128, 4, 6),
            _cfg(16, 64, 4, 10),
        ]
    return [_cfg(16, 64, 4, 2), _cfg(16, 32, 4, 3), _cfg(16, 64, 8, 3)]


def get_hip_decode_configs(head_dim: int) -> list[dict]:
    """CDNA3 candidates: 64-lane wavefronts; LDS-limited double buffering."""
    return [_cfg(16, 64, 4, 2, waves_per_eu=2), _cfg(16, 32, 4, 2, waves_per_eu=2)]


def get_interpret_decode_configs(head_dim: int) -> list[dict]:
    """CPU interpreter: BLOCK_N 32, so page size 16 takes the per-row gather path and page
    size 64 the one-page-per-tile path."""
    return [_cfg(16, 32, 4, 1)]


def sm90_decode_smem_bytes(cfg: dict, head_dim: int, elem_bytes: int) -> int:
    """What the tuner prices a Hopper decode config's shared memory at: Q, num_stages K/V tiles
    rounded up to an even count (at least 4), and 8 KB.

    Triton's pipeliner keeps fewer K/V tiles than the 2 x num_stages this model charged before,
    and how many depends on BLOCK_M. Compiled for sm_90 (D 128, bf16):
      - 16 rows: 2 x floor((num_stages - 1) / 2) tiles (at least 2) and 6-8 KB. Triton 3.6, a
        128-wide tile: 270 KB at 10 stages, 336 KB at 12, 467 KB at 16; a 64-wide one 236 KB at 16
        (the compile errors of an H200 probe, results/h200/_logs/session47). Triton 3.9: a
        64-wide tile 39 KB at 3-4 stages, 72 KB at 6, 137 KB at 10; a 128-wide one 74 KB at 2,
        139 KB at 6, 205 KB at 7.
      - 64 rows (GQA 8 x 8 query tokens), Triton 3.9: Q, num_stages tiles rounded up to even (at
        least 4) and about 1 KB: a 128-wide tile 147 KB at 2 stages, 214 KB at 6, 280 KB at 7.
    This price bounds both (a test compiles every candidate at 16 and 64 rows and checks it). The
    old price kept the tuner from the fastest pairs at batch 16, KV 4k on the H200 (128 x 6 and
    64 x 10 whole, 5-6% ahead of its pick)."""
    tiles = max(4, cfg["num_stages"] + cfg["num_stages"] % 2)
    return (cfg["BLOCK_M"] + tiles * cfg["BLOCK_N"]) * head_dim * elem_bytes + 8192


def keep_decode_config(
    cfg: dict, target: tuple[str, Any], head_dim: int, elem_bytes: int, page_size: int | None
) -> bool:
    """Prune predicate: the pipelined K/V tiles must fit shared memory/LDS next to Q."""
    backend = target[0]
    if backend == "interpret":
        return True
    if backend == "hip":  # Q in VGPRs, num_stages - 1 K/V buffers in LDS
        tile = head_dim * elem_bytes
        return 2 * max(1, cfg["num_stages"] - 1) * cfg["BLOCK_N"] * tile <= GFX942_LDS_BYTES
    return sm90_decode_smem_bytes(cfg, head_dim, elem_bytes) <= SM90_SMEM_BYTES


def decode_configs(
    target: tuple[str, Any],
    head_dim: int,
    elem_bytes: int,
    rung: str,
    block_m: int,
    page_size: int | None,
) -> list[dict]:
    """The candidate list for one decode problem and rung; BLOCK_M filled in, best guess first."""
    backend = target[0]
    if backend == "interpret":
        cands = get_interpret_decode_configs(head_dim)
    elif backend == "hip":
        cands = get_hip_decode_configs(head_dim)
    else:
        cands = get_cuda_decode_configs(head_dim)
    if backend == "cuda" and page_size in (16, 32):
        # Small pages: a page-sized tile is one contiguous run (one block-table lookup, no
        # gather); deep pipelining makes up for the small tiles.
        cands.append(_cfg(16, page_size, 4, 6))
    cands = [dict(c, BLOCK_M=block_m) for c in cands]
    if rung == "no-pipeline":
        cands = [dict(c, num_stages=1) for c in cands]
    kept = [c for c in cands if keep_decode_config(c, target, head_dim, elem_bytes, page_size)]
    kept = kept or cands[-1:]
    unique: list[dict] = []
    for c in kept:
        if c not in unique:
            unique.append(c)
    return unique


# ----------------------------------------------------------------------------------------------
# Split-KV heuristic
# ----------------------------------------------------------------------------------------------


def split_candidates(programs: int, max_kv_len: int, block_n: int, sms: int) -> list[int]:
    """Split counts worth timing: choose_num_splits for 2, 1, 4 and 8 resident CTAs per SM
    (occupancy is only known after compiling), then the same with a floor of 2 and 1 KV tiles
    per split for 2 and 1 CTAs: at small batch the 4-tile floor can cap the splits below one
    wave (batch 1, 8 KV heads, KV 4k in 128-wide tiles: 8 splits, 64 programs on 132 SMs, and
    own decode at 0.84x FlashInfer on the H200), where shorter splits fill the GPU; then each
    of those half again."""
    picks = [choose_num_splits(programs, max_kv_len, block_n, sms, c) for c in (2, 1, 4, 8)]
    picks += [
        choose_num_splits(programs, max_kv_len, block_n, sms, c, min_tiles_per_split=t)
        for t in (2, 1)
        for c in (2, 1)
    ]
    # Half again each split count (2 -> 3, 4 -> 6): at batch 16, KV 4k, pages of 16, 6 splits
    # beat the tuner's 2 by 1.5-2.2% on two H100s (scripts/decode_probe.py, session 46).
    # Kept only where every split gets work: 6 splits of 8 tiles are 4 of 2 tiles and 2 empty.
    tiles = max(1, max_kv_len // block_n)
    half_again = [p + p // 2 for p in picks if p >= 2]
    picks += [
        s for s in half_again if s <= min(MAX_SPLITS, tiles) and -(-tiles // -(-tiles // s)) == s
    ]
    return list(dict.fromkeys(picks))


def choose_num_splits(
    programs: int,
    max_kv_len: int,
    block_n: int,
    sms: int,
    ctas_per_sm: int = 2,
    max_splits: int = MAX_SPLITS,
    min_tiles_per_split: int = 4,
) -> int:
    """KV splits for a decode grid of `programs` (batch x kv heads x M blocks) programs.

    Decode is HBM-bound, so what counts is keeping every SM streaming: take the fewest splits
    whose programs fill >= 90% of the sms x ctas_per_sm slots in whole waves (a partial last
    wave idles SMs while the slowest split finishes). Each split keeps >= min_tiles_per_split
    KV tiles, so its fixed cost (Q load, partial write, reduction) stays small.
    """
    cap = max(1, min(max_splits, max_kv_len // (block_n * min_tiles_per_split)))
    slots = sms * ctas_per_sm
    best, best_score = 1, 0.0
    for s in range(1, cap + 1):
        total = programs * s
        score = total / (math.ceil(total / slots) * slots)
        if score >= 0.9:
            return s
        if score > best_score + 1e-9:
            best, best_score = s, score
    return best
