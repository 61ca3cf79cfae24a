"""The own Triton GEMM kernel: C[M, N] = scale * A[M, K] @ B[K, N], fp32 accumulation; its
meta-parameters switch each fast path on or off, so one kernel serves every rung (gemm.py).

Scheduling: work units are (output tile, K split) pairs in grouped order (GROUP_M rows of tiles
share B's columns while they are in L2). With SPLIT_K > 1 each unit stores an fp32 partial; the
last unit to finish a tile (an atomic counter per tile) sums the partials in split order, so the
result is deterministic and one launch suffices. That unit also resets the counter. With
REDUCE_APART the units only store their partials and gemm_reduce_kernel.py sums them in a second
launch spread over every SM (also in split order): one SM reading every partial of a 128x256
tile at split 7 is ~770 KB through one L2 port, on the critical path.

Stream-K (persistent configs with stream_k): when whole tiles would leave SMs idle in the last
wave (80 tiles of 128x256 on 132 SMs at M=256, N=10240), the tiles of all full waves but the last
run whole, and the K iterations of the rest are cut into one equal contiguous range per program
(gemm_split.stream_k_plan). A tile that one program covers is stored directly; a tile shared
by several takes the split-K path above, its parts numbered by program. Every SM then does the
same work. (Osama et al., "Stream-K", PPoPP 2023; CUTLASS ships it as a tile scheduler.)
"""

from __future__ import annotations

import triton
import triton.language as tl


