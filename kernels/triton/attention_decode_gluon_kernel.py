"""Split-KV attention decode in Gluon: a TMA producer warp and one wgmma consumer warpgroup.

Why a second decode kernel: the `tl` decode (attention_decode_kernel.py) issues its K/V loads
from the same four warps that run the dots and the softmax, through cp.async, and Triton's
pipeliner gives it mma.sync below 64 query rows. Where a KV group stacks many query rows (GQA 8
at q_len 4-8: 32-64 rows) the tile's compute sits between the loads, and own decode reached
0.67-0.82 of the H200's HBM read ceiling there (session 58). Here a producer warp keeps STAGES
K/V tiles in flight by TMA whatever the consumer does, and the consumer's dots are wgmma.

One CTA owns (batch, KV head, M block, KV split), as the `tl` kernel's programs do, and
writes the same outputs (the final rows, or fp32 partials and log2-sum-exps that
attention_decode_kernel._decode_reduce_kernel merges, or with FUSED_REDUCE the unit's last split
to finish merges, as the `tl` kernel's fused merge does), so the launcher can time the two
kernels, and the two merges, against each other for each problem:
  producer   one warp (48 registers): the 64-row Q box of the group's stacked rows (the
             G x Sq rows r = g * Sq + i of one KV group lie next to each other in a packed
             [B, Hq, Sq, D] query), then K and V of every KV tile of the split, STAGES ahead.
             A paged tile is one TMA box when a page holds whole tiles, else one box per page
             (pages of 16 under 64-key tiles: four lookups, four boxes, one barrier).
  consumer   the default partition (4 warps): S = Q K^T and O += P V by wgmma (m64: rows past
             the group's are padding and never stored), the online softmax in registers.
Rows past a sequence's end in its last tile are real cache memory that may hold anything, NaN
included: their scores are masked, and before that tile's P V the consumer zeroes those V rows
in shared memory (0 * NaN would be NaN). A box that starts past the end reloads the sequence's
last page instead (every box of a tile is counted on its barrier, so none may be skipped).

BALANCED cuts the work another way: every (batch, KV head, M block) unit's KV tiles laid end to
end, the CTAs take equal runs of them (per = cdiv(total tiles, CTAs), at least the launcher's
per_min). A run may end inside one unit and go on through the next; each piece is a segment
with its own partial, in slot (CTA - the CTA holding the unit's first tile), and the CTA that
finishes a unit sets the slots after its own to lse -inf, which the reduction skips. With
ragged lengths, a split of each sequence into equal parts, or into parts of the longest's size,
leaves the SMs that drew the long sequences running last (batch 16, KV 4k: 0.55-0.64 of the
H200's read ceiling at GQA 8, session 64); equal runs of tiles do not.

M_ROWS below 64 (the row split) cuts one unsplit unit's stacked rows over M_BLOCKS CTAs instead
of its KV range: each CTA owns M_ROWS rows (its Q box starts at them; the box's rows past them
pad the m64 wgmma and are never stored) and reads the unit's whole KV range, so no partial is
written and none merged. The CTAs of one unit sit next to each other in item order and start
together, so each K/V tile is read from HBM once and from L2 by the others while it is still
there. Where a batch has fewer units than SMs (batch 16 at GQA 8: 64 units on 132 SMs) this
puts the idle SMs to work without a merge; a KV split does it with one. On an H100 it bought
nothing: 0.4-1.5% slower than one CTA a unit at five batch-16 GQA-8 points (session 98,
results/h100/_logs/session98/row_split_probe.txt), so the tuner does not offer it
(attention_decode.ROW_SPLITS); configs that name ROWS run it.

ORDERED keeps the per-item split but deals the items to the CTAs' round-robin slots longest
first (the launcher's plan, attention_decode_gluon.longest_first): where a ragged batch has
more items than CTAs (batch 64 x 4 KV heads: 256 items on 132), CTA c otherwise runs items c
and c + 132 whatever their lengths, and the last CTA to finish holds two long sequences
(batch 64, KV 4k, ragged: 0.81-0.86 of the H200's read ceiling with the Gluon kernel against
0.90-0.97 at equal lengths, session 67).
"""

from __future__ import annotations

from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import (
    fence_async_shared,
    mbarrier,
    warpgroup_mma,
    warpgroup_mma_wait,
)

from .gluon_compat import thread_barrier as _thread_barrier
from .gluon_compat import tma_load as _tma_load

ROWS = 64  # query rows per CTA (wgmma m64)
# 48, not the least (24): Triton 3.6 spilled the producer's page lookups and run state at 24;
# the consumer cannot use what the producer gives back (it launched at its 255 registers)
PRODUCER_REGS = gl.constexpr(48)


# fmt: off
# Kernel argument lists are grouped by kind under comment headers, as in attention_decode_kernel.

