"""Own Triton GEMM: C[M, N] = A[M, K] @ B[K, N], fp32 accumulation, one kernel for every rung.

The "full" kernel turns on every fast path the device has; each ladder rung removes exactly
one of them, so the gap between a rung and "full" is what that feature is worth on the hardware.

| rung            | removes                  | why it matters on hardware                      |
|-----------------|--------------------------|-------------------------------------------------|
| full            | nothing (`own-triton`)   | reference rung                                  |
| no-tma          | tensor descriptors (TMA) | sm_90 TMA moves a whole tile per instruction,   |
|                 |                          | no address registers; pointer loads (cp.async)  |
|                 |                          | spend registers and issue slots on addresses    |
|                 |                          | and masks                                       |
| no-pipeline     | software pipelining      | num_stages=1: each K step waits for its own     |
|                 | (and warp specialization)| global->shared copy, exposing HBM/L2 latency    |
| not-persistent  | persistent tile loop     | one program per tile: per-CTA launch/prologue   |
|                 |                          | cost, tail waves, no overlap of a tile's        |
|                 |                          | epilogue with the next tile's loads             |
| no-splitk       | split-K and stream-K     | decode-sized M has fewer output tiles than SMs: |
|                 |                          | without splitting K most SMs idle while the     |
|                 |                          | weights stream from HBM; mid M leaves a partial |
|                 |                          | last wave of tiles                              |
| no-tensor-cores | tl.dot (MMA/WGMMA/MFMA)  | broadcast multiply + in-thread sum = FFMA only; |
|                 |                          | FP32 FFMA peak is ~1/15 of dense bf16 MMA peak  |

Where a feature does not exist (TMA before sm_90 and on AMD) its rung equals "full";
config["tma_fallback"] says why. Features the operands forbid (unaligned strides) are reported
the same way rather than silently dropped.

Scheduling: work units are (output tile, K split) pairs in grouped order (GROUP_M rows of tiles
share B's columns while they are in L2). With SPLIT_K > 1 each unit stores an fp32 partial; the
last unit to finish a tile (an atomic counter per tile) sums the partials in split order, so the
result is deterministic and one launch suffices. That unit also resets the counter.

tf32 with a row-major B (transpose_b): wgmma reads 32-bit B only K-major, so such a B tile is
re-laid out through registers every K step (AOT code; the H200 ran tf32 nn problems at 19-20% of
the tf32 peak, this the suspected cause); the config copies B K-major once per call before the
kernel instead, inside the timed call.

Stream-K (persistent configs with stream_k): when whole tiles would leave SMs idle in the last
wave (80 tiles of 128x256 on 132 SMs at M=256, N=10240), the tiles of all full waves but the last
run whole, and the K iterations of the rest are cut into one equal contiguous range per program
(gemm_split.stream_k_plan). A tile that one program covers is stored directly; a tile shared
by several takes the split-K path above, its parts numbered by program. Every SM then does the
same work. (Osama et al., "Stream-K", PPoPP 2023; CUTLASS ships it as a tile scheduler.)
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import torch
import triton
import triton.language as tl
from triton.tools.tensor_descriptor import TensorDescriptor

from .gemm_candidates import candidate_configs, interpreter_pick
from .gemm_configs import RUNGS, GemmConfig
from .gemm_operands import GemmOperands, check_operands, tma_support, transposes_b
from .gemm_split import splitk_reduce_rows, stream_k_plan
from .gemm_target import KernelTarget, interpreting, kernel_target
from .gemm_tune import reference, remember, tune_or_lookup

__all__ = ["RUNGS", "MatmulLaunch", "build_launch", "prepare_matmul"]


# fmt: off
@triton.jit
def _tile_coords(tile_id, num_pid_m, num_pid_n, GROUP_M: tl.constexpr):
    """Grouped order: GROUP_M consecutive tile rows walk N together so B stays in L2."""
    num_pid_in_group = GROUP_M * num_pid_n
    first_pid_m = (tile_id // num_pid_in_group) * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + (tile_id % num_pid_in_group) % group_size_m
    pid_n = (tile_id % num_pid_in_group) // group_size_m
    return pid_m, pid_n


@triton.jit
def _load_a(a, pid_m, k0, M, K, stride_am, stride_ak,
            BLOCK_M: tl.constexpr, BLOCK_K: tl.constexpr, TMA: tl.constexpr,
            EVEN_K: tl.constexpr):
    """[BLOCK_M, BLOCK_K] tile of A; rows >= M and columns >= K read as zero."""
    if TMA:
        tile = a.load([pid_m * BLOCK_M, k0])
    else:
        offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
        offs_k = k0 + tl.arange(0, BLOCK_K)
        mask = offs_m[:, None] < M
        if not EVEN_K:
            mask = mask & (offs_k[None, :] < K)
        tile = tl.load(a + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak,
                       mask=mask, other=0.0)
    return tile


@triton.jit
def _load_b(b, pid_n, k0, N, K, stride_bk, stride_bn,
            BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, TMA: tl.constexpr,
            B_IS_NK: tl.constexpr, EVEN_K: tl.constexpr):
    """[BLOCK_K, BLOCK_N] tile of B. A column-major B (B_IS_NK) is fetched as [N, K] rows and
    transposed as a shared-memory view: the K-major operand order wgmma reads natively."""
    if TMA:
        if B_IS_NK:
            tile = b.load([pid_n * BLOCK_N, k0]).T
        else:
            tile = b.load([k0, pid_n * BLOCK_N])
    else:
        offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
        offs_k = k0 + tl.arange(0, BLOCK_K)
        mask = offs_n[None, :] < N
        if not EVEN_K:
            mask = mask & (offs_k[:, None] < K)
        tile = tl.load(b + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn,
                       mask=mask, other=0.0)
    return tile


@triton.jit
def _mac(acc, a_tile, b_tile, USE_DOT: tl.constexpr, INPUT_PRECISION: tl.constexpr,
         UPCAST: tl.constexpr):
    """acc[BM, BN] += a_tile[BM, BK] @ b_tile[BK, BN] on tensor cores, or as FMAs."""
    if UPCAST or not USE_DOT:
        # UPCAST: the CPU interpreter computes garbage for bf16/fp16/fp8 dots; use fp32 there.
        a_tile = a_tile.to(tl.float32)
        b_tile = b_tile.to(tl.float32)
    if USE_DOT:
        acc = tl.dot(a_tile, b_tile, acc, input_precision=INPUT_PRECISION)
    else:
        # [BM, 1, BK] * [1, BN, BK] summed over the last axis: FFMA chains inside each thread.
        # (Summing a [BM, BK, BN] product over axis 1 instead is pattern-matched back into a
        # tl.dot by Triton's combine pass and would run on tensor cores after all.)
        acc += tl.sum(a_tile[:, None, :] * tl.trans(b_tile)[None, :, :], axis=2)
    return acc


@triton.jit
def _store_c(c, acc, pid_m, pid_n, M, N, stride_cm, stride_cn,
             BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, TMA: tl.constexpr,
             EPILOGUE_SUBTILE: tl.constexpr):
    """Cast the fp32 [BLOCK_M, BLOCK_N] accumulator to C's dtype and store its in-bounds part."""
    if TMA:
        if EPILOGUE_SUBTILE:
            # Two [BM, BN/2] halves: half the shared-memory staging buffer of the TMA store,
            # which is what lets 128x256 tiles keep a 4th pipeline stage.
            halves = tl.permute(tl.reshape(acc, (BLOCK_M, 2, BLOCK_N // 2)), (0, 2, 1))
            acc0, acc1 = tl.split(halves)
            c.store([pid_m * BLOCK_M, pid_n * BLOCK_N], acc0.to(c.dtype))
            c.store([pid_m * BLOCK_M, pid_n * BLOCK_N + BLOCK_N // 2], acc1.to(c.dtype))
        else:
            c.store([pid_m * BLOCK_M, pid_n * BLOCK_N], acc.to(c.dtype))
    else:
        offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
        offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
        mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
        tl.store(c + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn,
                 acc.to(c.dtype.element_ty), mask=mask)


@triton.jit
def _partial_epilogue(c, acc, ws_ptr, counter_ptr, slot, part, n_parts, pid_m, pid_n, scale,
                      M, N, stride_cm, stride_cn,
                      BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, MAX_PARTS: tl.constexpr,
                      HAS_SCALE: tl.constexpr, REDUCE_M: tl.constexpr):
    """One of the `n_parts` K ranges of an output tile is done: store its fp32 partial as part
    `part` of workspace slot `slot` ([MAX_PARTS, BLOCK_M, BLOCK_N] per slot, tile-local, so the
    store is whole and unmasked); the last of the tile's units to arrive sums every part in part
    order (deterministic) and writes C by pointers. Split-K and stream-K both end here."""
    tile_elems = BLOCK_M * BLOCK_N
    base = ws_ptr + slot * (MAX_PARTS * tile_elems)
    rows = tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    tl.store(base + part * tile_elems + rows[:, None] * BLOCK_N + cols[None, :], acc)
    # Every thread's partial must be issued before the counter says "done": a CTA barrier, then
    # an acq_rel atomic at GPU scope (release for our partial, acquire for the others').
    tl.debug_barrier()
    arrived = tl.atomic_add(counter_ptr + slot, 1, sem="acq_rel", scope="gpu")
    if arrived == n_parts - 1:
        # Reduce in REDUCE_M-row chunks (gemm_split.splitk_reduce_rows: as wide as a register
        # budget allows; summing whole tiles spilled). Each chunk is one L2 round trip on the
        # critical path; the part loop inside it is unrolled (sm_90 PTX: a chunk's loads are
        # issued back to back), parts beyond n_parts masked off.
        offs_n = pid_n * BLOCK_N + cols
        for r in range(0, BLOCK_M, REDUCE_M):
            chunk_rows = r + tl.arange(0, REDUCE_M)
            offs_rm = pid_m * BLOCK_M + chunk_rows
            rmask = (offs_rm[:, None] < M) & (offs_n[None, :] < N)
            chunk = base + chunk_rows[:, None] * BLOCK_N + cols[None, :]
            total = tl.zeros((REDUCE_M, BLOCK_N), dtype=tl.float32)
            for s in tl.static_range(MAX_PARTS):
                # A part past n_parts gets row bound 0, masking it whole. (Not `rmask & (s <
                # n_parts)`: Triton 3.9's interpreter broadcasts that scalar compare as int32
                # and rejects the mask; a block compare against a scalar stays boolean.)
                pmask = (offs_rm[:, None] < tl.where(s < n_parts, M, 0)) & (offs_n[None, :] < N)
                # .cg: read from L2, never from this SM's (non-coherent) L1.
                total += tl.load(chunk + s * tile_elems, mask=pmask, other=0.0,
                                 cache_modifier=".cg")
            if HAS_SCALE:
                total = total * scale
            tl.store(c + offs_rm[:, None] * stride_cm + offs_n[None, :] * stride_cn,
                     total.to(c.dtype.element_ty), mask=rmask)
        tl.atomic_xchg(counter_ptr + slot, 0)  # ready for the next launch


@triton.jit
def _gemm_unit(work_id, work_id_c, a, b, c, ws_ptr, counter_ptr, scale,
               M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
               BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
               GROUP_M: tl.constexpr, SPLIT_K: tl.constexpr, TMA_LOAD: tl.constexpr,
               TMA_STORE: tl.constexpr, B_IS_NK: tl.constexpr, USE_DOT: tl.constexpr,
               INPUT_PRECISION: tl.constexpr, HAS_SCALE: tl.constexpr, EVEN_K: tl.constexpr,
               EPILOGUE_SUBTILE: tl.constexpr, UPCAST: tl.constexpr, REDUCE_M: tl.constexpr):
    """One work unit: K range `work_id % SPLIT_K` of output tile `work_id // SPLIT_K`.

    `work_id_c` equals `work_id` but is a separate loop-carried value, so that after loop
    flattening the epilogue does not keep the prologue's index alive across pipeline stages."""
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    pid_m, pid_n = _tile_coords(work_id // SPLIT_K, num_pid_m, num_pid_n, GROUP_M=GROUP_M)
    k_tiles = tl.cdiv(K, BLOCK_K)
    k_per_split = tl.cdiv(k_tiles, SPLIT_K)
    k_begin = (work_id % SPLIT_K) * k_per_split
    k_end = min(k_begin + k_per_split, k_tiles)

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for ki in range(k_begin, k_end):
        k0 = ki * BLOCK_K
        a_tile = _load_a(a, pid_m, k0, M, K, stride_am, stride_ak,
                         BLOCK_M=BLOCK_M, BLOCK_K=BLOCK_K, TMA=TMA_LOAD, EVEN_K=EVEN_K)
        b_tile = _load_b(b, pid_n, k0, N, K, stride_bk, stride_bn,
                         BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, TMA=TMA_LOAD, B_IS_NK=B_IS_NK,
                         EVEN_K=EVEN_K)
        acc = _mac(acc, a_tile, b_tile,
                   USE_DOT=USE_DOT, INPUT_PRECISION=INPUT_PRECISION, UPCAST=UPCAST)

    tile_c = work_id_c // SPLIT_K
    pid_m, pid_n = _tile_coords(tile_c, num_pid_m, num_pid_n, GROUP_M=GROUP_M)
    if SPLIT_K == 1:
        if HAS_SCALE:
            acc = acc * scale
        _store_c(c, acc, pid_m, pid_n, M, N, stride_cm, stride_cn,
                 BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, TMA=TMA_STORE,
                 EPILOGUE_SUBTILE=EPILOGUE_SUBTILE)
    else:
        _partial_epilogue(c, acc, ws_ptr, counter_ptr, tile_c, work_id_c % SPLIT_K, SPLIT_K,
                          pid_m, pid_n, scale, M, N, stride_cm, stride_cn,
                          BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, MAX_PARTS=SPLIT_K,
                          HAS_SCALE=HAS_SCALE, REDUCE_M=REDUCE_M)


@triton.jit
def _stream_k_share(pid, num_programs, dp_tiles, sk_tiles, a, b, c, ws_ptr, counter_ptr, scale,
                    M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                    GROUP_M: tl.constexpr, TMA_LOAD: tl.constexpr, B_IS_NK: tl.constexpr,
                    USE_DOT: tl.constexpr, INPUT_PRECISION: tl.constexpr,
                    HAS_SCALE: tl.constexpr, EVEN_K: tl.constexpr, UPCAST: tl.constexpr,
                    MAX_PARTS: tl.constexpr, REDUCE_M: tl.constexpr):
    """This program's equal share of the K iterations of the last `sk_tiles` tiles.

    The sk_tiles x k_tiles iterations are cut into num_programs contiguous ranges; a range
    covers the end of one tile, maybe whole tiles, and the start of another. A tile touched by
    one program is stored directly; one shared by several goes through _partial_epilogue, its
    parts numbered by program. Every SM gets the same work whatever the tile count: no tail."""
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    k_tiles = tl.cdiv(K, BLOCK_K)
    total = sk_tiles * k_tiles
    lo = pid * total // num_programs
    hi = (pid + 1) * total // num_programs
    t_end = tl.where(hi > lo, tl.cdiv(hi, k_tiles), lo // k_tiles)
    for t in range(lo // k_tiles, t_end):
        t0 = t * k_tiles
        pid_m, pid_n = _tile_coords(dp_tiles + t, num_pid_m, num_pid_n, GROUP_M=GROUP_M)
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for ki in range(max(lo, t0) - t0, min(hi, t0 + k_tiles) - t0):
            k0 = ki * BLOCK_K
            a_tile = _load_a(a, pid_m, k0, M, K, stride_am, stride_ak,
                             BLOCK_M=BLOCK_M, BLOCK_K=BLOCK_K, TMA=TMA_LOAD, EVEN_K=EVEN_K)
            b_tile = _load_b(b, pid_n, k0, N, K, stride_bk, stride_bn,
                             BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, TMA=TMA_LOAD, B_IS_NK=B_IS_NK,
                             EVEN_K=EVEN_K)
            acc = _mac(acc, a_tile, b_tile,
                       USE_DOT=USE_DOT, INPUT_PRECISION=INPUT_PRECISION, UPCAST=UPCAST)
        # Programs covering the tile's first and last iteration (range p starts at
        # p * total // num_programs): part = pid - first, parts = last - first + 1.
        first = tl.cdiv((t0 + 1) * num_programs, total) - 1
        last = tl.cdiv((t0 + k_tiles) * num_programs, total) - 1
        if first == last:
            if HAS_SCALE:
                acc = acc * scale
            # C is a pointer in stream-K launches (build_launch makes no C descriptor for them).
            _store_c(c, acc, pid_m, pid_n, M, N, stride_cm, stride_cn,
                     BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, TMA=False, EPILOGUE_SUBTILE=False)
        else:
            _partial_epilogue(c, acc, ws_ptr, counter_ptr, t, pid - first, last - first + 1,
                              pid_m, pid_n, scale, M, N, stride_cm, stride_cn,
                              BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, MAX_PARTS=MAX_PARTS,
                              HAS_SCALE=HAS_SCALE, REDUCE_M=REDUCE_M)


@triton.jit
def _gemm_kernel(
    # pointers (A, B, C are host TensorDescriptors when TMA_LOAD / TMA_STORE)
    a, b, c, a_scale_ptr, b_scale_ptr, ws_ptr, counter_ptr,
    # sizes (sk_tiles: tiles shared out by stream-K; the first tiles - sk_tiles go whole)
    M, N, K, num_programs, sk_tiles,
    # strides, in elements (unused by the descriptor paths)
    stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
    # meta-parameters
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
    GROUP_M: tl.constexpr, SPLIT_K: tl.constexpr, PERSISTENT: tl.constexpr,
    TMA_LOAD: tl.constexpr, TMA_STORE: tl.constexpr, B_IS_NK: tl.constexpr,
    USE_DOT: tl.constexpr, INPUT_PRECISION: tl.constexpr, HAS_SCALE: tl.constexpr,
    EVEN_K: tl.constexpr, EPILOGUE_SUBTILE: tl.constexpr, WARP_SPECIALIZE: tl.constexpr,
    UPCAST: tl.constexpr, REDUCE_M: tl.constexpr, STREAM_K: tl.constexpr,
    MAX_PARTS: tl.constexpr,
):
    """C[M, N] = scale * A[M, K] @ B[K, N]; grid = num_programs (persistent) or every unit."""
    pid = tl.program_id(axis=0)
    num_units = tl.cdiv(M, BLOCK_M) * tl.cdiv(N, BLOCK_N) * SPLIT_K
    scale = 1.0
    if HAS_SCALE:
        scale = tl.load(a_scale_ptr) * tl.load(b_scale_ptr)
    if STREAM_K:
        # Whole tiles first, in full waves of the persistent grid (the flattened data-parallel
        # loop); then every program takes an equal share of the remaining tiles' K iterations.
        dp_tiles = num_units - sk_tiles
        work_id_c = pid - num_programs
        for work_id in tl.range(pid, dp_tiles, num_programs, flatten=True):
            work_id_c += num_programs
            # Whole tiles, one K range each; C is a pointer (no C descriptor for stream-K).
            _gemm_unit(work_id, work_id_c, a, b, c, ws_ptr, counter_ptr, scale,
                       M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                       BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, GROUP_M=GROUP_M,
                       SPLIT_K=1, TMA_LOAD=TMA_LOAD, TMA_STORE=False, B_IS_NK=B_IS_NK,
                       USE_DOT=USE_DOT, INPUT_PRECISION=INPUT_PRECISION, HAS_SCALE=HAS_SCALE,
                       EVEN_K=EVEN_K, EPILOGUE_SUBTILE=False, UPCAST=UPCAST, REDUCE_M=REDUCE_M)
        _stream_k_share(pid, num_programs, dp_tiles, sk_tiles, a, b, c, ws_ptr, counter_ptr,
                        scale, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm,
                        stride_cn,
                        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, GROUP_M=GROUP_M,
                        TMA_LOAD=TMA_LOAD, B_IS_NK=B_IS_NK, USE_DOT=USE_DOT,
                        INPUT_PRECISION=INPUT_PRECISION, HAS_SCALE=HAS_SCALE, EVEN_K=EVEN_K,
                        UPCAST=UPCAST, MAX_PARTS=MAX_PARTS, REDUCE_M=REDUCE_M)
    elif PERSISTENT:
        work_id_c = pid - num_programs
        # Flattening fuses the tile loop with the K loop, so the next tile's loads are issued
        # while this tile's epilogue runs; split-K's barrier + atomic epilogue stays unflattened.
        for work_id in tl.range(pid, num_units, num_programs, flatten=SPLIT_K == 1,
                                warp_specialize=WARP_SPECIALIZE):
            work_id_c += num_programs
            _gemm_unit(work_id, work_id_c, a, b, c, ws_ptr, counter_ptr, scale,
                       M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                       BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, GROUP_M=GROUP_M,
                       SPLIT_K=SPLIT_K, TMA_LOAD=TMA_LOAD, TMA_STORE=TMA_STORE, B_IS_NK=B_IS_NK,
                       USE_DOT=USE_DOT, INPUT_PRECISION=INPUT_PRECISION, HAS_SCALE=HAS_SCALE,
                       EVEN_K=EVEN_K, EPILOGUE_SUBTILE=EPILOGUE_SUBTILE, UPCAST=UPCAST,
                       REDUCE_M=REDUCE_M)
    else:
        _gemm_unit(pid, pid, a, b, c, ws_ptr, counter_ptr, scale,
                   M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                   BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, GROUP_M=GROUP_M,
                   SPLIT_K=SPLIT_K, TMA_LOAD=TMA_LOAD, TMA_STORE=TMA_STORE, B_IS_NK=B_IS_NK,
                   USE_DOT=USE_DOT, INPUT_PRECISION=INPUT_PRECISION, HAS_SCALE=HAS_SCALE,
                   EVEN_K=EVEN_K, EPILOGUE_SUBTILE=EPILOGUE_SUBTILE, UPCAST=UPCAST,
                   REDUCE_M=REDUCE_M)
# fmt: on


@dataclass
class MatmulLaunch:
    """A prepared GEMM: calling it only launches (no allocation, tuning or sync); returns `out`.

    It satisfies harness_kernels.launch.Launch."""

    out: torch.Tensor  # [M, N]
    # GemmConfig fields (block_m/n/k, num_warps, num_stages, group_m, split_k, programs_per_sm,
    # persistent, tensor_cores, warp_specialize, matrix_instr_nonkdim, waves_per_eu) plus what
    # the operands allowed (tma, tma_store, tma_fallback, epilogue_subtile), the grid
    # (num_programs, units), input_precision, fp8_fast_accum, b_layout, arch, device_name,
    # variant (the rung: a key recorded in every row's provider_config, so it keeps its name),
    # tuned, candidates_tried (and tuned_ms, candidates_rejected after tuning).
    config: dict[str, Any]
    _grid: tuple[int, int, int]
    _args: tuple  # pointers, sizes and strides, in _gemm_kernel's order
    _constexprs: dict[str, Any]  # its meta-parameters, by name
    _options: dict[str, Any] = field(default_factory=dict)
    _runner: Any = None  # CompiledKernel[grid], once bind_compiled() has compiled it
    _runner_args: tuple = ()  # positional_args(), kept with the runner
    _prologue: Any = None  # work each call does before the kernel (transpose_b's copy of B)

    def __call__(self) -> torch.Tensor:
        if self._prologue is not None:
            self._prologue()
        if self._runner is not None:
            # Same launch the JIT would make, minus re-binding and re-hashing identical args.
            self._runner(*self._runner_args)
        else:
            _gemm_kernel[self._grid](*self._args, **self._constexprs, **self._options)
        return self.out

    def positional_args(self) -> tuple:
        """Every _gemm_kernel argument in parameter order, meta-parameters included: what a
        compiled kernel's launcher and an AOT compile take (neither binds names)."""
        names = _gemm_kernel.arg_names[len(self._args) :]
        return (*self._args, *(self._constexprs[name] for name in names))

    def bind_compiled(self) -> None:
        """Compile (via one JIT launch) and keep the compiled kernel for direct launches."""
        kernel = _gemm_kernel[self._grid](*self._args, **self._constexprs, **self._options)
        kernel = kernel.result() if hasattr(kernel, "result") else kernel
        if not interpreting() and hasattr(kernel, "packed_metadata"):
            self._runner, self._runner_args = kernel[self._grid], self.positional_args()


def build_launch(p: GemmOperands, cfg: GemmConfig, dev: KernelTarget) -> MatmulLaunch:
    """Allocate the output (and split-K workspace), make descriptors and fix the grid for `cfg`."""
    m, n, k = p.mnk
    prologue = None
    if cfg.transpose_b and not p.b_is_nk:
        # wgmma reads 32-bit (tf32) B only K-major; a row-major B would be re-laid out in shared
        # memory every K step. Copy it K-major once per call instead (timed with the kernel).
        b_row, b_nk = p.b, torch.empty((n, k), device=p.b.device, dtype=p.b.dtype)
        prologue = lambda: b_nk.copy_(b_row.t())  # noqa: E731
        p = replace(p, b=b_nk.t(), b_is_nk=True)
    a, b = p.a, p.b
    bm, bn, bk = cfg.block_m, cfg.block_n, cfg.block_k
    out = torch.empty((m, n), device=a.device, dtype=p.out_dtype)
    tma_load, tma_store, tma_reason = tma_support(p, cfg, dev)
    if cfg.stream_k and (cfg.split_k != 1 or not cfg.persistent):
        raise ValueError(f"stream_k needs a persistent config with split_k=1; got {cfg}")
    # The partial-tile reduction (split-K, stream-K) writes C by pointers.
    tma_store = tma_store and cfg.split_k == 1 and not cfg.stream_k
    subtile = cfg.epilogue_subtile and tma_store
    a_arg, b_arg, c_arg = a, b, out
    if tma_load:
        a_arg = TensorDescriptor(a, [m, k], [a.stride(0), 1], [bm, bk])
        if p.b_is_nk:  # b = w.t() with w [N, K] row-major: describe w
            b_arg = TensorDescriptor(b.t(), [n, k], [b.stride(1), 1], [bn, bk])
        else:
            b_arg = TensorDescriptor(b, [k, n], [b.stride(0), 1], [bk, bn])
    if tma_store:
        c_arg = TensorDescriptor(out, [m, n], [n, 1], [bm, bn // 2 if subtile else bn])
    tiles = triton.cdiv(m, bm) * triton.cdiv(n, bn)
    units = tiles * cfg.split_k
    num_programs = min(units, dev.num_sms * cfg.programs_per_sm) if cfg.persistent else units
    # Partial tiles live in a tile-local fp32 workspace: [slots, parts, BLOCK_M, BLOCK_N].
    slots, parts, sk = (tiles, cfg.split_k, None) if cfg.split_k > 1 else (0, 1, None)
    if cfg.stream_k:
        sk = stream_k_plan(tiles, triton.cdiv(k, bk), dev.num_sms * cfg.programs_per_sm)
        num_programs, slots, parts = sk.num_programs, sk.sk_tiles, sk.max_parts
    ws = counters = None
    if slots:
        if slots * parts * bm * bn >= 2**31:
            raise ValueError(f"split workspace of {slots}x{parts} tiles overflows 32-bit offsets")
        ws = torch.empty(slots * parts * bm * bn, device=a.device, dtype=torch.float32)
        counters = torch.zeros(slots, device=a.device, dtype=torch.int32)
    # fmt: off
    args = (
        a_arg, b_arg, c_arg, p.a_scale, p.b_scale, ws, counters,
        m, n, k, num_programs, sk.sk_tiles if sk else 0,
        a.stride(0), a.stride(1), b.stride(0), b.stride(1), out.stride(0), out.stride(1),
    )
    # fmt: on
    constexprs = dict(
        BLOCK_M=bm,
        BLOCK_N=bn,
        BLOCK_K=bk,
        GROUP_M=cfg.group_m,
        SPLIT_K=cfg.split_k,
        PERSISTENT=cfg.persistent,
        TMA_LOAD=tma_load,
        TMA_STORE=tma_store,
        B_IS_NK=p.b_is_nk,
        USE_DOT=cfg.tensor_cores,
        INPUT_PRECISION=p.input_precision,
        HAS_SCALE=p.a_scale is not None,
        EVEN_K=k % bk == 0,
        EPILOGUE_SUBTILE=subtile,
        WARP_SPECIALIZE=cfg.warp_specialize,
        UPCAST=interpreting(),
        REDUCE_M=splitk_reduce_rows(bm, bn, parts, cfg.num_warps),
        STREAM_K=cfg.stream_k,
        MAX_PARTS=parts,
    )
    options: dict[str, Any] = {"num_warps": cfg.num_warps, "num_stages": cfg.num_stages}
    if dev.backend == "hip":
        options["matrix_instr_nonkdim"] = cfg.matrix_instr_nonkdim
        options["waves_per_eu"] = cfg.waves_per_eu
    config = cfg.as_dict() | {
        "tma": tma_load,
        "tma_store": tma_store,
        "tma_fallback": tma_reason if cfg.tma else "",
        "epilogue_subtile": subtile,
        "num_programs": num_programs,
        "units": units,
        # stream-K: whole tiles, tiles shared out by K, and how many of those several programs
        # share (each such tile costs partial stores and one reduction)
        **(
            {
                "dp_tiles": sk.dp_tiles,
                "sk_tiles": sk.sk_tiles,
                "sk_shared_tiles": sk.shared_tiles,
                "sk_max_parts": sk.max_parts,
            }
            if sk
            else {}
        ),
        "input_precision": p.input_precision,
        # Triton's sm_90 default for fp8 dots: wgmma accumulates without periodic fp32
        # promotion (cuBLAS's use_fast_accum=True behaviour), faster but less precise.
        "fp8_fast_accum": a.dtype == torch.float8_e4m3fn and dev.capability == 90,
        "b_layout": "row, copied K-major per call" if prologue else ("col" if p.b_is_nk else "row"),
        "arch": dev.arch,
        "device_name": dev.name,
    }
    grid = (num_programs, 1, 1)
    return MatmulLaunch(out, config, grid, args, constexprs, options, _prologue=prologue)


def prepare_matmul(
    a: torch.Tensor,
    b: torch.Tensor,
    *,
    variant: str = "full",
    out_dtype: torch.dtype | None = None,
    a_scale: torch.Tensor | None = None,
    b_scale: torch.Tensor | None = None,
    fp32_precision: str = "tf32",
    tune: bool = True,
) -> MatmulLaunch:
    """Choose (on a GPU: time) and compile a config for a @ b; return the launch closure.

    a: [M, K] row-major. b: [K, N] row-major, or column-major (b = w.t(), w [N, K] contiguous).
    fp8 e4m3 inputs need per-tensor float32 scales; their output is bf16 (a@b)*a_scale*b_scale.
    `variant` is the ladder rung (one of RUNGS); the keyword keeps its old name because
    harness/providers/own_triton.py passes it (rename both together).
    """
    rung = variant
    if rung not in RUNGS:
        raise ValueError(f"unknown variant {rung!r}; expected one of {RUNGS}")
    if a.device.type == "cpu" and not interpreting():
        raise ValueError("CPU tensors run only under the Triton interpreter (TRITON_INTERPRET=1)")
    dev = kernel_target(None if interpreting() else a.device)
    p = check_operands(a, b, out_dtype, a_scale, b_scale, fp32_precision, dev)
    m, n, k = p.mnk
    aligned = (a.data_ptr() % 16, b.data_ptr() % 16, a.stride(0), b.stride())
    key = (m, n, k, a.dtype, p.out_dtype, p.b_is_nk, p.input_precision, rung, dev.name, aligned)
    key += ("tuned",) if tune and dev.backend != "interpreter" else ("untuned",)
    if dev.backend == "interpreter":
        result = remember(key, interpreter_pick(rung, m, n, k, a.element_size()))
    else:
        cands = candidate_configs(rung, m, n, k, a.element_size(), p.out_bytes, dev)
        if transposes_b(p, dev, rung):  # the top two configs again, with B copied K-major
            cands = cands + [replace(c, transpose_b=True) for c in cands[:2]]
        if not tune:
            result = remember(key, cands[0])
        else:
            exact = p.input_precision == "ieee" and a.dtype == torch.float32
            result = tune_or_lookup(
                key,
                cands,
                lambda cfg: build_launch(p, cfg, dev),
                lambda: reference(p),
                1e-4 if exact else 3e-2,
            )
    launch = build_launch(p, result.config, dev)
    launch.config.update(variant=rung, tuned=result.tuned, candidates_tried=result.candidates_tried)
    if result.timings_ms:
        launch.config["tuned_ms"] = min(result.timings_ms.values())
        launch.config["candidates_rejected"] = len(result.rejected)
    launch.bind_compiled()  # compile now, outside any timed window
    return launch
