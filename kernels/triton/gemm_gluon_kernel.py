"""GEMM in Gluon, Triton's tile-level dialect, in the structure of CUTLASS's warp-specialized
sm_90 kernels: C[M, N] = scale * A[M, K] @ B[K, N], fp32 accumulation, a persistent grid.

Why a second Triton GEMM: the `tl` kernel (gemm_kernel.py) leaves the schedule to Triton's
pipeliner and takes power-of-two tiles only. On LLM shapes of M 128-1024 that leaves SMs idle
(M 256, N 10240: 80 tiles of 128x256 on 132 SMs) and the H200 measured it at 0.74x cuBLAS there;
cuBLAS ran 122 tiles of 128x168. Gluon exposes what that takes:
  - a tile N of up to three power-of-two parts (BN0 + BN1 + BN2: 128 + 32 = 160, 128 + 64 = 192,
    64 + 32 + 16 = 112), each its own TMA box, wgmma and accumulator, so the tile count can be
    fitted to the SM count;
  - a producer warp (24 registers) that loads A and B tiles by TMA into STAGES stages, running
    ahead into the next tile while the consumers store this one;
  - two consumer warpgroups (240 registers each) that own SLICE_M rows each of a
    (2 x SLICE_M) x BN tile (CUTLASS's "cooperative" schedule) and keep one wgmma group in flight:
    step k's wgmma is issued before step k-1's is waited on, then k-1's stage is released.
The tile loop is persistent (one CTA per SM, tiles in grouped order so that the CTAs running at
once share B's columns in L2). C leaves through shared memory by TMA stores, which clip the
ragged edges (C_SMEM); 128x256 and 256x128, whose whole-tile buffers would cost the fourth
stage, as two equal N parts through one buffer in turn (C_HALVES); or, where even that costs a
stage (256x160, 128x320), by masked stores straight from the accumulators.
fp8 e4m3 (B K-major, as wgmma reads fp8) takes per-tensor scales applied to the accumulators in
the epilogue (HAS_SCALE) and writes bf16. sm_90 only (wgmma, TMA, setmaxnreg).
Split-K (SPLIT_K > 1): the work units are (tile, K split) pairs, each K split an equal run of K
steps; a unit stores its fp32 accumulators whole into a tile-local workspace ([tiles, SPLIT_K,
BM, BN]) and gemm_reduce_kernel.py's second launch sums them in split order, scales and writes C;
or (SUM_IN_PLACE) the last unit of a tile's row slice to count itself in (an atomic counter per
slice) sums the slice's parts in the same order and writes C, in the same launch (measured
never faster than the second launch on an H200, so not offered to the tuner: gemm_gluon.py's
OFFER_IN_PLACE).
For few, long tiles (Llama-3.1-405B's fused QKV, N 2304 K 16384: 32 tiles of 128x144 at M 256,
the decomposition cuBLAS runs there split 4 ways on 128 CTAs).
"""

from __future__ import annotations

from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import (
    fence_async_shared,
    mbarrier,
    tma,
    warpgroup_mma,
    warpgroup_mma_wait,
)

from .gluon_compat import thread_barrier, tma_load, tma_store

PRODUCER_REGS = gl.constexpr(24)
CONSUMER_REGS = gl.constexpr(240)


# fmt: off
# Kernel argument lists are grouped by kind under comment headers, as in attention_gluon_kernel.

