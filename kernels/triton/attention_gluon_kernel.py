"""FMHA forward (prefill) in Gluon, Triton's tile-level dialect, in FlashAttention-3's structure.

Why a second Triton attention kernel: `tl` attention (attention_prefill.py) leaves the schedule to
Triton's pipeliner, which on sm_90 serialises each tile's softmax behind its wgmma (the H200
measured it at 0.83x cuDNN at D 128). Gluon exposes what FA3 schedules by hand: warp
specialization, mbarriers, TMA and asynchronous wgmma with explicit waits.

A work item is 64 x CONSUMERS query rows of one (batch, query head). One CTA runs one item, or,
PERSISTENT, one CTA per SM runs one item per round (causal: every head's longest items first,
the rounds alternating direction: _tile_of), the stage ring's position carried from item to item, so the next item's K/V load while
this one computes, and with QBUF 2 its Q too (a Q buffer is refilled once its consumer's O,
staged through it, has left: q_empty). Each CTA runs these partitions:
  producer    one warp (24 registers): TMA loads of Q (one 64-row slice per consumer) and of K
              and V tiles into STAGES shared-memory stages; a stage is refilled once every
              consumer released it (kv_empty, one arrival each); K and V have separate ready
              barriers, so the score wgmma starts before V has landed.
  consumer 0  the default partition (4 warps, one warpgroup): rows [0, 64) of the tile.
  consumer c  worker partitions (4 warps each; 240 registers with two consumers, 160 with
              three): rows [64 c, 64 c + 64).
Two consumers suit D 128 and 256 (FA3's choice); three suit D 64, where a tile's softmax costs
as much as its wgmmas and a third warpgroup keeps the tensor cores fed while two do softmax.
Each consumer runs S = Q K^T (both operands in shared memory), the online softmax in registers
(exp2, log2(e) folded into the scale) and O += P V with P taken from the S registers (no shared
memory round trip). Without PINGPONG the two consumers never wait for each other, and the warp
schedulers interleave one's softmax with the other's wgmma as they come.

PINGPONG (FA3's and FA4's inter-warpgroup order; two consumers, with OVERLAP): the consumers take
turns to issue their wgmmas (a turn: tile i's Q K^T and tile i-1's P V), each waiting for the
other's turn to be issued before issuing its own (the turn barriers, one per consumer), so one
consumer's softmax runs while the other's wgmmas hold the tensor cores. Both take n_tiles + 1
turns per item (the prologue's scores, one per computed tile, the epilogue's P V, and one empty
turn per tile consumer 0 releases unread), so neither waits for a turn that never comes. The
turns only order issue: no data passes through them, so the order cannot change a result.

OVERLAP (FA3's intra-warpgroup overlap): tile i's Q K^T and tile i-1's P V are issued together;
the consumer waits only for the scores (wgmma.wait_group 1) and runs tile i's softmax while
P V is still in flight, then rescales O. Without it, every wgmma is waited on before the softmax.

Causal masking is bottom-right aligned (row i sees keys j <= i + Skv - Sq). Per consumer, KV tiles
split into unmasked ones, masked ones (the diagonal and the ragged tail) and, for consumer 0, tiles
past its diagonal that the producer loaded for consumer 1: it waits for them and releases them
without computing (releasing unseen would let a stage's phase complete with one consumer's two
arrivals). GQA: query head h reads KV head h // GROUP. sm_90 only (wgmma, TMA, setmaxnreg).
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

from .gluon_compat import thread_barrier as _thread_barrier
from .gluon_compat import tma_load as _tma_load
from .gluon_compat import tma_store as _tma_store

# Query rows per consumer warpgroup (wgmma m64).
SLICE_ROWS = 64
# Registers per thread of the producer warp and of the worker consumers (setmaxnreg), with two
# and with three consumers; the default consumer gets what remains of the 64K register file.
PRODUCER_REGS = gl.constexpr(24)
CONSUMER_REGS_2 = gl.constexpr(240)
CONSUMER_REGS_3 = gl.constexpr(160)


# fmt: off
# Kernel argument lists are grouped by kind under comment headers, as in attention_prefill.py.

@gluon.jit
def _tile_of(t, n_qt, n_bh, CAUSAL: gl.constexpr, PERSISTENT: gl.constexpr,
             LONGEST_FIRST: gl.constexpr):
    """Work item t -> (query tile, batch x query head). Head by head: query tiles fastest (a
    head's CTAs share its K/V in L2), causal ones longest (bottom) first within a head.
    LONGEST_FIRST (causal): every head's longest tiles first, then the next longest, so the
    CTAs the hardware hands out in order end together (greedy longest-first: 0.99 of a perfect
    balance at 4k tokens and 32 heads on 132 SMs, where head by head leaves 0.88, a model of
    the KV tiles per CTA). PERSISTENT takes the same list in rounds of one item per CTA, the
    rounds alternating direction (snake), so a CTA that took a long item in one round takes a
    short one in the next (0.99 of a perfect balance at 4k in scripts/causal_order_model.py,
    where striding the list in one direction gave 0.89)."""
    if CAUSAL and LONGEST_FIRST:
        if PERSISTENT:  # t = pid + round * grid: the slot; the round's width is all but the last
            step = gl.num_programs(0)
            rnd = t // step
            j = t % step
            width = gl.minimum(step, n_qt * n_bh - rnd * step)
            t = rnd * step + j + (rnd % 2) * (width - 1 - 2 * j)
        pid_m = n_qt - 1 - t // n_bh
        pid_bh = t % n_bh
    else:
        pid_m = t % n_qt
        pid_bh = t // n_qt
        if CAUSAL:
            pid_m = n_qt - 1 - pid_m
    return pid_m, pid_bh


@gluon.jit
def _tile_rows(t, n_qt, n_bh, H_Q, GROUP, seq_q, seq_kv, q_rows_b, q_rows_h, kv_rows_b, kv_rows_h,
               o_rows_b, o_rows_h, BLOCK_N: gl.constexpr, CONSUMERS: gl.constexpr,
               CAUSAL: gl.constexpr, PERSISTENT: gl.constexpr, LONGEST_FIRST: gl.constexpr):
    """Work item t's first query row, its rows in the Q, K/V and O views, and its KV tiles."""
    pid_m, pid_bh = _tile_of(t, n_qt, n_bh, CAUSAL, PERSISTENT, LONGEST_FIRST)
    off_b = pid_bh // H_Q
    off_h = pid_bh % H_Q
    off_hkv = off_h // GROUP
    m0 = pid_m * (64 * CONSUMERS)
    q_row = off_b * q_rows_b + off_h * q_rows_h + m0
    kv_row = off_b * kv_rows_b + off_hkv * kv_rows_h
    o_row = off_b * o_rows_b + off_h * o_rows_h
    if CAUSAL:  # seq_kv >= seq_q (checked on the host)
        n_tiles = gl.cdiv(gl.minimum(seq_kv, m0 + 64 * CONSUMERS + seq_kv - seq_q), BLOCK_N)
    else:
        n_tiles = gl.cdiv(seq_kv, BLOCK_N)
    return m0, q_row, kv_row, o_row, n_tiles


@gluon.jit
def _load_kv(k_desc, v_desc, k_smem, v_smem, k_ready, v_ready, kv_empty, kv_row, i, g,
             BLOCK_N: gl.constexpr, STAGES: gl.constexpr):
    """K and V of KV tile i of an item into ring position g + i, once every consumer freed it."""
    stage = (g + i) % STAGES
    # a fresh barrier's "previous phase" (parity 1) counts as complete: the first STAGES fills do
    # not wait
    mbarrier.wait(kv_empty.index(stage), (((g + i) // STAGES) & 1) ^ 1)
    mbarrier.expect(k_ready.index(stage), k_desc.block_type.nbytes)
    _tma_load(k_desc, [kv_row + i * BLOCK_N, 0], k_ready.index(stage), k_smem.index(stage))
    mbarrier.expect(v_ready.index(stage), v_desc.block_type.nbytes)
    _tma_load(v_desc, [kv_row + i * BLOCK_N, 0], v_ready.index(stage), v_smem.index(stage))


@gluon.jit
def _produce_item(q_desc, k_desc, v_desc, q_smem, k_smem, v_smem,
                  q_ready, q_empty, k_ready, v_ready, kv_empty, t, g, k,
                  n_qt, n_bh, H_Q, GROUP, seq_q, seq_kv, q_rows_b, q_rows_h, kv_rows_b, kv_rows_h,
                  BLOCK_N: gl.constexpr, STAGES: gl.constexpr, CONSUMERS: gl.constexpr,
                  CAUSAL: gl.constexpr, PERSISTENT: gl.constexpr, QBUF: gl.constexpr,
    LONGEST_FIRST: gl.constexpr):
    """Work item t (the CTA's k-th; its KV tiles from g on the stage ring): its Q slices into
    its Q buffer once its consumers freed it, and K and V of every KV tile, STAGES ahead.
    Returns the ring position after it. Persistent with one Q buffer, the item's first STAGES
    KV tiles go first: its Q waits for the last item's O to leave, and its K/V need not (one item
    per CTA keeps Q first, as before the persistent rung)."""
    m0, q_row, kv_row, o_row, n_tiles = _tile_rows(
        t, n_qt, n_bh, H_Q, GROUP, seq_q, seq_kv, q_rows_b, q_rows_h, kv_rows_b, kv_rows_h,
        0, 0, BLOCK_N, CONSUMERS, CAUSAL, PERSISTENT, LONGEST_FIRST)
    early = gl.minimum(n_tiles, STAGES) if PERSISTENT and QBUF == 1 else 0
    for i in range(early):
        _load_kv(k_desc, v_desc, k_smem, v_smem, k_ready, v_ready, kv_empty, kv_row, i, g,
                 BLOCK_N, STAGES)
    qb = (k % QBUF) * CONSUMERS
    for c in gl.static_range(CONSUMERS):
        # parity 1 of a fresh barrier counts as complete: a buffer's first fill does not wait
        mbarrier.wait(q_empty.index(qb + c), ((k // QBUF) & 1) ^ 1)
        mbarrier.expect(q_ready.index(qb + c), q_desc.block_type.nbytes)
        _tma_load(q_desc, [q_row + c * 64, 0], q_ready.index(qb + c), q_smem.index(qb + c))
    for i in range(early, n_tiles):
        _load_kv(k_desc, v_desc, k_smem, v_smem, k_ready, v_ready, kv_empty, kv_row, i, g,
                 BLOCK_N, STAGES)
    return g + n_tiles


@gluon.jit
def _producer(q_desc, k_desc, v_desc, q_smem, k_smem, v_smem,
              q_ready, q_empty, k_ready, v_ready, kv_empty,
              first, last, step, n_qt, n_bh, H_Q, GROUP, seq_q, seq_kv,
              q_rows_b, q_rows_h, kv_rows_b, kv_rows_h,
              BLOCK_N: gl.constexpr, STAGES: gl.constexpr, CONSUMERS: gl.constexpr,
              CAUSAL: gl.constexpr, PERSISTENT: gl.constexpr, QBUF: gl.constexpr,
    LONGEST_FIRST: gl.constexpr):
    """One warp: every work item of the CTA in turn (one, unless PERSISTENT)."""
    if PERSISTENT:
        g = 0  # KV tiles loaded so far: the stage and its phase
        k = 0  # work items so far: the Q buffer and its phase
        for t in range(first, last, step):
            g = _produce_item(q_desc, k_desc, v_desc, q_smem, k_smem, v_smem, q_ready, q_empty,
                              k_ready, v_ready, kv_empty, t, g, k, n_qt, n_bh, H_Q, GROUP,
                              seq_q, seq_kv, q_rows_b, q_rows_h, kv_rows_b, kv_rows_h, BLOCK_N,
                              STAGES, CONSUMERS, CAUSAL, PERSISTENT, QBUF, LONGEST_FIRST)
            k += 1
    else:  # straight-line: no loop-carried ring position where one item is all there is
        _produce_item(q_desc, k_desc, v_desc, q_smem, k_smem, v_smem, q_ready, q_empty,
                      k_ready, v_ready, kv_empty, first, 0, 0, n_qt, n_bh, H_Q, GROUP,
                      seq_q, seq_kv, q_rows_b, q_rows_h, kv_rows_b, kv_rows_h, BLOCK_N,
                      STAGES, CONSUMERS, CAUSAL, PERSISTENT, QBUF, LONGEST_FIRST)


@gluon.jit
def _scores(q, k_smem, k_ready, i, STAGES: gl.constexpr, s_layout: gl.constexpr,
            BLOCK_N: gl.constexpr):
    """Issue S = Q K_i^T (asynchronous) once K_i has landed."""
    stage = i % STAGES
    mbarrier.wait(k_ready.index(stage), (i // STAGES) & 1)
    zero = gl.zeros([64, BLOCK_N], gl.float32, s_layout)
    return warpgroup_mma(q, k_smem.index(stage).permute((1, 0)), zero, use_acc=False,
                         is_async=True)


@gluon.jit
def _p_operand(p, P_DTYPE: gl.constexpr, PACKED: gl.constexpr):
    """P (fp32) in the P V wgmma's dtype. PACKED: two scores per cvt.rn.{f16,bf16}x2.f32 (FA4's
    conversion); Triton's own `.to` converts one at a time and packs the halves with a PRMT,
    32 more instructions a 128-key tile (session 105's SASS reading). Pairs are adjacent
    registers of the accumulator layout; the first element goes in the low half."""
    if PACKED and P_DTYPE == gl.float16:
        return gl.inline_asm_elementwise("cvt.rn.f16x2.f32 $0, $2, $1;", "=r,r,r", [p],
                                         dtype=gl.float16, is_pure=True, pack=2)
    elif PACKED:
        return gl.inline_asm_elementwise("cvt.rn.bf16x2.f32 $0, $2, $1;", "=r,r,r", [p],
                                         dtype=gl.bfloat16, is_pure=True, pack=2)
    else:
        return p.to(P_DTYPE)


@gluon.jit
def _softmax(s, m_i, l_i, i, rows, seq_kv, causal_shift, qk_scale,
             MASK: gl.constexpr, CAUSAL: gl.constexpr, BLOCK_N: gl.constexpr,
             s_layout: gl.constexpr, p_layout: gl.constexpr, o_layout: gl.constexpr,
             P_DTYPE: gl.constexpr, TILE_MATH: gl.constexpr):
    """Online softmax of one score tile: (P as the P V operand, new max, new sum, O's factor).
    TILE_MATH (the rungs of session 105's SASS reading, docs/prefill_attention.md): 3 masks the
    raw scores, causal against one key limit a row, and converts P two at a time (FA4's
    per-tile math); 2 the same with the causal mask's two compares a score (session 106's full
    kernel); 1 that with Triton's one-at-a-time conversion; 0 that masking the scaled scores
    (the kernel up to session 104)."""
    if MASK:
        cols = i * BLOCK_N + gl.arange(0, BLOCK_N, layout=gl.SliceLayout(0, s_layout))
        if CAUSAL and TILE_MATH >= 3:
            # one key limit a row: key j is kept when j < seq_kv and j <= row + shift, i.e. j
            # below the smaller of seq_kv and row + shift + 1 (FA4's mask: a compare and a
            # select a score where two compares and their AND were)
            limits = gl.minimum(rows + (causal_shift + 1), seq_kv)
            keep = gl.expand_dims(cols, 0) < gl.expand_dims(limits, 1)
        else:
            keep = gl.expand_dims(cols < seq_kv, 0)
            if CAUSAL:
                keep = keep & (gl.expand_dims(cols, 0) <= gl.expand_dims(rows + causal_shift, 1))
        if TILE_MATH >= 1:
            # the raw scores are masked, not the scaled ones: with qk_scale > 0 a masked -inf
            # stays -inf once scaled, and the scale and the max's subtraction below stay one
            # FFMA a score (masking s * qk_scale splits it into an FMUL and an FADD on every
            # diagonal tile: FA4's order)
            s = gl.where(keep, s, float("-inf"))
            m_new = gl.maximum(m_i, gl.max(s, 1) * qk_scale)
            s = s * qk_scale - gl.expand_dims(m_new, 1)
        else:
            s = gl.where(keep, s * qk_scale, float("-inf"))
            m_new = gl.maximum(m_i, gl.max(s, 1))
            s = s - gl.expand_dims(m_new, 1)
    else:
        m_new = gl.maximum(m_i, gl.max(s, 1) * qk_scale)
        s = s * qk_scale - gl.expand_dims(m_new, 1)
    p = gl.exp2(s)
    alpha = gl.exp2(m_i - m_new)
    l_new = l_i * alpha + gl.sum(p, 1)
    p_op = gl.convert_layout(_p_operand(p, P_DTYPE, TILE_MATH >= 2), p_layout)
    alpha_o = gl.convert_layout(alpha, gl.SliceLayout(1, o_layout))
    return p_op, m_new, l_new, alpha_o


@gluon.jit
def _release(kv_empty, i, STAGES: gl.constexpr):
    mbarrier.arrive(kv_empty.index(i % STAGES), count=1)


@gluon.jit
def _turn_wait(turn, n, SLICE: gl.constexpr, PINGPONG: gl.constexpr):
    """Wait until the other consumer has issued its turn n - 1 (consumer 0's turn 0 is free:
    the parity of a phase not yet begun passes at once)."""
    if PINGPONG:
        mbarrier.wait(turn.index(SLICE), (n & 1) ^ (1 - SLICE))


@gluon.jit
def _turn_pass(turn, SLICE: gl.constexpr, PINGPONG: gl.constexpr):
    """This consumer's wgmmas of its turn are issued: the other consumer's turn may start."""
    if PINGPONG:
        mbarrier.arrive(turn.index(1 - SLICE), count=1)


@gluon.jit
def _pv(p_op, o, v_smem, v_ready, i, STAGES: gl.constexpr):
    """Issue O += P V_i (asynchronous) once V_i has landed."""
    stage = i % STAGES
    mbarrier.wait(v_ready.index(stage), (i // STAGES) & 1)
    return warpgroup_mma(p_op, v_smem.index(stage), o, is_async=True)


@gluon.jit
def _tile_serial(q, o, m_i, l_i, i, base, k_smem, v_smem, k_ready, v_ready, kv_empty,
                 rows, seq_kv, causal_shift, qk_scale,
                 MASK: gl.constexpr, CAUSAL: gl.constexpr, BLOCK_N: gl.constexpr,
                 STAGES: gl.constexpr, s_layout: gl.constexpr, p_layout: gl.constexpr,
                 o_layout: gl.constexpr, TILE_MATH: gl.constexpr):
    """One KV tile (i of its item, base + i of the stage ring), every wgmma waited on before the
    next step (the no-overlap rung)."""
    s = _scores(q, k_smem, k_ready, base + i, STAGES, s_layout, BLOCK_N)
    s = warpgroup_mma_wait(0, deps=(s, ))
    p_op, m_i, l_i, alpha_o = _softmax(s, m_i, l_i, i, rows, seq_kv, causal_shift, qk_scale,
                                       MASK, CAUSAL, BLOCK_N, s_layout, p_layout, o_layout,
                                       v_smem.dtype, TILE_MATH)
    o = o * gl.expand_dims(alpha_o, 1)
    o = _pv(p_op, o, v_smem, v_ready, base + i, STAGES)
    o, p_op = warpgroup_mma_wait(0, deps=(o, p_op))
    _release(kv_empty, base + i, STAGES)
    return o, m_i, l_i


@gluon.jit
def _tile_overlapped(q, o, p_prev, m_i, l_i, i, base, k_smem, v_smem, k_ready, v_ready, kv_empty,
                     rows, seq_kv, causal_shift, qk_scale,
                     MASK: gl.constexpr, CAUSAL: gl.constexpr, BLOCK_N: gl.constexpr,
                     STAGES: gl.constexpr, s_layout: gl.constexpr, p_layout: gl.constexpr,
                     o_layout: gl.constexpr, turn, n, SLICE: gl.constexpr,
                     PINGPONG: gl.constexpr, TILE_MATH: gl.constexpr):
    """Tile i's scores and tile i-1's P V in flight together (this consumer's turn n); tile
    i's softmax under P V."""
    _turn_wait(turn, n, SLICE, PINGPONG)
    s = _scores(q, k_smem, k_ready, base + i, STAGES, s_layout, BLOCK_N)
    o = _pv(p_prev, o, v_smem, v_ready, base + i - 1, STAGES)
    _turn_pass(turn, SLICE, PINGPONG)
    s = warpgroup_mma_wait(1, deps=(s, ))  # the scores (issued first) are done; P V may not be
    p_op, m_i, l_i, alpha_o = _softmax(s, m_i, l_i, i, rows, seq_kv, causal_shift, qk_scale,
                                       MASK, CAUSAL, BLOCK_N, s_layout, p_layout, o_layout,
                                       v_smem.dtype, TILE_MATH)
    # p_prev in deps: its registers are read by the wgmma in flight and must stay untouched
    o, p_prev = warpgroup_mma_wait(0, deps=(o, p_prev))
    _release(kv_empty, base + i - 1, STAGES)
    o = o * gl.expand_dims(alpha_o, 1)
    return o, p_op, m_i, l_i


@gluon.jit
def _consume_item(q, q_empty_bar, k_smem, v_smem, k_ready, v_ready, kv_empty,
                  o_desc, o_ptr, o_row, stride_om, g,
                  m0, seq_q, seq_kv, causal_shift, qk_scale, n_tiles,
                  SLICE: gl.constexpr, HEAD_DIM: gl.constexpr, BLOCK_N: gl.constexpr,
                  STAGES: gl.constexpr, CAUSAL: gl.constexpr, OVERLAP: gl.constexpr,
                  turn, n0, PINGPONG: gl.constexpr, TILE_MATH: gl.constexpr):
    """Rows [m0 + 64 SLICE, m0 + 64 SLICE + 64) of one work item, its KV tiles at g, g + 1, ...
    of the stage ring: the KV loop and the epilogue; then Q's buffer is released (q_empty_bar).
    PINGPONG: this item's turns are n0 .. n0 + n_tiles."""
    s_layout: gl.constexpr = gl.NVMMADistributedLayout(
        version=[3, 0], warps_per_cta=[4, 1], instr_shape=[16, BLOCK_N, 16])
    o_layout: gl.constexpr = gl.NVMMADistributedLayout(
        version=[3, 0], warps_per_cta=[4, 1], instr_shape=[16, HEAD_DIM, 16])
    p_layout: gl.constexpr = gl.DotOperandLayout(operand_index=0, parent=o_layout, k_width=2)

    r0 = m0 + SLICE * 64
    rows = r0 + gl.arange(0, 64, layout=gl.SliceLayout(1, s_layout))
    # Tiles [0, n_full) are visible to all 64 rows; [n_full, n_mine) hold this slice's diagonal
    # or the ragged tail; [n_mine, n_tiles) were loaded for later slices only.
    if CAUSAL:
        n_mine = gl.cdiv(gl.minimum(seq_kv, r0 + 64 + causal_shift), BLOCK_N)
        n_full = gl.minimum(seq_kv, r0 + causal_shift + 1) // BLOCK_N
    else:
        n_mine = n_tiles
        n_full = seq_kv // BLOCK_N
    n_full = gl.minimum(n_full, n_mine)

    m_i = gl.full([64], float("-inf"), gl.float32, layout=gl.SliceLayout(1, s_layout))
    l_i = gl.zeros([64], gl.float32, layout=gl.SliceLayout(1, s_layout))
    o = gl.zeros([64, HEAD_DIM], gl.float32, layout=o_layout)

    if OVERLAP:
        # prologue: tile 0's scores alone (rows all see key 0, so the running max is finite
        # after it and later fully masked rows of a tile keep it)
        _turn_wait(turn, n0, SLICE, PINGPONG)
        s = _scores(q, k_smem, k_ready, g, STAGES, s_layout, BLOCK_N)
        _turn_pass(turn, SLICE, PINGPONG)
        s = warpgroup_mma_wait(0, deps=(s, ))
        if n_full > 0:
            p_op, m_i, l_i, alpha_o = _softmax(s, m_i, l_i, 0, rows, seq_kv, causal_shift,
                                               qk_scale, False, CAUSAL, BLOCK_N, s_layout,
                                               p_layout, o_layout, v_smem.dtype, TILE_MATH)
        else:
            p_op, m_i, l_i, alpha_o = _softmax(s, m_i, l_i, 0, rows, seq_kv, causal_shift,
                                               qk_scale, True, CAUSAL, BLOCK_N, s_layout,
                                               p_layout, o_layout, v_smem.dtype, TILE_MATH)
        for i in range(1, n_full):
            o, p_op, m_i, l_i = _tile_overlapped(q, o, p_op, m_i, l_i, i, g, k_smem, v_smem,
                                                 k_ready, v_ready, kv_empty, rows, seq_kv,
                                                 causal_shift, qk_scale, False, CAUSAL, BLOCK_N,
                                                 STAGES, s_layout, p_layout, o_layout, turn,
                                                 n0 + i, SLICE, PINGPONG, TILE_MATH)
        for i in range(gl.maximum(n_full, 1), n_mine):
            o, p_op, m_i, l_i = _tile_overlapped(q, o, p_op, m_i, l_i, i, g, k_smem, v_smem,
                                                 k_ready, v_ready, kv_empty, rows, seq_kv,
                                                 causal_shift, qk_scale, True, CAUSAL, BLOCK_N,
                                                 STAGES, s_layout, p_layout, o_layout, turn,
                                                 n0 + i, SLICE, PINGPONG, TILE_MATH)
        # epilogue: the last tile's P V
        _turn_wait(turn, n0 + n_mine, SLICE, PINGPONG)
        o = _pv(p_op, o, v_smem, v_ready, g + n_mine - 1, STAGES)
        _turn_pass(turn, SLICE, PINGPONG)
        o, p_op = warpgroup_mma_wait(0, deps=(o, p_op))
        _release(kv_empty, g + n_mine - 1, STAGES)
    else:
        for i in range(0, n_full):
            o, m_i, l_i = _tile_serial(q, o, m_i, l_i, i, g, k_smem, v_smem, k_ready, v_ready,
                                       kv_empty, rows, seq_kv, causal_shift, qk_scale, False,
                                       CAUSAL, BLOCK_N, STAGES, s_layout, p_layout, o_layout,
                                       TILE_MATH)
        for i in range(n_full, n_mine):
            o, m_i, l_i = _tile_serial(q, o, m_i, l_i, i, g, k_smem, v_smem, k_ready, v_ready,
                                       kv_empty, rows, seq_kv, causal_shift, qk_scale, True,
                                       CAUSAL, BLOCK_N, STAGES, s_layout, p_layout, o_layout,
                                       TILE_MATH)
    # tiles past this slice's diagonal: wait until they landed (so this release belongs to
    # their fill), then release them unread
    # (PINGPONG: one empty turn each, as the other consumer takes one per tile it computes)
    for i in range(n_mine, n_tiles):
        _turn_wait(turn, n0 + i + 1, SLICE, PINGPONG)
        _turn_pass(turn, SLICE, PINGPONG)
        mbarrier.wait(v_ready.index((g + i) % STAGES), ((g + i) // STAGES) & 1)
        mbarrier.wait(k_ready.index((g + i) % STAGES), ((g + i) // STAGES) & 1)
        _release(kv_empty, g + i, STAGES)

    # epilogue: every real row saw key 0, so l_i > 0; the guard only covers padding rows
    l_i = gl.where(l_i > 0.0, l_i, 1.0)
    out = (o / gl.expand_dims(gl.convert_layout(l_i, gl.SliceLayout(1, o_layout)), 1))
    out = out.to(o_desc.dtype)
    if r0 + 64 <= seq_q:
        # a whole slice leaves by TMA, through Q's buffer (Q is no longer read)
        q.store(out)
        fence_async_shared()
        _tma_store(o_desc, [o_row + r0, 0], q)
        tma.store_wait(0)  # the buffer is read by the store until here
    else:
        # a ragged slice must not write its padding rows into the next head's output
        offs_m = r0 + gl.arange(0, 64, layout=gl.SliceLayout(1, o_layout))
        offs_d = gl.arange(0, HEAD_DIM, layout=gl.SliceLayout(0, o_layout))
        ptrs = (o_ptr + (o_row + gl.expand_dims(offs_m, 1)).to(gl.int64) * stride_om
                + gl.expand_dims(offs_d, 0))
        gl.store(ptrs, out, mask=gl.expand_dims(offs_m < seq_q, 1))
    # every warp's store has read the buffer (store_wait is per issuing thread; the arrive is
    # one thread's) before the producer may load the next item's Q into it
    _thread_barrier()
    mbarrier.arrive(q_empty_bar, count=1)


@gluon.jit
def _consumer_item(q_smem, k_smem, v_smem, q_ready, q_empty, k_ready, v_ready, kv_empty,
                   o_desc, o_ptr, stride_om, t, g, k, n_qt, n_bh, H_Q, GROUP, seq_q, seq_kv,
                   q_rows_b, q_rows_h, kv_rows_b, kv_rows_h, o_rows_b, o_rows_h, qk_scale,
                   SLICE: gl.constexpr, HEAD_DIM: gl.constexpr, BLOCK_N: gl.constexpr,
                   STAGES: gl.constexpr, CONSUMERS: gl.constexpr, CAUSAL: gl.constexpr,
                   OVERLAP: gl.constexpr, PERSISTENT: gl.constexpr, QBUF: gl.constexpr,
                   LONGEST_FIRST: gl.constexpr, turn, PINGPONG: gl.constexpr,
                   TILE_MATH: gl.constexpr):
    """This consumer's slice of work item t (the CTA's k-th, its KV tiles from g on the stage
    ring, its turns from g + k on: n_tiles + 1 an item); returns the ring position after it."""
    m0, q_row, kv_row, o_row, n_tiles = _tile_rows(
        t, n_qt, n_bh, H_Q, GROUP, seq_q, seq_kv, q_rows_b, q_rows_h, kv_rows_b, kv_rows_h,
        o_rows_b, o_rows_h, BLOCK_N, CONSUMERS, CAUSAL, PERSISTENT, LONGEST_FIRST)
    qi = (k % QBUF) * CONSUMERS + SLICE
    mbarrier.wait(q_ready.index(qi), (k // QBUF) & 1)
    _consume_item(q_smem.index(qi), q_empty.index(qi), k_smem, v_smem, k_ready, v_ready,
                  kv_empty, o_desc, o_ptr, o_row, stride_om, g, m0, seq_q, seq_kv,
                  seq_kv - seq_q, qk_scale, n_tiles, SLICE, HEAD_DIM, BLOCK_N, STAGES,
                  CAUSAL, OVERLAP, turn, g + k, PINGPONG, TILE_MATH)
    return g + n_tiles


@gluon.jit
def _consumer(q_smem, k_smem, v_smem, q_ready, q_empty, k_ready, v_ready, kv_empty,
              o_desc, o_ptr, stride_om,
              first, last, step, n_qt, n_bh, H_Q, GROUP, seq_q, seq_kv,
              q_rows_b, q_rows_h, kv_rows_b, kv_rows_h, o_rows_b, o_rows_h, qk_scale,
              SLICE: gl.constexpr, HEAD_DIM: gl.constexpr, BLOCK_N: gl.constexpr,
              STAGES: gl.constexpr, CONSUMERS: gl.constexpr, CAUSAL: gl.constexpr,
              OVERLAP: gl.constexpr, PERSISTENT: gl.constexpr, QBUF: gl.constexpr,
              LONGEST_FIRST: gl.constexpr, turn, PINGPONG: gl.constexpr,
              TILE_MATH: gl.constexpr):
    """One consumer's slice of every work item of the CTA, in the producer's order."""
    if PERSISTENT:
        g = 0  # KV tiles consumed so far: the stage and its phase
        k = 0  # work items so far: the Q buffer and its phase
        for t in range(first, last, step):
            g = _consumer_item(q_smem, k_smem, v_smem, q_ready, q_empty, k_ready, v_ready,
                               kv_empty, o_desc, o_ptr, stride_om, t, g, k, n_qt, n_bh, H_Q,
                               GROUP, seq_q, seq_kv, q_rows_b, q_rows_h, kv_rows_b, kv_rows_h,
                               o_rows_b, o_rows_h, qk_scale, SLICE, HEAD_DIM, BLOCK_N, STAGES,
                               CONSUMERS, CAUSAL, OVERLAP, PERSISTENT, QBUF, LONGEST_FIRST,
                               turn, PINGPONG, TILE_MATH)
            k += 1
    else:
        _consumer_item(q_smem, k_smem, v_smem, q_ready, q_empty, k_ready, v_ready, kv_empty,
                       o_desc, o_ptr, stride_om, first, 0, 0, n_qt, n_bh, H_Q, GROUP, seq_q,
                       seq_kv, q_rows_b, q_rows_h, kv_rows_b, kv_rows_h, o_rows_b, o_rows_h,
                       qk_scale, SLICE, HEAD_DIM, BLOCK_N, STAGES, CONSUMERS, CAUSAL, OVERLAP,
                       PERSISTENT, QBUF, LONGEST_FIRST, turn, PINGPONG, TILE_MATH)


@gluon.jit
def _fa3_fwd_kernel(
    # TMA descriptors over the [rows, HEAD_DIM] views: Q and O in 64-row boxes, K and V in
    # BLOCK_N-row boxes
    q_desc, k_desc, v_desc, o_desc, o_ptr,
    # sizes (n_bh: batch x query heads)
    H_Q, n_bh, GROUP, seq_q, seq_kv, sm_scale,
    # rows of the [rows, D] views between batches and heads (stride // row stride)
    q_rows_b, q_rows_h, kv_rows_b, kv_rows_h, o_rows_b, o_rows_h, stride_om,
    # meta-parameters
    HEAD_DIM: gl.constexpr, BLOCK_N: gl.constexpr, STAGES: gl.constexpr,
    CAUSAL: gl.constexpr, OVERLAP: gl.constexpr, CONSUMERS: gl.constexpr,
    PERSISTENT: gl.constexpr, QBUF: gl.constexpr,
    LONGEST_FIRST: gl.constexpr, PINGPONG: gl.constexpr, TILE_MATH: gl.constexpr,
):
    """Out[b, h, tile] = softmax(Q K^T * sm_scale) V for 64 x CONSUMERS query rows of a head per
    work item: one item per CTA on a (query tiles, n_bh) grid, or, PERSISTENT, one item per
    round (slots pid, pid + grid, ...; _tile_of says which item each slot is) on a grid of at
    most one CTA per SM, the next item's Q loading into a second buffer (QBUF 2) and its K/V
    into free stages while this one computes."""
    # the turns pair two consumers, and only the overlapped loop takes them: anything else would
    # leave one consumer waiting for a turn the other never passes
    gl.static_assert(not PINGPONG or (CONSUMERS == 2 and OVERLAP))
    n_qt = gl.cdiv(seq_q, 64 * CONSUMERS)
    if PERSISTENT:
        first = gl.program_id(0)
        last = n_qt * n_bh
        step = gl.num_programs(0)
    else:
        first = gl.program_id(1) * n_qt + gl.program_id(0)
        last = first + 1
        step = 1
    qk_scale = sm_scale * 1.4426950408889634  # log2(e): exp2 is the native SFU op

    dtype: gl.constexpr = q_desc.dtype
    q_smem = gl.allocate_shared_memory(dtype, [QBUF * CONSUMERS, 64, HEAD_DIM], q_desc.layout)
    k_smem = gl.allocate_shared_memory(dtype, [STAGES, BLOCK_N, HEAD_DIM], k_desc.layout)
    v_smem = gl.allocate_shared_memory(dtype, [STAGES, BLOCK_N, HEAD_DIM], v_desc.layout)
    q_ready = gl.allocate_shared_memory(gl.int64, [QBUF * CONSUMERS, 1], mbarrier.MBarrierLayout())
    q_empty = gl.allocate_shared_memory(gl.int64, [QBUF * CONSUMERS, 1], mbarrier.MBarrierLayout())
    k_ready = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
    v_ready = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
    kv_empty = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
    # PINGPONG's turn barriers: turn[c] completes a phase when the other consumer has issued
    turn = gl.allocate_shared_memory(gl.int64, [2, 1], mbarrier.MBarrierLayout())
    for c in gl.static_range(2):
        mbarrier.init(turn.index(c), count=1)
    for c in gl.static_range(QBUF * CONSUMERS):
        mbarrier.init(q_ready.index(c), count=1)
        mbarrier.init(q_empty.index(c), count=1)
    for stage in gl.static_range(STAGES):
        mbarrier.init(k_ready.index(stage), count=1)
        mbarrier.init(v_ready.index(stage), count=1)
        mbarrier.init(kv_empty.index(stage), count=CONSUMERS)  # one arrival each
    fence_async_shared()  # the initialised barriers are visible to the TMA unit

    # One call per consumer count: the partition list is static. Worker arguments are the same
    # tuple for every consumer but its slice index, written out: a tuple built beforehand and
    # concatenated with the index does not compile as a partition's arguments (Triton 3.6, 3.9).
    if CONSUMERS == 3:
        gl.warp_specialize([
            (_consumer, (q_smem, k_smem, v_smem, q_ready, q_empty, k_ready, v_ready, kv_empty,
                         o_desc, o_ptr, stride_om, first, last, step, n_qt, n_bh, H_Q, GROUP,
                         seq_q, seq_kv, q_rows_b, q_rows_h, kv_rows_b, kv_rows_h, o_rows_b,
                         o_rows_h, qk_scale, 0, HEAD_DIM, BLOCK_N, STAGES, CONSUMERS, CAUSAL,
                         OVERLAP, PERSISTENT, QBUF, LONGEST_FIRST, turn, PINGPONG, TILE_MATH)),
            (_consumer, (q_smem, k_smem, v_smem, q_ready, q_empty, k_ready, v_ready, kv_empty,
                         o_desc, o_ptr, stride_om, first, last, step, n_qt, n_bh, H_Q, GROUP,
                         seq_q, seq_kv, q_rows_b, q_rows_h, kv_rows_b, kv_rows_h, o_rows_b,
                         o_rows_h, qk_scale, 1, HEAD_DIM, BLOCK_N, STAGES, CONSUMERS, CAUSAL,
                         OVERLAP, PERSISTENT, QBUF, LONGEST_FIRST, turn, PINGPONG, TILE_MATH)),
            (_consumer, (q_smem, k_smem, v_smem, q_ready, q_empty, k_ready, v_ready, kv_empty,
                         o_desc, o_ptr, stride_om, first, last, step, n_qt, n_bh, H_Q, GROUP,
                         seq_q, seq_kv, q_rows_b, q_rows_h, kv_rows_b, kv_rows_h, o_rows_b,
                         o_rows_h, qk_scale, 2, HEAD_DIM, BLOCK_N, STAGES, CONSUMERS, CAUSAL,
                         OVERLAP, PERSISTENT, QBUF, LONGEST_FIRST, turn, PINGPONG, TILE_MATH)),
            (_producer, (q_desc, k_desc, v_desc, q_smem, k_smem, v_smem, q_ready, q_empty,
                         k_ready, v_ready, kv_empty, first, last, step, n_qt, n_bh, H_Q, GROUP,
                         seq_q, seq_kv, q_rows_b, q_rows_h, kv_rows_b, kv_rows_h, BLOCK_N,
                         STAGES, CONSUMERS, CAUSAL, PERSISTENT, QBUF, LONGEST_FIRST)),
        ], [4, 4, 1], [CONSUMER_REGS_3, CONSUMER_REGS_3, PRODUCER_REGS])
    else:
        gl.warp_specialize([
            (_consumer, (q_smem, k_smem, v_smem, q_ready, q_empty, k_ready, v_ready, kv_empty,
                         o_desc, o_ptr, stride_om, first, last, step, n_qt, n_bh, H_Q, GROUP,
                         seq_q, seq_kv, q_rows_b, q_rows_h, kv_rows_b, kv_rows_h, o_rows_b,
                         o_rows_h, qk_scale, 0, HEAD_DIM, BLOCK_N, STAGES, CONSUMERS, CAUSAL,
                         OVERLAP, PERSISTENT, QBUF, LONGEST_FIRST, turn, PINGPONG, TILE_MATH)),
            (_consumer, (q_smem, k_smem, v_smem, q_ready, q_empty, k_ready, v_ready, kv_empty,
                         o_desc, o_ptr, stride_om, first, last, step, n_qt, n_bh, H_Q, GROUP,
                         seq_q, seq_kv, q_rows_b, q_rows_h, kv_rows_b, kv_rows_h, o_rows_b,
                         o_rows_h, qk_scale, 1, HEAD_DIM, BLOCK_N, STAGES, CONSUMERS, CAUSAL,
                         OVERLAP, PERSISTENT, QBUF, LONGEST_FIRST, turn, PINGPONG, TILE_MATH)),
            (_producer, (q_desc, k_desc, v_desc, q_smem, k_smem, v_smem, q_ready, q_empty,
                         k_ready, v_ready, kv_empty, first, last, step, n_qt, n_bh, H_Q, GROUP,
                         seq_q, seq_kv, q_rows_b, q_rows_h, kv_rows_b, kv_rows_h, BLOCK_N,
                         STAGES, CONSUMERS, CAUSAL, PERSISTENT, QBUF, LONGEST_FIRST)),
        ], [4, 1], [CONSUMER_REGS_2, PRODUCER_REGS])

# fmt: on