# Kept unformatted: kernel arguments grouped by role on lines under comment headers (the Triton
# tutorials' layout); the formatter would put one argument per line and drop the grouping.
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
def _k_loop(a, b, pid_m, pid_n, k_lo, k_hi, M, N, K, stride_am, stride_ak, stride_bk, stride_bn,
            BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
            TMA_LOAD: tl.constexpr, B_IS_NK: tl.constexpr, USE_DOT: tl.constexpr,
            INPUT_PRECISION: tl.constexpr, EVEN_K: tl.constexpr, UPCAST: tl.constexpr):
    """The fp32 [BLOCK_M, BLOCK_N] sum over K tiles [k_lo, k_hi) of output tile (pid_m, pid_n):
    the main loop of a split-K unit and of a stream-K share alike. Inlined at both calls, so
    the pipeliner sees the same loop it would see written out in place."""
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for ki in range(k_lo, k_hi):
        k0 = ki * BLOCK_K
        a_tile = _load_a(a, pid_m, k0, M, K, stride_am, stride_ak,
                         BLOCK_M=BLOCK_M, BLOCK_K=BLOCK_K, TMA=TMA_LOAD, EVEN_K=EVEN_K)
        b_tile = _load_b(b, pid_n, k0, N, K, stride_bk, stride_bn,
                         BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, TMA=TMA_LOAD, B_IS_NK=B_IS_NK,
                         EVEN_K=EVEN_K)
        acc = _mac(acc, a_tile, b_tile,
                   USE_DOT=USE_DOT, INPUT_PRECISION=INPUT_PRECISION, UPCAST=UPCAST)
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
def _store_partial(ws_ptr, acc, slot, part,
                   BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, MAX_PARTS: tl.constexpr):
    """Store the fp32 accumulator whole as part `part` of workspace slot `slot`, laid out
    [slots, MAX_PARTS, BLOCK_M, BLOCK_N] (tile-local: unmasked, rows past M hold zeros)."""
    tile_elems = BLOCK_M * BLOCK_N
    rows = tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    offs = (slot * MAX_PARTS + part) * tile_elems + rows[:, None] * BLOCK_N + cols[None, :]
    tl.store(ws_ptr + offs, acc)


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
    cols = tl.arange(0, BLOCK_N)
    _store_partial(ws_ptr, acc, slot, part, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, MAX_PARTS=MAX_PARTS)
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
               EPILOGUE_SUBTILE: tl.constexpr, UPCAST: tl.constexpr, REDUCE_M: tl.constexpr,
               REDUCE_APART: tl.constexpr):
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

    acc = _k_loop(a, b, pid_m, pid_n, k_begin, k_end, M, N, K,
                  stride_am, stride_ak, stride_bk, stride_bn,
                  BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, TMA_LOAD=TMA_LOAD,
                  B_IS_NK=B_IS_NK, USE_DOT=USE_DOT, INPUT_PRECISION=INPUT_PRECISION,
                  EVEN_K=EVEN_K, UPCAST=UPCAST)

    tile_c = work_id_c // SPLIT_K
    pid_m, pid_n = _tile_coords(tile_c, num_pid_m, num_pid_n, GROUP_M=GROUP_M)
    if SPLIT_K == 1:
        if HAS_SCALE:
            acc = acc * scale
        _store_c(c, acc, pid_m, pid_n, M, N, stride_cm, stride_cn,
                 BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, TMA=TMA_STORE,
                 EPILOGUE_SUBTILE=EPILOGUE_SUBTILE)
    elif REDUCE_APART:  # the second launch sums the parts (gemm_reduce_kernel.py)
        _store_partial(ws_ptr, acc, tile_c, work_id_c % SPLIT_K,
                       BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, MAX_PARTS=SPLIT_K)
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
        # the K tiles of tile t inside this program's range [lo, hi), counted from the tile's start
        acc = _k_loop(a, b, pid_m, pid_n, max(lo, t0) - t0, min(hi, t0 + k_tiles) - t0, M, N, K,
                      stride_am, stride_ak, stride_bk, stride_bn,
                      BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, TMA_LOAD=TMA_LOAD,
                      B_IS_NK=B_IS_NK, USE_DOT=USE_DOT, INPUT_PRECISION=INPUT_PRECISION,
                      EVEN_K=EVEN_K, UPCAST=UPCAST)
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
    MAX_PARTS: tl.constexpr, REDUCE_APART: tl.constexpr,
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
                       EVEN_K=EVEN_K, EPILOGUE_SUBTILE=False, UPCAST=UPCAST, REDUCE_M=REDUCE_M,
                       REDUCE_APART=False)
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
        # while this tile's epilogue runs; split-K's barrier + atomic epilogue stays unflattened
        # (and so, untried, does REDUCE_APART's plain partial store).
        for work_id in tl.range(pid, num_units, num_programs, flatten=SPLIT_K == 1,
                                warp_specialize=WARP_SPECIALIZE):
            work_id_c += num_programs
            _gemm_unit(work_id, work_id_c, a, b, c, ws_ptr, counter_ptr, scale,
                       M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                       BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, GROUP_M=GROUP_M,
                       SPLIT_K=SPLIT_K, TMA_LOAD=TMA_LOAD, TMA_STORE=TMA_STORE, B_IS_NK=B_IS_NK,
                       USE_DOT=USE_DOT, INPUT_PRECISION=INPUT_PRECISION, HAS_SCALE=HAS_SCALE,
                       EVEN_K=EVEN_K, EPILOGUE_SUBTILE=EPILOGUE_SUBTILE, UPCAST=UPCAST,
                       REDUCE_M=REDUCE_M, REDUCE_APART=REDUCE_APART)
    else:
        _gemm_unit(pid, pid, a, b, c, ws_ptr, counter_ptr, scale,
                   M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                   BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, GROUP_M=GROUP_M,
                   SPLIT_K=SPLIT_K, TMA_LOAD=TMA_LOAD, TMA_STORE=TMA_STORE, B_IS_NK=B_IS_NK,
                   USE_DOT=USE_DOT, INPUT_PRECISION=INPUT_PRECISION, HAS_SCALE=HAS_SCALE,
                   EVEN_K=EVEN_K, EPILOGUE_SUBTILE=EPILOGUE_SUBTILE, UPCAST=UPCAST,
                   REDUCE_M=REDUCE_M, REDUCE_APART=REDUCE_APART)
# fmt: on