@gluon.jit
def _tile_coords(tile_id, num_pid_m, num_pid_n, GROUP_M: gl.constexpr):
    """Grouped order: GROUP_M consecutive tile rows walk N together, so B stays in L2."""
    num_pid_in_group = GROUP_M * num_pid_n
    first_pid_m = (tile_id // num_pid_in_group) * GROUP_M
    group_size_m = gl.minimum(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + (tile_id % num_pid_in_group) % group_size_m
    pid_n = (tile_id % num_pid_in_group) // group_size_m
    return pid_m, pid_n


@gluon.jit
def _b_operand(b_smem, stage, B_IS_NK: gl.constexpr):
    """Stage `stage` of a B buffer as wgmma's [BK, BN] operand: a K-major [BN, BK] tile (B is
    w.t() with w [N, K]) is read through a transposed view, as the FMHA reads K."""
    b = b_smem.index(stage)
    if B_IS_NK:
        b = b.permute((1, 0))
    return b


@gluon.jit
def _producer(a_desc, b0_desc, b1_desc, b2_desc, a_smem, b0_smem, b1_smem, b2_smem, ready, empty,
              M, N, K,
              SLICE_M: gl.constexpr, CONSUMERS: gl.constexpr, BN0: gl.constexpr,
              BN1: gl.constexpr, BN2: gl.constexpr, BK: gl.constexpr, STAGES: gl.constexpr,
              GROUP_M: gl.constexpr, B_IS_NK: gl.constexpr, PINGPONG: gl.constexpr,
              SPLIT_K: gl.constexpr):
    """One warp: for every unit of this CTA, every K step's A slices and B parts, STAGES ahead
    (in tile order: with PINGPONG the consumers take alternate tiles, so this order is also the
    order in which their main loops take turns)."""
    A_SLICES: gl.constexpr = 1 if PINGPONG else CONSUMERS
    BM: gl.constexpr = SLICE_M * A_SLICES
    num_pid_m = gl.cdiv(M, BM)
    num_pid_n = gl.cdiv(N, BN0 + BN1 + BN2)
    # K steps per unit (the launcher splits only K step counts SPLIT_K divides)
    k_iters = gl.cdiv(K, BK) // SPLIT_K
    # bytes one stage receives: every A slice and every B part
    NBYTES: gl.constexpr = (BM + BN0 + BN1 + BN2) * BK * a_desc.dtype.primitive_bitwidth // 8
    it = 0
    for unit in range(gl.program_id(0), num_pid_m * num_pid_n * SPLIT_K, gl.num_programs(0)):
        pid_m, pid_n = _tile_coords(unit // SPLIT_K, num_pid_m, num_pid_n, GROUP_M)
        off_m = pid_m * BM
        off_n = pid_n * (BN0 + BN1 + BN2)
        k_first = (unit % SPLIT_K) * k_iters
        for ki in range(k_first, k_first + k_iters):
            s = it % STAGES
            # a fresh barrier's "previous phase" (parity 1) counts as complete: the first
            # STAGES fills do not wait
            mbarrier.wait(empty.index(s), ((it // STAGES) & 1) ^ 1)
            # TMA counts a box's full bytes even where it reads past M, N or K (zero-filled)
            mbarrier.expect(ready.index(s), NBYTES)
            k0 = ki * BK
            for c in gl.static_range(A_SLICES):
                tma_load(a_desc, [off_m + c * SLICE_M, k0], ready.index(s),
                         a_smem.index(s * A_SLICES + c))
            if B_IS_NK:
                tma_load(b0_desc, [off_n, k0], ready.index(s), b0_smem.index(s))
                if BN1 > 0:
                    tma_load(b1_desc, [off_n + BN0, k0], ready.index(s), b1_smem.index(s))
                if BN2 > 0:
                    tma_load(b2_desc, [off_n + BN0 + BN1, k0], ready.index(s), b2_smem.index(s))
            else:
                tma_load(b0_desc, [k0, off_n], ready.index(s), b0_smem.index(s))
                if BN1 > 0:
                    tma_load(b1_desc, [k0, off_n + BN0], ready.index(s), b1_smem.index(s))
                if BN2 > 0:
                    tma_load(b2_desc, [k0, off_n + BN0 + BN1], ready.index(s), b2_smem.index(s))
            it += 1


@gluon.jit
def _store_part(c_ptr, stride_cm, acc, off_m, off_n, M, N, acc_layout: gl.constexpr):
    """Store one accumulator part straight from registers (masked at the ragged edges)."""
    rows = off_m + gl.arange(0, acc.shape[0], layout=gl.SliceLayout(1, acc_layout))
    cols = off_n + gl.arange(0, acc.shape[1], layout=gl.SliceLayout(0, acc_layout))
    mask = (gl.expand_dims(rows, 1) < M) & (gl.expand_dims(cols, 0) < N)
    ptrs = c_ptr + gl.expand_dims(rows.to(gl.int64) * stride_cm, 1) + gl.expand_dims(cols, 0)
    gl.store(ptrs, acc.to(c_ptr.dtype.element_ty), mask=mask)


@gluon.jit
def _store_partial_part(ws_ptr, acc, base, row0, col0, BN: gl.constexpr,
                        acc_layout: gl.constexpr):
    """Split-K: store one accumulator part, fp32 and unmasked, at rows row0.. and columns col0..
    of its unit's [BM, BN] slab of the workspace, which starts at element `base`."""
    rows = row0 + gl.arange(0, acc.shape[0], layout=gl.SliceLayout(1, acc_layout))
    cols = col0 + gl.arange(0, acc.shape[1], layout=gl.SliceLayout(0, acc_layout))
    ptrs = ws_ptr + base + gl.expand_dims(rows * BN, 1) + gl.expand_dims(cols, 0)
    gl.store(ptrs, acc)


@gluon.jit
def _sum_parts(ws_ptr, tile_base, row0, col0, SLICE_M: gl.constexpr, WIDTH: gl.constexpr,
               BM: gl.constexpr, BN: gl.constexpr, SPLIT_K: gl.constexpr,
               acc_layout: gl.constexpr):
    """SUM_IN_PLACE: the sum, in split order from zero (gemm_reduce_kernel.py's order, so the
    same bits), of rows row0.. and columns col0..col0 + WIDTH of a tile's SPLIT_K fp32 slabs,
    which start at element `tile_base`."""
    rows = row0 + gl.arange(0, SLICE_M, layout=gl.SliceLayout(1, acc_layout))
    cols = col0 + gl.arange(0, WIDTH, layout=gl.SliceLayout(0, acc_layout))
    ptrs = ws_ptr + tile_base + gl.expand_dims(rows * BN, 1) + gl.expand_dims(cols, 0)
    total = gl.zeros([SLICE_M, WIDTH], gl.float32, acc_layout)
    for s in gl.static_range(SPLIT_K):
        # .cg: the other parts were stored by other SMs; read them from L2, not this SM's L1
        total += gl.load(ptrs + s * (BM * BN), cache_modifier=".cg")
    return total


@gluon.jit
def _consumer(a_smem, b0_smem, b1_smem, b2_smem, c0_smem, c1_smem, c2_smem, ready, empty, order,
              c0_desc, c1_desc, c2_desc, c_ptr, stride_cm, ws_ptr, counter_ptr, a_scale_ptr,
              b_scale_ptr, M, N, K,
              SLICE: gl.constexpr, SLICE_M: gl.constexpr, CONSUMERS: gl.constexpr,
              BN0: gl.constexpr, BN1: gl.constexpr, BN2: gl.constexpr, BK: gl.constexpr,
              STAGES: gl.constexpr,
              GROUP_M: gl.constexpr, B_IS_NK: gl.constexpr, HAS_SCALE: gl.constexpr,
              C_SMEM: gl.constexpr, PINGPONG: gl.constexpr, INSTR_K: gl.constexpr,
              SPLIT_K: gl.constexpr, SUM_IN_PLACE: gl.constexpr, C_HALVES: gl.constexpr):
    """Cooperative: rows [SLICE * SLICE_M, (SLICE + 1) * SLICE_M) of every tile of this CTA.
    PINGPONG: every CONSUMERS-th tile of this CTA whole, starting at its SLICE-th; its epilogue
    runs while the other consumer's main loop keeps the tensor cores busy. The main loops take
    turns through the `order` barriers (CUTLASS's math order barrier): consumer SLICE starts a
    tile's main loop once the other has passed every stage wait of its previous tile. Without
    that, a consumer could wait on a stage two fills ahead of the one it needs, and the barrier's
    parity from the older fill would let it read a stage not loaded yet."""
    A_SLICES: gl.constexpr = 1 if PINGPONG else CONSUMERS
    A_SLICE: gl.constexpr = 0 if PINGPONG else SLICE
    BM: gl.constexpr = SLICE_M * A_SLICES
    # the CTA's tiles this consumer takes, and the stages it skips between them (the producer
    # fills stages for every tile of the CTA in order)
    FIRST: gl.constexpr = SLICE if PINGPONG else 0
    STRIDE: gl.constexpr = CONSUMERS if PINGPONG else 1
    acc0_layout: gl.constexpr = gl.NVMMADistributedLayout(
        version=[3, 0], warps_per_cta=[4, 1], instr_shape=[16, BN0, INSTR_K])
    acc1_layout: gl.constexpr = gl.NVMMADistributedLayout(
        version=[3, 0], warps_per_cta=[4, 1], instr_shape=[16, BN1 if BN1 > 0 else 8, INSTR_K])
    acc2_layout: gl.constexpr = gl.NVMMADistributedLayout(
        version=[3, 0], warps_per_cta=[4, 1], instr_shape=[16, BN2 if BN2 > 0 else 8, INSTR_K])
    BN: gl.constexpr = BN0 + BN1 + BN2
    num_pid_m = gl.cdiv(M, BM)
    num_pid_n = gl.cdiv(N, BN)
    k_iters = gl.cdiv(K, BK) // SPLIT_K  # K steps per unit, as the producer counts them
    scale = 1.0
    # the scale is applied here without a split or summed in place; summed apart, the second
    # launch scales the sum
    if HAS_SCALE and (SPLIT_K == 1 or SUM_IN_PLACE):
        scale = gl.load(a_scale_ptr) * gl.load(b_scale_ptr)
    it = FIRST * k_iters
    t = 0  # units this consumer has taken
    for unit in range(gl.program_id(0) + FIRST * gl.num_programs(0),
                      num_pid_m * num_pid_n * SPLIT_K, STRIDE * gl.num_programs(0)):
        pid_m, pid_n = _tile_coords(unit // SPLIT_K, num_pid_m, num_pid_n, GROUP_M)
        acc0 = gl.zeros([SLICE_M, BN0], gl.float32, acc0_layout)
        acc1 = gl.zeros([SLICE_M, BN1 if BN1 > 0 else 8], gl.float32, acc1_layout)
        acc2 = gl.zeros([SLICE_M, BN2 if BN2 > 0 else 8], gl.float32, acc2_layout)
        if PINGPONG:
            # consumer 1's t-th turn follows consumer 0's t-th; consumer 0's t-th (t > 0)
            # follows consumer 1's (t-1)-th
            if SLICE > 0 or t > 0:
                mbarrier.wait(order.index(SLICE), (t - 1 + SLICE) & 1)
        for ki in range(k_iters):
            s = it % STAGES
            mbarrier.wait(ready.index(s), (it // STAGES) & 1)
            a = a_smem.index(s * A_SLICES + A_SLICE)
            acc0 = warpgroup_mma(a, _b_operand(b0_smem, s, B_IS_NK), acc0, is_async=True)
            if BN2 > 0:
                acc1 = warpgroup_mma(a, _b_operand(b1_smem, s, B_IS_NK), acc1, is_async=True)
                acc2 = warpgroup_mma(a, _b_operand(b2_smem, s, B_IS_NK), acc2, is_async=True)
                # step ki's three wgmma groups may still run; step ki-1's are done
                acc0, acc1, acc2 = warpgroup_mma_wait(3, deps=(acc0, acc1, acc2))
            elif BN1 > 0:
                acc1 = warpgroup_mma(a, _b_operand(b1_smem, s, B_IS_NK), acc1, is_async=True)
                # step ki's two wgmma groups may still run; step ki-1's are done
                acc0, acc1 = warpgroup_mma_wait(2, deps=(acc0, acc1))
            else:
                acc0 = warpgroup_mma_wait(1, deps=(acc0, ))
            if ki > 0:
                mbarrier.arrive(empty.index((it - 1) % STAGES), count=1)
            it += 1
        if PINGPONG:  # every stage wait of this tile passed: the other consumer's turn
            mbarrier.arrive(order.index((SLICE + 1) % CONSUMERS), count=1)
        t += 1
        if BN2 > 0:
            acc0, acc1, acc2 = warpgroup_mma_wait(0, deps=(acc0, acc1, acc2))
        elif BN1 > 0:
            acc0, acc1 = warpgroup_mma_wait(0, deps=(acc0, acc1))
        else:
            acc0 = warpgroup_mma_wait(0, deps=(acc0, ))
        mbarrier.arrive(empty.index((it - 1) % STAGES), count=1)
        it += (STRIDE - 1) * k_iters  # the other consumer's units

        # epilogue: the producer is already loading the next unit's stages
        if SPLIT_K > 1:
            # this unit's fp32 slab of the workspace: [tiles, SPLIT_K, BM, BN], tile-local
            # (`unit` is a tensor in the traced kernel; mypy reads the range as ints)
            base = unit.to(gl.int64) * (BM * BN)  # type: ignore[attr-defined]
            row0 = A_SLICE * SLICE_M
            _store_partial_part(ws_ptr, acc0, base, row0, 0, BN, acc0_layout)
            if BN1 > 0:
                _store_partial_part(ws_ptr, acc1, base, row0, BN0, BN, acc1_layout)
            if BN2 > 0:
                _store_partial_part(ws_ptr, acc2, base, row0, BN0 + BN1, BN, acc2_layout)
            if SUM_IN_PLACE:
                # as the Gluon decode's fused merge: every thread of this warpgroup has issued
                # its partial stores before one thread's acq_rel count; the slice's last part to
                # count sums every part (other SMs', read from L2) and writes C
                thread_barrier()
                tile = unit // SPLIT_K
                slot = tile * A_SLICES + A_SLICE
                done = gl.atomic_add(counter_ptr + slot, 1, sem="acq_rel", scope="gpu")
                if done == SPLIT_K - 1:
                    tile_base = tile.to(gl.int64) * (SPLIT_K * BM * BN)
                    off_m = pid_m * BM + row0
                    off_n = pid_n * BN
                    sum0 = _sum_parts(ws_ptr, tile_base, row0, 0, SLICE_M, BN0, BM, BN, SPLIT_K,
                                      acc0_layout)
                    _store_part(c_ptr, stride_cm, sum0 * scale, off_m, off_n, M, N, acc0_layout)
                    if BN1 > 0:
                        sum1 = _sum_parts(ws_ptr, tile_base, row0, BN0, SLICE_M, BN1, BM, BN,
                                          SPLIT_K, acc1_layout)
                        _store_part(c_ptr, stride_cm, sum1 * scale, off_m, off_n + BN0, M, N,
                                    acc1_layout)
                    if BN2 > 0:
                        sum2 = _sum_parts(ws_ptr, tile_base, row0, BN0 + BN1, SLICE_M, BN2, BM,
                                          BN, SPLIT_K, acc2_layout)
                        _store_part(c_ptr, stride_cm, sum2 * scale, off_m, off_n + BN0 + BN1, M,
                                    N, acc2_layout)
                    gl.store(counter_ptr + slot, 0)  # the next launch counts from zero again
        else:
            if HAS_SCALE:
                acc0 = acc0 * scale
                acc1 = acc1 * scale
                acc2 = acc2 * scale
            off_m = pid_m * BM + A_SLICE * SLICE_M
            off_n = pid_n * BN
            if C_SMEM and C_HALVES:
                # two equal parts through one buffer: the second half waits for the first's
                # store to have read it (the partition's barrier: only one thread issued it)
                c0 = c0_smem.index(SLICE)
                tma.store_wait(0)
                thread_barrier()
                c0.store(acc0.to(c0_desc.dtype))
                fence_async_shared()
                tma_store(c0_desc, [off_m, off_n], c0)
                tma.store_wait(0)
                thread_barrier()
                c0.store(acc1.to(c1_desc.dtype))
                fence_async_shared()
                tma_store(c1_desc, [off_m, off_n + BN0], c0)
            elif C_SMEM:
                c0 = c0_smem.index(SLICE)
                c1 = c1_smem.index(SLICE)
                c2 = c2_smem.index(SLICE)
                # the previous tile's stores have read this consumer's C buffers
                tma.store_wait(0)
                c0.store(acc0.to(c0_desc.dtype))
                if BN1 > 0:
                    c1.store(acc1.to(c1_desc.dtype))
                if BN2 > 0:
                    c2.store(acc2.to(c2_desc.dtype))
                fence_async_shared()
                tma_store(c0_desc, [off_m, off_n], c0)
                if BN1 > 0:
                    tma_store(c1_desc, [off_m, off_n + BN0], c1)
                if BN2 > 0:
                    tma_store(c2_desc, [off_m, off_n + BN0 + BN1], c2)
            else:
                _store_part(c_ptr, stride_cm, acc0, off_m, off_n, M, N, acc0_layout)
                if BN1 > 0:
                    _store_part(c_ptr, stride_cm, acc1, off_m, off_n + BN0, M, N, acc1_layout)
                if BN2 > 0:
                    _store_part(c_ptr, stride_cm, acc2, off_m, off_n + BN0 + BN1, M, N,
                                acc2_layout)
    if C_SMEM:
        tma.store_wait(0)


@gluon.jit
def _gemm_ws_kernel(
    # TMA descriptors: A in [SLICE_M, BK] boxes, B's parts in [BN0|BN1|BN2, BK] boxes ([BK,
    # BN0|BN1|BN2] for a row-major B), C's in [SLICE_M, BN0|BN1|BN2] boxes (a part of 0 columns:
    # part 0's again, never used)
    a_desc, b0_desc, b1_desc, b2_desc, c0_desc, c1_desc, c2_desc,
    # C itself and its row stride (the stores from registers, without C_SMEM); the split-K
    # workspace (fp32 [tiles, SPLIT_K, BM, BN]; read only with SPLIT_K > 1) and, to sum it in
    # place, one int32 counter per tile row slice (zeros; read only with SUM_IN_PLACE)
    c_ptr, stride_cm, ws_ptr, counter_ptr,
    # per-tensor scales (fp32 scalars; read only with HAS_SCALE)
    a_scale_ptr, b_scale_ptr,
    # sizes
    M, N, K,
    # meta-parameters
    SLICE_M: gl.constexpr, CONSUMERS: gl.constexpr, BN0: gl.constexpr, BN1: gl.constexpr,
    BN2: gl.constexpr, BK: gl.constexpr, STAGES: gl.constexpr, GROUP_M: gl.constexpr,
    B_IS_NK: gl.constexpr, HAS_SCALE: gl.constexpr, C_SMEM: gl.constexpr, PINGPONG: gl.constexpr,
    SPLIT_K: gl.constexpr, SUM_IN_PLACE: gl.constexpr = False, C_HALVES: gl.constexpr = False,
):
    """C = scale * A @ B over a persistent grid of at most one CTA per SM. Tiles are
    (CONSUMERS x SLICE_M) x (BN0 + BN1 + BN2), or SLICE_M x (BN0 + BN1 + BN2) with PINGPONG
    (BN2 > 0 only with BN1 > 0). SPLIT_K > 1 (not with C_SMEM): fp32 partials into ws_ptr,
    summed by gemm_reduce_kernel.py's launch, or by the last of each slice's units to count in
    (SUM_IN_PLACE). C_HALVES (with C_SMEM, two equal parts BN0 == BN1): both parts leave
    through one [SLICE_M, BN0] buffer per consumer, one after the other."""
    dtype: gl.constexpr = a_desc.dtype
    # wgmma's K per instruction: 32 bytes of operand (16 for bf16/fp16, 32 for fp8)
    INSTR_K: gl.constexpr = 256 // dtype.primitive_bitwidth
    A_SLICES: gl.constexpr = 1 if PINGPONG else CONSUMERS
    a_smem = gl.allocate_shared_memory(dtype, [STAGES * A_SLICES, SLICE_M, BK], a_desc.layout)
    if B_IS_NK:
        b0_smem = gl.allocate_shared_memory(dtype, [STAGES, BN0, BK], b0_desc.layout)
    else:
        b0_smem = gl.allocate_shared_memory(dtype, [STAGES, BK, BN0], b0_desc.layout)
    if BN1 > 0:
        if B_IS_NK:
            b1_smem = gl.allocate_shared_memory(dtype, [STAGES, BN1, BK], b1_desc.layout)
        else:
            b1_smem = gl.allocate_shared_memory(dtype, [STAGES, BK, BN1], b1_desc.layout)
    else:  # no second part: its operands alias part 0's and are never touched
        b1_smem = b0_smem
    if BN2 > 0:
        if B_IS_NK:
            b2_smem = gl.allocate_shared_memory(dtype, [STAGES, BN2, BK], b2_desc.layout)
        else:
            b2_smem = gl.allocate_shared_memory(dtype, [STAGES, BK, BN2], b2_desc.layout)
    else:
        b2_smem = b0_smem
    if C_SMEM:
        c0_smem = gl.allocate_shared_memory(c0_desc.dtype, [CONSUMERS, SLICE_M, BN0],
                                            c0_desc.layout)
        c1_smem = c0_smem
        if BN1 > 0 and not C_HALVES:
            c1_smem = gl.allocate_shared_memory(c1_desc.dtype, [CONSUMERS, SLICE_M, BN1],
                                                c1_desc.layout)
        c2_smem = c0_smem
        if BN2 > 0:
            c2_smem = gl.allocate_shared_memory(c2_desc.dtype, [CONSUMERS, SLICE_M, BN2],
                                                c2_desc.layout)
    else:  # C leaves from registers: no staging buffers (their bytes went to a stage)
        c0_smem = a_smem
        c1_smem = a_smem
        c2_smem = a_smem
    ready = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
    empty = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
    for s in gl.static_range(STAGES):
        mbarrier.init(ready.index(s), count=1)
        # one arrival per consumer reading the stage: both (cooperative) or one (ping-pong)
        mbarrier.init(empty.index(s), count=A_SLICES)
    order = gl.allocate_shared_memory(gl.int64, [CONSUMERS, 1], mbarrier.MBarrierLayout())
    for c in gl.static_range(CONSUMERS):
        mbarrier.init(order.index(c), count=1)
    fence_async_shared()  # the initialised barriers are visible to the TMA unit

    gl.warp_specialize([
        (_consumer, (a_smem, b0_smem, b1_smem, b2_smem, c0_smem, c1_smem, c2_smem, ready, empty,
                     order, c0_desc, c1_desc, c2_desc, c_ptr, stride_cm, ws_ptr, counter_ptr,
                     a_scale_ptr, b_scale_ptr, M, N, K, 0, SLICE_M, CONSUMERS, BN0, BN1, BN2, BK,
                     STAGES, GROUP_M, B_IS_NK, HAS_SCALE, C_SMEM, PINGPONG, INSTR_K, SPLIT_K,
                     SUM_IN_PLACE, C_HALVES)),
        (_consumer, (a_smem, b0_smem, b1_smem, b2_smem, c0_smem, c1_smem, c2_smem, ready, empty,
                     order, c0_desc, c1_desc, c2_desc, c_ptr, stride_cm, ws_ptr, counter_ptr,
                     a_scale_ptr, b_scale_ptr, M, N, K, 1, SLICE_M, CONSUMERS, BN0, BN1, BN2, BK,
                     STAGES, GROUP_M, B_IS_NK, HAS_SCALE, C_SMEM, PINGPONG, INSTR_K, SPLIT_K,
                     SUM_IN_PLACE, C_HALVES)),
        (_producer, (a_desc, b0_desc, b1_desc, b2_desc, a_smem, b0_smem, b1_smem, b2_smem, ready,
                     empty, M, N, K, SLICE_M, CONSUMERS, BN0, BN1, BN2, BK, STAGES, GROUP_M,
                     B_IS_NK, PINGPONG, SPLIT_K)),
    ], [4, 1], [CONSUMER_REGS, PRODUCER_REGS])

# fmt: on