@gluon.jit
def _kv_box_row(bt_row, key, kv_row0, kv_len,
                PAGED: gl.constexpr, PAGE_SIZE: gl.constexpr, PER_PAGE: gl.constexpr):
    """First row, in the cache's [rows, *] view, of the box holding key `key`."""
    if PAGED:
        if PER_PAGE:
            # one box per page: the box is the page (key is page-aligned); one past the end
            # reloads the last page, whose rows the consumer masks
            page = gl.load(bt_row + gl.maximum(gl.minimum(key, kv_len - 1), 0) // PAGE_SIZE)
            return page * PAGE_SIZE
        else:
            page = gl.load(bt_row + key // PAGE_SIZE)
            return page * PAGE_SIZE + key % PAGE_SIZE
    else:
        return kv_row0 + key


@gluon.jit
def _item_coords(item, units, M_BLOCKS: gl.constexpr, H_KV: gl.constexpr):
    """Work item `item`'s coordinates (split-major, then batch, KV head, M block): no load."""
    split = item // units
    unit = item % units
    return unit // M_BLOCKS // H_KV, unit // M_BLOCKS % H_KV, unit % M_BLOCKS, split


@gluon.jit
def _item_range(kv_len, split, seq_q, num_splits, longest,
                BLOCK_N: gl.constexpr, CAUSAL: gl.constexpr, SPLIT_BY_LONGEST: gl.constexpr):
    """The KV range [lo, lo + n_tiles * BLOCK_N) of split `split` of a sequence of kv_len keys,
    as attention_decode_kernel's split kernel cuts it, and how many leading tiles need no
    mask."""
    if SPLIT_BY_LONGEST:
        # a sequence grown past `longest` since the launch was prepared (lengths may change
        # within capacity) cuts its own, longer share: no key is left out
        tiles_per_split = gl.cdiv(gl.cdiv(gl.maximum(longest, kv_len), BLOCK_N), num_splits)
    else:
        tiles_per_split = gl.cdiv(gl.cdiv(kv_len, BLOCK_N), num_splits)
    lo = split * tiles_per_split * BLOCK_N
    hi = gl.minimum(lo + tiles_per_split * BLOCK_N, kv_len)
    n_tiles = gl.cdiv(gl.maximum(hi - lo, 0), BLOCK_N)
    if CAUSAL:
        limit = kv_len - seq_q + 1  # keys below this are visible to every query row
    else:
        limit = kv_len
    n_full = gl.maximum(gl.minimum(hi, limit) - lo, 0) // BLOCK_N
    return lo, n_tiles, n_full


@gluon.jit
def _item(item, units, Seqlens, seq_q, num_splits, longest,
          M_BLOCKS: gl.constexpr, H_KV: gl.constexpr, BLOCK_N: gl.constexpr,
          CAUSAL: gl.constexpr, SPLIT_BY_LONGEST: gl.constexpr):
    """Work item `item`: its coordinates, length, KV range and unmasked tiles (the consumer's
    view; the producer takes the same steps in another order, _producer)."""
    off_b, off_hkv, off_mb, split = _item_coords(item, units, M_BLOCKS, H_KV)
    kv_len = gl.load(Seqlens + off_b)
    lo, n_tiles, n_full = _item_range(kv_len, split, seq_q, num_splits, longest, BLOCK_N,
                                      CAUSAL, SPLIT_BY_LONGEST)
    return off_b, off_hkv, off_mb, split, kv_len, lo, n_tiles, n_full


@gluon.jit
def _prefetch_l1(ptr):
    """prefetch.global.L1 of the line holding `ptr`: a later load of it hits this SM's L1."""
    gl.inline_asm_elementwise("prefetch.global.L1 [$1]; // dummy $0", "=r,l", [ptr],
                              dtype=gl.int32, is_pure=False, pack=1)


@gluon.jit
def _ordered(slot, Order, ORDERED: gl.constexpr):
    """The work item in a CTA's round-robin slot: the launcher's longest-first order, or the
    slot itself."""
    if ORDERED:
        return gl.load(Order + slot)
    else:
        return slot


@gluon.jit
def _add(a, b):
    return a + b


@gluon.jit
def _balanced_run(Seqlens, batch, per_min,
                  UNITS_B: gl.constexpr, BLOCK_N: gl.constexpr, BLOCK_B: gl.constexpr):
    """This CTA's run of KV tiles [x0, x1) in the units laid end to end, the tiles per run,
    and the batch b0 holding tile x0 with that batch's first tile `base` (all 4 warps of the
    default partition, before the split into producer and consumer)."""
    layout: gl.constexpr = gl.BlockedLayout([1], [32], [4], [0])
    offs = gl.arange(0, BLOCK_B, layout=layout)
    lens = gl.load(Seqlens + offs, mask=offs < batch, other=0)
    # every unit has at least one tile: a unit no CTA visited would leave its partials unset
    tiles = gl.where(offs < batch, gl.maximum(gl.cdiv(lens, BLOCK_N), 1) * UNITS_B, 0)
    ends = gl.associative_scan(tiles, 0, _add)  # each batch's tiles end here
    total = gl.sum(tiles, 0)
    # at least per_min (the launcher sized the partial slots with it), and enough that the
    # grid covers every tile if sequences grew since the launch was prepared
    per = gl.maximum(per_min, gl.cdiv(total, gl.num_programs(0)))
    x0 = gl.program_id(0) * per
    x1 = gl.minimum(x0 + per, total)
    before = ends <= x0  # batches wholly before tile x0
    b0 = gl.sum(before.to(gl.int32), 0)
    base = gl.max(gl.where(before, ends, 0), 0)
    return x0, x1, per, b0, base


@gluon.jit
def _segment(x, x1, b, base, per, Seqlens, seq_q,
             M_BLOCKS: gl.constexpr, H_KV: gl.constexpr, BLOCK_N: gl.constexpr,
             CAUSAL: gl.constexpr):
    """The segment of a BALANCED run from tile x (in batch b, whose first tile is `base`): its
    unit, partial slot, KV range and unmasked tiles, whether it ends the unit, and where the
    next segment starts (x, b, base)."""
    kv_len = gl.load(Seqlens + b)
    n_unit = gl.maximum(gl.cdiv(kv_len, BLOCK_N), 1)
    unit = (x - base) // n_unit
    unit_lo = base + unit * n_unit
    seg_hi = gl.minimum(x1, unit_lo + n_unit)
    first = x - unit_lo
    n_tiles = seg_hi - x
    if CAUSAL:
        limit = kv_len - seq_q + 1  # keys below this are visible to every query row
    else:
        limit = kv_len
    n_full = gl.minimum(gl.maximum(gl.maximum(limit, 0) // BLOCK_N - first, 0), n_tiles)
    slot = gl.program_id(0) - unit_lo // per
    last = seg_hi == unit_lo + n_unit
    # past the batch's last unit the next segment is the next batch's first (each has a tile)
    step = (seg_hi == base + H_KV * M_BLOCKS * n_unit).to(gl.int32)
    return (b, unit // M_BLOCKS, unit % M_BLOCKS, slot, last, kv_len, first * BLOCK_N,
            n_tiles, n_full, seg_hi, b + step, base + step * (seg_hi - base))


@gluon.jit
def _produce_q(q_desc, q_smem, q_ready, q_empty, k, off_b, off_hkv, off_mb, GROUP,
               q_rows_b, q_rows_h, M_ROWS: gl.constexpr):
    """Work item k's Q box into buffer k % 2 (its coordinates only: no length needed)."""
    qb = k % 2
    # a fresh barrier's "previous phase" (parity 1) counts as complete: the first fill of
    # each buffer (and of each stage in _produce_tiles) does not wait
    mbarrier.wait(q_empty.index(qb), ((k // 2) & 1) ^ 1)
    mbarrier.expect(q_ready.index(qb), q_desc.block_type.nbytes)
    # the box's first M_ROWS rows are the CTA's; the rest pad the m64 wgmma (never stored)
    q_row = off_b * q_rows_b + off_hkv * GROUP * q_rows_h + off_mb * M_ROWS
    _tma_load(q_desc, [q_row, 0], q_ready.index(qb), q_smem.index(qb))


@gluon.jit
def _produce_tiles(k_desc, v_desc, k_smem, v_smem, k_ready, v_ready, kv_empty, Block_table, t,
                   off_b, off_hkv, kv_len, lo, n_tiles,
                   kv_rows_b, kv_rows_h, stride_bt,
                   HEAD_DIM: gl.constexpr, PAGED: gl.constexpr, PAGE_SIZE: gl.constexpr,
                   BLOCK_N: gl.constexpr, SUB: gl.constexpr, STAGES: gl.constexpr):
    """K and V of one work item's (or segment's) n_tiles tiles from key `lo`, into stages t,
    t + 1, ...; the tile counter after them."""
    BOXES: gl.constexpr = BLOCK_N // SUB
    if PAGED:
        bt_row = Block_table + off_b.to(gl.int64) * stride_bt
        kv_row0 = 0
        kv_col = off_hkv * HEAD_DIM
    else:
        bt_row = Block_table
        kv_row0 = off_b * kv_rows_b + off_hkv * kv_rows_h
        kv_col = 0
    for i in range(n_tiles):
        stage = t % STAGES
        mbarrier.wait(kv_empty.index(stage), ((t // STAGES) & 1) ^ 1)
        start = lo + i * BLOCK_N
        mbarrier.expect(k_ready.index(stage), k_desc.block_type.nbytes * BOXES)
        for j in gl.static_range(BOXES):
            row = _kv_box_row(bt_row, start + j * SUB, kv_row0, kv_len, PAGED, PAGE_SIZE,
                              BOXES > 1)
            _tma_load(k_desc, [row, kv_col], k_ready.index(stage),
                      k_smem.index(stage).slice(j * SUB, SUB))
        mbarrier.expect(v_ready.index(stage), v_desc.block_type.nbytes * BOXES)
        for j in gl.static_range(BOXES):
            row = _kv_box_row(bt_row, start + j * SUB, kv_row0, kv_len, PAGED, PAGE_SIZE,
                              BOXES > 1)
            _tma_load(v_desc, [row, kv_col], v_ready.index(stage),
                      v_smem.index(stage).slice(j * SUB, SUB))
        t += 1
    return t


@gluon.jit
def _producer(q_desc, k_desc, v_desc, q_smem, k_smem, v_smem,
              q_ready, q_empty, k_ready, v_ready, kv_empty,
              Seqlens, Block_table, Order, n_items, units, GROUP, seq_q, num_splits, longest,
              x0, x1, per, b0, base0,
              q_rows_b, q_rows_h, kv_rows_b, kv_rows_h, stride_bt,
              HEAD_DIM: gl.constexpr, M_BLOCKS: gl.constexpr, H_KV: gl.constexpr,
              PAGED: gl.constexpr, PAGE_SIZE: gl.constexpr, BLOCK_N: gl.constexpr,
              SUB: gl.constexpr, STAGES: gl.constexpr, CAUSAL: gl.constexpr,
              SPLIT_BY_LONGEST: gl.constexpr, BALANCED: gl.constexpr, ORDERED: gl.constexpr,
              M_ROWS: gl.constexpr, EARLY_START: gl.constexpr):
    """One warp: for each work item (or segment), its Q box (two buffers: the next item's Q
    lands while the consumer still reads this one's) and K and V of every KV tile, STAGES tiles
    ahead across items, so a new item's first tiles stream in under the previous item's last.
    The consumer walks the same items in the same order from the same lengths."""
    t = 0  # KV tiles issued so far: the stage and its phase
    k = 0  # work items so far: the Q buffer and its phase
    if BALANCED:
        x = x0
        b = b0
        base = base0
        while x < x1:
            off_b, off_hkv, off_mb, slot, last, kv_len, lo, n_tiles, n_full, x, b, base = (
                _segment(x, x1, b, base, per, Seqlens, seq_q, M_BLOCKS, H_KV, BLOCK_N, CAUSAL))
            _produce_q(q_desc, q_smem, q_ready, q_empty, k, off_b, off_hkv, off_mb, GROUP,
                       q_rows_b, q_rows_h, M_ROWS)
            t = _produce_tiles(k_desc, v_desc, k_smem, v_smem, k_ready, v_ready, kv_empty,
                               Block_table, t, off_b, off_hkv, kv_len, lo, n_tiles,
                               kv_rows_b, kv_rows_h, stride_bt,
                               HEAD_DIM, PAGED, PAGE_SIZE, BLOCK_N, SUB, STAGES)
            k += 1
    else:
        for j in range(gl.program_id(0), n_items, gl.num_programs(0)):
            off_b, off_hkv, off_mb, split = _item_coords(_ordered(j, Order, ORDERED), units,
                                                         M_BLOCKS, H_KV)
            # EARLY_START: the item's first K box waits on one load's latency, not two. The Q
            # box (which needs no length), a prefetch of the first tile's block-table entry and
            # the length's load are issued in that order, before anything reads the length. In
            # the other order (the length first: the rung no-early-start) ptxas placed the
            # length's first use ahead of the Q box, so the box and the entry's lookup each
            # waited on it: two cold loads in a row (the protocol flushes L2) before the first
            # K box. The entry prefetched is where the split by the longest cuts: exact for
            # split 0, for SPLIT_BY_LONGEST and for the longest sequences; elsewhere it is
            # wasted and the lookup misses as before.
            if EARLY_START:
                _produce_q(q_desc, q_smem, q_ready, q_empty, k, off_b, off_hkv, off_mb, GROUP,
                           q_rows_b, q_rows_h, M_ROWS)
                if PAGED:
                    guess = split * gl.cdiv(gl.cdiv(longest, BLOCK_N), num_splits) * BLOCK_N
                    _prefetch_l1(Block_table + off_b.to(gl.int64) * stride_bt
                                 + guess // PAGE_SIZE)
            kv_len = gl.load(Seqlens + off_b)
            lo, n_tiles, n_full = _item_range(kv_len, split, seq_q, num_splits, longest,
                                              BLOCK_N, CAUSAL, SPLIT_BY_LONGEST)
            if not EARLY_START:
                _produce_q(q_desc, q_smem, q_ready, q_empty, k, off_b, off_hkv, off_mb, GROUP,
                           q_rows_b, q_rows_h, M_ROWS)
            t = _produce_tiles(k_desc, v_desc, k_smem, v_smem, k_ready, v_ready, kv_empty,
                               Block_table, t, off_b, off_hkv, kv_len, lo, n_tiles,
                               kv_rows_b, kv_rows_h, stride_bt,
                               HEAD_DIM, PAGED, PAGE_SIZE, BLOCK_N, SUB, STAGES)
            k += 1


@gluon.jit
def _zero_rows_from(tile, valid, BLOCK_N: gl.constexpr, HEAD_DIM: gl.constexpr):
    """Rows [valid, BLOCK_N) of a shared-memory V tile set to 0, visible to the next wgmma."""
    layout: gl.constexpr = gl.BlockedLayout([1, 8], [4, 8], [4, 1], [1, 0])
    v = tile.load(layout)
    r = gl.arange(0, BLOCK_N, layout=gl.SliceLayout(1, layout))
    v = gl.where(gl.expand_dims(r < valid, 1), v, gl.zeros_like(v))
    tile.store(v)
    fence_async_shared()  # the generic-proxy stores before the async-proxy (wgmma) read
    _thread_barrier()  # every consumer thread's rows before the warpgroup's wgmma


@gluon.jit
def _tile(q, o, m_i, l_i, t, start, k_smem, v_smem, k_ready, v_ready, kv_empty,
          kv_len, last_key, qk_scale,
          MASK: gl.constexpr, CAUSAL: gl.constexpr, BLOCK_N: gl.constexpr,
          HEAD_DIM: gl.constexpr, STAGES: gl.constexpr, s_layout: gl.constexpr,
          p_layout: gl.constexpr, o_layout: gl.constexpr):
    """KV tile `t` of the CTA (keys from `start`): scores, online softmax, O += P V; the stage
    released after."""
    stage = t % STAGES
    phase = (t // STAGES) & 1
    mbarrier.wait(k_ready.index(stage), phase)
    zero = gl.zeros([64, BLOCK_N], gl.float32, s_layout)
    s = warpgroup_mma(q, k_smem.index(stage).permute((1, 0)), zero, use_acc=False,
                      is_async=True)
    s = warpgroup_mma_wait(0, deps=(s, ))
    if MASK:
        cols = start + gl.arange(0, BLOCK_N, layout=gl.SliceLayout(0, s_layout))
        keep = gl.expand_dims(cols < kv_len, 0)
        if CAUSAL:
            keep = keep & (gl.expand_dims(cols, 0) <= gl.expand_dims(last_key, 1))
        s = gl.where(keep, s * qk_scale, float("-inf"))
        m_new = gl.maximum(m_i, gl.max(s, 1))
        # a row may have seen no key yet in this split: subtract 0, not -inf (no NaN)
        m_sub = gl.where(m_new == float("-inf"), 0.0, m_new)
        s = s - gl.expand_dims(m_sub, 1)
    else:
        m_new = gl.maximum(m_i, gl.max(s, 1) * qk_scale)
        m_sub = m_new
        s = s * qk_scale - gl.expand_dims(m_sub, 1)
    p = gl.exp2(s)
    alpha = gl.exp2(m_i - m_sub)
    l_i = l_i * alpha + gl.sum(p, 1)
    p_op = gl.convert_layout(p.to(v_smem.dtype), p_layout)
    o = o * gl.expand_dims(gl.convert_layout(alpha, gl.SliceLayout(1, o_layout)), 1)
    mbarrier.wait(v_ready.index(stage), phase)
    if MASK:
        if start + BLOCK_N > kv_len:
            _zero_rows_from(v_smem.index(stage), kv_len - start, BLOCK_N, HEAD_DIM)
    o = warpgroup_mma(p_op, v_smem.index(stage), o, is_async=True)
    o, p_op = warpgroup_mma_wait(0, deps=(o, p_op))
    mbarrier.arrive(kv_empty.index(stage), count=1)
    return o, m_new, l_i


@gluon.jit
def _consume_item(q_smem, k_smem, v_smem, q_ready, q_empty, k_ready, v_ready, kv_empty,
                  Out, O_part, Lse_part, Counters, t, k, off_b, off_hkv, off_mb, unit, slot,
                  last, kv_len, lo, n_tiles, n_full, H_Q, GROUP, seq_q, num_splits, qk_scale,
                  stride_ob, stride_oh, stride_om,
                  HEAD_DIM: gl.constexpr, BLOCK_N: gl.constexpr, STAGES: gl.constexpr,
                  CAUSAL: gl.constexpr, SPLIT: gl.constexpr, BALANCED: gl.constexpr,
                  FUSED_REDUCE: gl.constexpr, M_ROWS: gl.constexpr,
                  s_layout: gl.constexpr, o_layout: gl.constexpr, p_layout: gl.constexpr):
    """One work item's (or segment's) KV loop over its tiles and its epilogue: the final rows,
    or the partial in split `slot` (FUSED_REDUCE: and, if it is the unit's last split to
    finish, the merge of all of them into the final rows); the counters after it."""
    # stacked row r = g * seq_q + i: query head off_hkv * GROUP + g at query position i,
    # which sees keys up to i + kv_len - seq_q (bottom-right causal alignment)
    rows_s = off_mb * M_ROWS + gl.arange(0, 64, layout=gl.SliceLayout(1, s_layout))
    last_key = rows_s % seq_q + (kv_len - seq_q)
    m_i = gl.full([64], float("-inf"), gl.float32, layout=gl.SliceLayout(1, s_layout))
    l_i = gl.zeros([64], gl.float32, layout=gl.SliceLayout(1, s_layout))
    o = gl.zeros([64, HEAD_DIM], gl.float32, layout=o_layout)
    qb = k % 2
    mbarrier.wait(q_ready.index(qb), (k // 2) & 1)
    q = q_smem.index(qb)
    # one loop, so the Q operand's wgmma descriptors are built in a block that dominates every
    # tile (ptxas 12.8 reused the first loop's, stale when that loop ran no tile: n_full == 0)
    for i in range(0, n_tiles):
        if i < n_full:
            o, m_i, l_i = _tile(q, o, m_i, l_i, t + i, lo + i * BLOCK_N, k_smem, v_smem,
                                k_ready, v_ready, kv_empty, kv_len, last_key, qk_scale, False,
                                CAUSAL, BLOCK_N, HEAD_DIM, STAGES, s_layout, p_layout, o_layout)
        else:
            o, m_i, l_i = _tile(q, o, m_i, l_i, t + i, lo + i * BLOCK_N, k_smem, v_smem,
                                k_ready, v_ready, kv_empty, kv_len, last_key, qk_scale, True,
                                CAUSAL, BLOCK_N, HEAD_DIM, STAGES, s_layout, p_layout, o_layout)
    mbarrier.arrive(q_empty.index(qb), count=1)  # the wgmmas reading Q were waited on

    has_keys = l_i > 0.0  # False for padding rows and rows/splits that saw no key
    l_safe = gl.where(has_keys, l_i, 1.0)
    out = o / gl.expand_dims(gl.convert_layout(l_safe, gl.SliceLayout(1, o_layout)), 1)
    local = gl.arange(0, 64, layout=gl.SliceLayout(1, o_layout))
    rows = off_mb * M_ROWS + local
    offs_d = gl.arange(0, HEAD_DIM, layout=gl.SliceLayout(0, o_layout))
    # the CTA's own rows only: past M_ROWS the box holds the next CTA's rows (row split)
    row_ok = gl.expand_dims((rows < GROUP * seq_q) & (local < M_ROWS), 1)
    off_i = rows % seq_q
    off_hq = off_hkv * GROUP + rows // seq_q
    if SPLIT:
        # partials [B, Hq, Sq, num_splits(, D)], as attention_decode_kernel's split kernel
        part = ((off_b * H_Q + off_hq) * seq_q + off_i).to(gl.int64) * num_splits + slot
        gl.store(O_part + gl.expand_dims(part, 1) * HEAD_DIM + gl.expand_dims(offs_d, 0),
                 out, mask=row_ok)
        part_s = (((off_b * H_Q + off_hkv * GROUP + rows_s // seq_q) * seq_q
                   + rows_s % seq_q).to(gl.int64) * num_splits)
        lse = gl.where(has_keys, m_i + gl.log2(l_safe), float("-inf"))  # log2 units
        gl.store(Lse_part + part_s + slot, lse, mask=rows_s < GROUP * seq_q)
        if BALANCED:
            if last:
                # the unit's slots past its last segment weigh nothing in the reduction
                for unused in range(slot + 1, num_splits):
                    gl.store(Lse_part + part_s + unused, gl.full_like(lse, float("-inf")),
                             mask=rows_s < GROUP * seq_q)
        if FUSED_REDUCE:
            # as attention_decode_kernel's FUSED_REDUCE: the consumer warpgroup's partial
            # stores happen before one thread's acq_rel count, and the unit's last split to
            # count merges every split's partial (written by other SMs, read from L2)
            _thread_barrier()
            done = gl.atomic_add(Counters + unit, 1, sem="acq_rel", scope="gpu")
            if done == num_splits - 1:
                _merge_unit(O_part, Lse_part, Out, off_b, off_hkv, off_mb, H_Q, GROUP, seq_q,
                            num_splits, stride_ob, stride_oh, stride_om, HEAD_DIM)
                gl.store(Counters + unit, 0)  # the next launch counts from zero again
    else:
        ptrs = (Out + off_b.to(gl.int64) * stride_ob
                + gl.expand_dims(off_hq * stride_oh + off_i * stride_om, 1)
                + gl.expand_dims(offs_d, 0))
        gl.store(ptrs, out.to(Out.dtype.element_ty), mask=row_ok)
    return t + n_tiles, k + 1


@gluon.jit
def _merge_splits(O_part, Lse_part, part0, row_ok, num_splits, offs_d, acc, denom, m,
                  HEAD_DIM: gl.constexpr, UNROLL: gl.constexpr):
    """The online log-sum-exp over the splits of one chunk of rows, UNROLL splits at a time,
    unrolled so that their loads are in flight together; a split past the last is masked."""
    for s0 in range(0, num_splits, UNROLL):
        for j in gl.static_range(UNROLL):
            ok = row_ok & (s0 + j < num_splits)
            lse = gl.load(Lse_part + part0 + s0 + j, mask=ok, other=float("-inf"),
                          cache_modifier=".cg")
            o = gl.load(O_part + gl.expand_dims((part0 + s0 + j) * HEAD_DIM, 1)
                        + offs_d, mask=gl.expand_dims(ok, 1), other=0.0, cache_modifier=".cg")
            m_new = gl.maximum(m, lse)
            m_sub = gl.where(m_new == float("-inf"), 0.0, m_new)  # no key yet: weigh 0
            scale = gl.exp2(m - m_sub)
            w = gl.exp2(lse - m_sub)
            acc = acc * gl.expand_dims(scale, 1) + o * gl.expand_dims(w, 1)
            denom = denom * scale + w
            m = m_new
    return acc, denom


@gluon.jit
def _merge_unit(O_part, Lse_part, Out, off_b, off_hkv, off_mb, H_Q, GROUP, seq_q, num_splits,
                stride_ob, stride_oh, stride_om, HEAD_DIM: gl.constexpr):
    """The final rows of one (batch, KV head, M block) unit from its splits' partials: rows
    sum_s 2^(lse_s - lse) O_s / sum_s 2^(lse_s - lse), an online log-sum-exp over the splits
    in split order (as attention_decode_kernel._merge_splits, so every launch gives the same
    bits). It runs on the kernel's critical path (the unit's last CTA, before its next item), so
    its loads are laid out to be in flight together: the splits unrolled, each split's O loaded
    beside its lse rather than after it (every per-item split writes its partial, zeros and lse
    -inf when it saw no key, so no O load waits on an lse), and the 64 rows in chunks of
    4096 / HEAD_DIM rows (two at D 128), which bounds the registers the [rows, D] fp32 tiles
    take beside the consumer's. A first version, one split and 16 rows at a time with each O
    load masked by its lse, ran 0.73-0.97x the reduction kernel at 10 of 12 batch-16 points
    (session 71, _logs/session71/fused-merge). Loads skip L1 (.cg): other SMs wrote the
    partials.
    Only the work of real rows and splits is issued: a chunk with no row of the unit is skipped
    (GQA 4-8 at q_len 1-4 fills 4-32 of the 64 rows), and two splits take a two-wide path. Under
    ncu (session 73, _logs/session73/ncu-merge-*) the merge of four splits in every chunk, most
    of them masked, issued 2x the reduction kernel's instructions at a ragged point of 8 rows
    and 2 splits, on one warp per scheduler: it added 7.1k cycles per SM to the split kernel
    where the reduction kernel took 3.4k."""
    CHUNK: gl.constexpr = 4096 // HEAD_DIM
    m_layout: gl.constexpr = gl.BlockedLayout([1, 4], [4, 8], [4, 1], [1, 0])
    offs_d = gl.expand_dims(gl.arange(0, HEAD_DIM, layout=gl.SliceLayout(0, m_layout)), 0)
    # the unit's stacked rows r = g * seq_q + i are query head off_hkv * GROUP + g at position
    # i, so row r's partials start at ((off_b * H_Q + off_hkv * GROUP) * seq_q + r) * splits
    row0 = (off_b * H_Q + off_hkv * GROUP) * seq_q
    for c in gl.static_range(64 // CHUNK):
        if off_mb * 64 + c * CHUNK < GROUP * seq_q:  # the chunk holds a row of the unit
            rows = off_mb * 64 + c * CHUNK + gl.arange(0, CHUNK,
                                                       layout=gl.SliceLayout(1, m_layout))
            row_ok = rows < GROUP * seq_q
            part0 = (row0 + rows).to(gl.int64) * num_splits
            m = gl.full([CHUNK], float("-inf"), gl.float32, layout=gl.SliceLayout(1, m_layout))
            denom = gl.zeros([CHUNK], gl.float32, layout=gl.SliceLayout(1, m_layout))
            acc = gl.zeros([CHUNK, HEAD_DIM], gl.float32, layout=m_layout)
            # the two-wide path at D <= 128 only: at D 256 a second copy of the loop beside the
            # consumer's accumulator spilled 224 bytes (Triton 3.9), past the AOT test's bound
            if HEAD_DIM <= 128:
                if num_splits <= 2:
                    acc, denom = _merge_splits(O_part, Lse_part, part0, row_ok, num_splits,
                                               offs_d, acc, denom, m, HEAD_DIM, 2)
                else:
                    acc, denom = _merge_splits(O_part, Lse_part, part0, row_ok, num_splits,
                                               offs_d, acc, denom, m, HEAD_DIM, 4)
            else:
                acc, denom = _merge_splits(O_part, Lse_part, part0, row_ok, num_splits, offs_d,
                                           acc, denom, m, HEAD_DIM, 4)
            out = acc / gl.expand_dims(gl.where(denom > 0.0, denom, 1.0), 1)
            off_i = rows % seq_q
            off_hq = off_hkv * GROUP + rows // seq_q
            ptrs = (Out + off_b.to(gl.int64) * stride_ob
                    + gl.expand_dims(off_hq * stride_oh + off_i * stride_om, 1) + offs_d)
            gl.store(ptrs, out.to(Out.dtype.element_ty), mask=gl.expand_dims(row_ok, 1))


@gluon.jit
def _launch_dependents():
    """griddepcontrol.launch_dependents: the reduction kernel launched after this one as its
    programmatic dependent (REDUCE "pdl") may be scheduled from now; it waits in its own first
    instruction (griddepcontrol.wait) until this grid has finished and its stores are visible."""
    gl.inline_asm_elementwise("griddepcontrol.launch_dependents; // dummy $0", "=r", [],
                              dtype=gl.int32, is_pure=False, pack=1)


@gluon.jit
def _consumer(q_smem, k_smem, v_smem, q_ready, q_empty, k_ready, v_ready, kv_empty,
              Out, O_part, Lse_part, Counters, Seqlens, Order, n_items, units, H_Q, GROUP,
              seq_q, num_splits, longest, x0, x1, per, b0, base0, qk_scale,
              stride_ob, stride_oh, stride_om,
              HEAD_DIM: gl.constexpr, M_BLOCKS: gl.constexpr, H_KV: gl.constexpr,
              BLOCK_N: gl.constexpr, STAGES: gl.constexpr, CAUSAL: gl.constexpr,
              SPLIT: gl.constexpr, SPLIT_BY_LONGEST: gl.constexpr, BALANCED: gl.constexpr,
              ORDERED: gl.constexpr, FUSED_REDUCE: gl.constexpr, M_ROWS: gl.constexpr):
    """For each work item (or segment), in the producer's order: the KV loop over its tiles
    and the epilogue (final rows or partials)."""
    s_layout: gl.constexpr = gl.NVMMADistributedLayout(
        version=[3, 0], warps_per_cta=[4, 1], instr_shape=[16, BLOCK_N, 16])
    o_layout: gl.constexpr = gl.NVMMADistributedLayout(
        version=[3, 0], warps_per_cta=[4, 1], instr_shape=[16, HEAD_DIM, 16])
    p_layout: gl.constexpr = gl.DotOperandLayout(operand_index=0, parent=o_layout, k_width=2)

    t = 0  # KV tiles consumed so far (the producer counts the same way)
    k = 0  # work items so far
    if BALANCED:
        x = x0
        b = b0
        base = base0
        while x < x1:
            off_b, off_hkv, off_mb, slot, last, kv_len, lo, n_tiles, n_full, x, b, base = (
                _segment(x, x1, b, base, per, Seqlens, seq_q, M_BLOCKS, H_KV, BLOCK_N, CAUSAL))
            t, k = _consume_item(q_smem, k_smem, v_smem, q_ready, q_empty, k_ready, v_ready,
                                 kv_empty, Out, O_part, Lse_part, Counters, t, k, off_b,
                                 off_hkv, off_mb, 0, slot, last, kv_len, lo, n_tiles, n_full,
                                 H_Q, GROUP, seq_q, num_splits, qk_scale,
                                 stride_ob, stride_oh, stride_om,
                                 HEAD_DIM, BLOCK_N, STAGES, CAUSAL, SPLIT, BALANCED, False,
                                 M_ROWS, s_layout, o_layout, p_layout)
    else:
        for j in range(gl.program_id(0), n_items, gl.num_programs(0)):
            off_b, off_hkv, off_mb, split, kv_len, lo, n_tiles, n_full = _item(
                _ordered(j, Order, ORDERED), units, Seqlens, seq_q, num_splits, longest,
                M_BLOCKS, H_KV, BLOCK_N, CAUSAL, SPLIT_BY_LONGEST)
            unit = (off_b * H_KV + off_hkv) * M_BLOCKS + off_mb  # its fused merge's counter
            t, k = _consume_item(q_smem, k_smem, v_smem, q_ready, q_empty, k_ready, v_ready,
                                 kv_empty, Out, O_part, Lse_part, Counters, t, k, off_b,
                                 off_hkv, off_mb, unit, split, False, kv_len, lo, n_tiles,
                                 n_full, H_Q, GROUP, seq_q, num_splits, qk_scale,
                                 stride_ob, stride_oh, stride_om,
                                 HEAD_DIM, BLOCK_N, STAGES, CAUSAL, SPLIT, BALANCED,
                                 FUSED_REDUCE, M_ROWS, s_layout, o_layout, p_layout)


@gluon.jit
def _decode_gluon_kernel(
    # TMA descriptors: Q over its [rows, D] view in 64-row boxes; K and V over the cache's
    # [rows, Hkv * D] view (paged) or [rows, D] view (dense) in SUB-row boxes
    q_desc, k_desc, v_desc,
    # pointers
    Out, O_part, Lse_part, Seqlens, Block_table,
    # FUSED_REDUCE: one int32 count per (batch, KV head, M block) unit, 0 between launches
    Counters,
    # ORDERED: the work item of each round-robin slot (int32 [n_items]; else unread)
    Order,
    # sizes
    H_Q, GROUP, seq_q, num_splits, longest, sm_scale, n_items,
    # BALANCED: the batch and the least KV tiles per CTA run
    batch, per_min,
    # rows of the views between batches and heads; the output's strides; the block table's
    q_rows_b, q_rows_h, kv_rows_b, kv_rows_h, stride_ob, stride_oh, stride_om, stride_bt,
    # meta-parameters
    HEAD_DIM: gl.constexpr, H_KV: gl.constexpr, BLOCK_N: gl.constexpr, SUB: gl.constexpr,
    M_BLOCKS: gl.constexpr, STAGES: gl.constexpr, SPLIT: gl.constexpr, PAGED: gl.constexpr,
    PAGE_SIZE: gl.constexpr, CAUSAL: gl.constexpr, SPLIT_BY_LONGEST: gl.constexpr,
    BALANCED: gl.constexpr, BLOCK_B: gl.constexpr, ORDERED: gl.constexpr,
    FUSED_REDUCE: gl.constexpr, LAUNCH_DEPENDENTS: gl.constexpr = False,
    M_ROWS: gl.constexpr = 64, EARLY_START: gl.constexpr = True,
):
    """Persistent: each CTA takes work items pid, pid + grid, ...; an item is one KV group's
    G x Sq query rows (M_ROWS per M block) over one KV split of one sequence. BALANCED: each CTA
    takes one run of tiles over the units laid end to end instead (the module's docstring).
    M_ROWS < 64 (the row split, unsplit items only: the launcher refuses it with SPLIT): one
    item's rows cut over several CTAs, each reading the whole KV range (the module's
    docstring). EARLY_START (the default): the producer starts a per-item split's item with its
    Q box and its first page's prefetch before it reads the length (_producer); False is the
    rung no-early-start."""
    if LAUNCH_DEPENDENTS:
        # at the start: this grid is persistent, at most one CTA per SM and all resident at
        # once, so the dependent's programs take only SMs whose CTA has finished
        _launch_dependents()
    units = n_items // num_splits  # (batch, KV head, M block)
    if BALANCED:
        x0, x1, per, b0, base0 = _balanced_run(Seqlens, batch, per_min, H_KV * M_BLOCKS,
                                               BLOCK_N, BLOCK_B)
    else:
        x0 = 0
        x1 = 0
        per = 1
        b0 = 0
        base0 = 0
    qk_scale = sm_scale * 1.4426950408889634  # log2(e): exp2 is the native SFU op
    dtype: gl.constexpr = q_desc.dtype
    q_smem = gl.allocate_shared_memory(dtype, [2, 64, HEAD_DIM], q_desc.layout)
    k_smem = gl.allocate_shared_memory(dtype, [STAGES, BLOCK_N, HEAD_DIM], k_desc.layout)
    v_smem = gl.allocate_shared_memory(dtype, [STAGES, BLOCK_N, HEAD_DIM], v_desc.layout)
    q_ready = gl.allocate_shared_memory(gl.int64, [2, 1], mbarrier.MBarrierLayout())
    q_empty = gl.allocate_shared_memory(gl.int64, [2, 1], mbarrier.MBarrierLayout())
    k_ready = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
    v_ready = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
    kv_empty = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
    for b in gl.static_range(2):
        mbarrier.init(q_ready.index(b), count=1)
        mbarrier.init(q_empty.index(b), count=1)
    for stage in gl.static_range(STAGES):
        mbarrier.init(k_ready.index(stage), count=1)
        mbarrier.init(v_ready.index(stage), count=1)
        mbarrier.init(kv_empty.index(stage), count=1)
    fence_async_shared()  # the initialised barriers are visible to the TMA unit
    if not PAGED:
        Block_table = Seqlens  # unread (a partition argument may not be None)
    if not ORDERED:
        Order = Seqlens  # unread
    if not FUSED_REDUCE:
        Counters = Seqlens  # unread

    gl.warp_specialize([
        (_consumer, (q_smem, k_smem, v_smem, q_ready, q_empty, k_ready, v_ready, kv_empty,
                     Out, O_part, Lse_part, Counters, Seqlens, Order, n_items, units, H_Q,
                     GROUP, seq_q, num_splits, longest, x0, x1, per, b0, base0, qk_scale,
                     stride_ob, stride_oh, stride_om,
                     HEAD_DIM, M_BLOCKS, H_KV, BLOCK_N, STAGES, CAUSAL, SPLIT,
                     SPLIT_BY_LONGEST, BALANCED, ORDERED, FUSED_REDUCE, M_ROWS)),
        (_producer, (q_desc, k_desc, v_desc, q_smem, k_smem, v_smem,
                     q_ready, q_empty, k_ready, v_ready, kv_empty,
                     Seqlens, Block_table, Order, n_items, units, GROUP, seq_q, num_splits,
                     longest, x0, x1, per, b0, base0,
                     q_rows_b, q_rows_h, kv_rows_b, kv_rows_h, stride_bt,
                     HEAD_DIM, M_BLOCKS, H_KV, PAGED, PAGE_SIZE, BLOCK_N, SUB, STAGES, CAUSAL,
                     SPLIT_BY_LONGEST, BALANCED, ORDERED, M_ROWS, EARLY_START)),
    ], [1], [PRODUCER_REGS])

# fmt: on
