"""Split-K and stream-K planning for the own Triton GEMM: when to split a tile's K range, how
stream-K shares the last waves out, and how the partial tiles are reduced.

Decode-sized and mid-sized M leave fewer output tiles than SMs (or a partial last wave);
splitting K puts a program on every SM at the price of fp32 partials and one reduction per tile.
gemm_kernel.py runs the plans made here; with GemmConfig.reduce_apart the reduction is a second
launch over every SM instead (gemm_reduce_kernel.py), which splitk_reduce_rows does not size.
"""

from __future__ import annotations

from dataclasses import dataclass

from .gemm_configs import GemmConfig
from .gemm_target import KernelTarget

# Split-K reduction: fp32 loads one thread may hold in flight across all partials of a chunk.
# The accumulator is dead by then (already stored as this unit's partial), so that much of the
# register file is free; sm_90 AOT of the split-K configs shows no spills at this budget.
REDUCE_REGS = 64
REDUCE_MIN_ELEMS = 2048  # the chunk before the budget existed


def splitk_reduce_rows(block_m: int, block_n: int, split_k: int, num_warps: int) -> int:
    """Rows per chunk of the split-K reduction: the largest power of two whose SPLIT_K partial
    chunks fit REDUCE_REGS loads per thread (at least REDUCE_MIN_ELEMS elements, at most the
    tile). Each chunk is one L2 round trip on the last unit's critical path, so fewer, wider
    chunks shorten the tail: 128x256 on 8 warps at split 3 walks 8 chunks, not 16."""
    budget = max(REDUCE_REGS * 32 * num_warps // max(split_k, 1), REDUCE_MIN_ELEMS)
    rows = max(budget // block_n, 1)
    return min(block_m, 1 << (rows.bit_length() - 1))


@dataclass(frozen=True)
class StreamKPlan:
    """How a stream-K launch divides the work (see gemm_kernel.py's _stream_k_share)."""

    num_programs: int
    dp_tiles: int  # whole tiles, in full waves of num_programs
    sk_tiles: int  # tiles whose K iterations are shared out evenly
    max_parts: int  # most programs sharing one tile (workspace parts per tile)
    shared_tiles: int  # sk tiles touched by more than one program (those write partials)


def stream_k_plan(tiles: int, k_tiles: int, programs: int) -> StreamKPlan:
    """Split `tiles` output tiles of `k_tiles` iterations over a persistent grid of `programs`.

    With at least one full wave, the last full wave and the partial one are shared out (each
    program then covers 1-2 tiles' worth of iterations, so partial tiles stay few); with less
    than a wave, all of them. The first and last program of a tile follow from where each
    program's range starts: p * total // programs."""
    full, rest = divmod(tiles, programs)
    sk = 0 if rest == 0 else (tiles if full == 0 else rest + programs)
    total = sk * k_tiles
    programs = min(programs, total) if full == 0 else programs
    max_parts, shared = 1, 0
    for t in range(sk):
        first = -(-(t * k_tiles + 1) * programs // total) - 1
        last = -(-(t + 1) * k_tiles * programs // total) - 1
        max_parts = max(max_parts, last - first + 1)
        shared += last > first
    return StreamKPlan(programs, tiles - sk, sk, max_parts, shared)


def split_k_choices(cfg: GemmConfig, m: int, n: int, k: int, dev: KernelTarget) -> list[int]:
    """Split factors worth timing: 1, and the power of two that fills one wave of programs."""
    tiles = -(-m // cfg.block_m) * -(-n // cfg.block_n)
    wave = dev.num_sms * cfg.programs_per_sm
    if tiles * 2 > wave:
        return [1]  # enough output tiles already; split-K would only add partial traffic
    k_tiles = -(-k // cfg.block_k)
    split = 1
    while split * 2 * tiles <= wave and split * 2 <= 16 and split * 4 <= k_tiles:
        split *= 2
    return [1, split] if split > 1 else [1]


STREAM_K_BELOW_FILL = 0.9  # offer stream-K when whole tiles leave more than 10% of a wave idle


def offers_stream_k(cfg: GemmConfig, m: int, n: int, k: int, dev: KernelTarget) -> bool:
    """Whether a stream-K twin of `cfg` is worth timing: a persistent split-1 config whose whole
    tiles leave SMs idle in the last wave, with K iterations to share (>= 2 per program)."""
    if not cfg.persistent or cfg.split_k != 1 or cfg.stream_k or not cfg.tensor_cores:
        return False
    tiles = -(-m // cfg.block_m) * -(-n // cfg.block_n)
    wave = dev.num_sms * cfg.programs_per_sm
    fill = tiles / (-(-tiles // wave) * wave)
    return fill < STREAM_K_BELOW_FILL and tiles * -(-k // cfg.block_k) >= 2 * wave
