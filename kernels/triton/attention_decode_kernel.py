"""The split-KV attention decode kernels (flash-decoding) over dense or paged KV caches.

A decode step has 1..8 query rows per sequence, so a one-program-per-query-tile kernel would
launch only batch x heads tiny programs and leave most SMs idle while the KV cache, the
dominant traffic, streams through a few of them. Here one program owns (batch, KV head,
KV split): it stacks the G = Hq/Hkv query heads x Sq query rows of that KV group into the M
dimension of the dot (padded to >= 16 for the tensor cores), so each K/V byte is read from HBM
once for the whole group, and the KV sequence is cut into `num_splits` chunks processed by
separate programs. Each split writes an fp32 partial output and its log-sum-exp; a small
reduction kernel rescales and sums the splits. With num_splits == 1 the split kernel writes the
final output directly and no reduction runs.

FUSED_REDUCE merges the splits inside the split kernel instead: each split program counts itself
done on a per-(batch, KV head, M block) counter (an acq_rel atomic after a CTA barrier, so every
thread's partial stores are visible first), and the program that counts last reads the partials
back from L2 and writes the output, then zeroes its counter for the next launch. That saves the
second launch and its ramp, a few microseconds, which is 5-10% of the shortest decodes (batch 16,
KV 4k: 46-99 us on an H100, results/h100/fmha_decode_serving); the last program's merge is a tail
of its own. Which is faster is timed per shape (attention_decode.prepare_decode).
A third way keeps the reduction kernel but launches it as a programmatic dependent of the split
kernel (PDL, sm_90: `launch_pdl`, GDC_WAIT): its launch and the scheduling of its programs
overlap the split kernel's tail instead of following it.

Paged caches ([num_pages, page_size, Hkv, D], pages in any order via block_table): when
BLOCK_N divides page_size a KV tile lies in one page and costs one block-table lookup; when it
does not (page_size < BLOCK_N, or not a multiple) every row looks up its own page (a gather).

The launcher is attention_decode.prepare_decode. The jit functions keep their names: compiled
kernel names (_decode_split_kernel, _decode_reduce_kernel) are recorded by `harness inspect`.
"""

from __future__ import annotations

import triton
import triton.language as tl
from triton.language.extra.cuda import gdc_wait

# fmt: off
# Kernel argument lists are grouped by kind under comment headers, tutorial style.

@triton.jit
def _kv_rows(bt_row, start_n, offs_n, kv_len,
             PAGED: tl.constexpr, PAGE_SIZE: tl.constexpr, BLOCK_N: tl.constexpr,
             MASK: tl.constexpr):
    """(page, row in page) of keys start_n + offs_n. The page is a scalar when the tile lies in
    one page; dense caches give page 0 and the key position (the base holds the batch)."""
    if PAGED:
        if PAGE_SIZE % BLOCK_N == 0:
            page = tl.load(bt_row + start_n // PAGE_SIZE).to(tl.int64)
            row = start_n % PAGE_SIZE + offs_n
        else:
            pos = start_n + offs_n
            if MASK:
                page = tl.load(bt_row + pos // PAGE_SIZE, mask=pos < kv_len, other=0)
            else:
                page = tl.load(bt_row + pos // PAGE_SIZE)
            page = page.to(tl.int64)
            row = pos % PAGE_SIZE
    else:
        page = 0
        row = start_n + offs_n
    return page, row


@triton.jit
def _decode_inner(acc, l_i, m_i, q,
                  # KV bases of this (sequence, KV head) and the block-table row
                  k_head, v_head, bt_row,
                  stride_kp, stride_kn, stride_vp, stride_vn,
                  # the KV range [lo, hi) this loop covers
                  lo, hi, kv_len, causal_shift, off_i, offs_n, offs_d, qk_scale,
                  # meta-parameters
                  MASK: tl.constexpr, CAUSAL: tl.constexpr, PAGED: tl.constexpr,
                  PAGE_SIZE: tl.constexpr, BLOCK_N: tl.constexpr, UPCAST: tl.constexpr):
    """Online softmax over KV tiles [lo, hi); MASK adds the KV-length and causal masks."""
    for start_n in tl.range(lo, hi, BLOCK_N):
        page, row = _kv_rows(bt_row, start_n, offs_n, kv_len,
                             PAGED=PAGED, PAGE_SIZE=PAGE_SIZE, BLOCK_N=BLOCK_N, MASK=MASK)
        k_ptrs = k_head + (page * stride_kp + row * stride_kn)[:, None] + offs_d[None, :]
        v_ptrs = v_head + (page * stride_vp + row * stride_vn)[:, None] + offs_d[None, :]
        if MASK:
            # rows past kv_len may be unwritten cache memory (even NaN): never load them
            kv_ok = (start_n + offs_n) < kv_len
            k = tl.load(k_ptrs, mask=kv_ok[:, None], other=0.0)
        else:
            k = tl.load(k_ptrs)
        if UPCAST:
            k = k.to(tl.float32)  # the CPU interpreter computes garbage for bf16/fp16 dots
        qk = tl.dot(q, tl.trans(k))  # [BLOCK_M, BLOCK_N] fp32
        if MASK:
            keep = kv_ok[None, :]
            if CAUSAL:
                keep = keep & ((start_n + offs_n)[None, :] <= off_i[:, None] + causal_shift)
            qk = tl.where(keep, qk * qk_scale, float("-inf"))
            m_ij = tl.maximum(m_i, tl.max(qk, 1))
            # a row may have seen no key yet in this split: subtract 0, not -inf (no NaN)
            m_sub = tl.where(m_ij == float("-inf"), 0.0, m_ij)
            qk = qk - m_sub[:, None]
            v = tl.load(v_ptrs, mask=kv_ok[:, None], other=0.0)
        else:
            m_ij = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
            m_sub = m_ij
            qk = qk * qk_scale - m_sub[:, None]
            v = tl.load(v_ptrs)
        p = tl.math.exp2(qk)
        alpha = tl.math.exp2(m_i - m_sub)
        acc = acc * alpha[:, None]
        if UPCAST:
            v = v.to(tl.float32)
        acc = tl.dot(p.to(v.dtype), v, acc)
        l_i = l_i * alpha + tl.sum(p, 1)
        m_i = m_ij
    return acc, l_i, m_i


@triton.jit
def _decode_split_kernel(
    # pointers
    Q, K, V, Out, O_part, Lse_part, Seqlens, Block_table, Counters,
    # sizes
    H_Q, H_KV, GROUP, seq_q, num_splits, longest, sm_scale,
    # strides (head dim contiguous; for dense caches the "page" is the batch)
    stride_qb, stride_qh, stride_qm,
    stride_kp, stride_kh, stride_kn,
    stride_vp, stride_vh, stride_vn,
    stride_ob, stride_oh, stride_om,
    stride_bt,
    # meta-parameters
    HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
    M_BLOCKS: tl.constexpr, SPLIT: tl.constexpr, PAGED: tl.constexpr,
    PAGE_SIZE: tl.constexpr, CAUSAL: tl.constexpr, UPCAST: tl.constexpr,
    FUSED_REDUCE: tl.constexpr = False, SPLIT_BY_LONGEST: tl.constexpr = False,
):
    """Attention of one KV group's G x Sq query rows over one KV split of one sequence."""
    pid = tl.program_id(0)  # (batch, KV head, M block), M block fastest
    split = tl.program_id(1)
    off_mb = pid % M_BLOCKS
    off_b = pid // M_BLOCKS // H_KV
    off_hkv = pid // M_BLOCKS % H_KV

    # stacked rows r = g * seq_q + i: query head off_hkv * GROUP + g at query position i
    rows = off_mb * BLOCK_M + tl.arange(0, BLOCK_M)
    row_ok = rows < GROUP * seq_q
    off_i = rows % seq_q
    off_hq = off_hkv * GROUP + rows // seq_q
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    q_ptrs = (Q + off_b.to(tl.int64) * stride_qb + off_hq[:, None] * stride_qh
              + off_i[:, None] * stride_qm + offs_d[None, :])
    q = tl.load(q_ptrs, mask=row_ok[:, None], other=0.0)
    if UPCAST:
        q = q.to(tl.float32)
    if PAGED:
        k_head = K + off_hkv.to(tl.int64) * stride_kh
        v_head = V + off_hkv.to(tl.int64) * stride_vh
        bt_row = Block_table + off_b.to(tl.int64) * stride_bt
    else:
        k_head = K + off_b.to(tl.int64) * stride_kp + off_hkv.to(tl.int64) * stride_kh
        v_head = V + off_b.to(tl.int64) * stride_vp + off_hkv.to(tl.int64) * stride_vh
        bt_row = Block_table

    # This split's share of its own sequence, in whole tiles (lengths differ per sequence). Or,
    # SPLIT_BY_LONGEST, a chunk of the longest sequence's share, the same for every sequence:
    # in a ragged batch each program then streams the same number of keys (a short sequence's
    # last splits find none and finish at once) rather than the long sequences' programs
    # running longest, so the SMs finish together.
    kv_len = tl.load(Seqlens + off_b)
    if SPLIT_BY_LONGEST:
        # a sequence grown past `longest` since the launch was prepared (lengths may change
        # within capacity) cuts its own, longer share: no key is left out
        tiles_per_split = tl.cdiv(tl.cdiv(tl.maximum(longest, kv_len), BLOCK_N), num_splits)
    else:
        tiles_per_split = tl.cdiv(tl.cdiv(kv_len, BLOCK_N), num_splits)
    lo = split * tiles_per_split * BLOCK_N
    hi = tl.minimum(lo + tiles_per_split * BLOCK_N, kv_len)
    causal_shift = kv_len - seq_q
    if CAUSAL:
        limit = kv_len - seq_q + 1  # keys below this are visible to every query row
    else:
        limit = kv_len
    full_end = lo + tl.maximum(tl.minimum(hi, limit) - lo, 0) // BLOCK_N * BLOCK_N

    m_i = tl.full([BLOCK_M], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale * 1.4426950408889634  # log2(e): exp2 is the native SFU op
    acc, l_i, m_i = _decode_inner(acc, l_i, m_i, q, k_head, v_head, bt_row,
                                  stride_kp, stride_kn, stride_vp, stride_vn,
                                  lo, full_end, kv_len, causal_shift, off_i, offs_n, offs_d,
                                  qk_scale, MASK=False, CAUSAL=CAUSAL, PAGED=PAGED,
                                  PAGE_SIZE=PAGE_SIZE, BLOCK_N=BLOCK_N, UPCAST=UPCAST)
    acc, l_i, m_i = _decode_inner(acc, l_i, m_i, q, k_head, v_head, bt_row,
                                  stride_kp, stride_kn, stride_vp, stride_vn,
                                  full_end, hi, kv_len, causal_shift, off_i, offs_n, offs_d,
                                  qk_scale, MASK=True, CAUSAL=CAUSAL, PAGED=PAGED,
                                  PAGE_SIZE=PAGE_SIZE, BLOCK_N=BLOCK_N, UPCAST=UPCAST)

    has_keys = l_i > 0.0  # False for padding rows and rows/splits that saw no key
    l_i = tl.where(has_keys, l_i, 1.0)
    out = acc / l_i[:, None]
    if SPLIT:
        # partials [B, Hq, Sq, num_splits(, D)]: the reduction reads one row contiguously
        part = ((off_b * H_Q + off_hq) * seq_q + off_i).to(tl.int64) * num_splits + split
        lse = tl.where(has_keys, m_i + tl.math.log2(l_i), float("-inf"))  # log2 units
        tl.store(Lse_part + part, lse, mask=row_ok)
        tl.store(O_part + part[:, None] * HEAD_DIM + offs_d[None, :], out, mask=row_ok[:, None])
        if FUSED_REDUCE:
            tl.debug_barrier()  # every thread's partial stores happen before the release below
            done = tl.atomic_add(Counters + pid, 1, sem="acq_rel", scope="gpu")
            if done == num_splits - 1:  # the last of this unit's splits: merge them all
                merged = _merge_splits(O_part, Lse_part, part - split, row_ok, offs_d,
                                       num_splits, BLOCK_M=BLOCK_M, HEAD_DIM=HEAD_DIM)
                o_ptrs = (Out + off_b.to(tl.int64) * stride_ob + off_hq[:, None] * stride_oh
                          + off_i[:, None] * stride_om + offs_d[None, :])
                tl.store(o_ptrs, merged.to(Out.dtype.element_ty), mask=row_ok[:, None])
                tl.store(Counters + pid, 0)  # the next launch counts from zero again
    else:
        o_ptrs = (Out + off_b.to(tl.int64) * stride_ob + off_hq[:, None] * stride_oh
                  + off_i[:, None] * stride_om + offs_d[None, :])
        tl.store(o_ptrs, out.to(Out.dtype.element_ty), mask=row_ok[:, None])


@triton.jit
def _merge_splits(O_part, Lse_part, part0, row_ok, offs_d, num_splits,
                  BLOCK_M: tl.constexpr, HEAD_DIM: tl.constexpr):
    """Rows sum_s 2^(lse_s - lse) O_s / sum_s 2^(lse_s - lse) over the splits, one at a time
    (an online log-sum-exp: the split count is a runtime value here). Loads skip L1 (.cg): the
    partials were written by other SMs."""
    m = tl.full([BLOCK_M], float("-inf"), dtype=tl.float32)
    denom = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    for s in range(num_splits):
        lse = tl.load(Lse_part + part0 + s, mask=row_ok, other=float("-inf"),
                      cache_modifier=".cg")
        o = tl.load(O_part + (part0 + s)[:, None] * HEAD_DIM + offs_d[None, :],
                    mask=row_ok[:, None], other=0.0, cache_modifier=".cg")
        m_new = tl.maximum(m, lse)
        m_sub = tl.where(m_new == float("-inf"), 0.0, m_new)  # no key yet: weigh 0, no NaN
        scale = tl.math.exp2(m - m_sub)
        w = tl.math.exp2(lse - m_sub)
        acc = acc * scale[:, None] + o * w[:, None]
        denom = denom * scale + w
        m = m_new
    return acc / tl.where(denom > 0.0, denom, 1.0)[:, None]


@triton.jit
def _decode_reduce_kernel(
    # pointers
    O_part, Lse_part, Out,
    # sizes
    H_Q, seq_q, num_splits,
    # strides
    stride_ob, stride_oh, stride_om,
    # meta-parameters
    HEAD_DIM: tl.constexpr, SPLITS_POW2: tl.constexpr, GDC_WAIT: tl.constexpr = False,
):
    """Out[b, h, i] = sum_s 2^(lse_s - lse) O_s over the KV splits of one query row.
    GDC_WAIT: launched as a programmatic dependent of the split kernel (launch_pdl, sm_90), it
    waits here, before its first read of a partial, for that kernel to finish and its stores to
    be visible (griddepcontrol.wait)."""
    if GDC_WAIT:
        gdc_wait()
    row = tl.program_id(0)  # (b * H_Q + h) * seq_q + i
    off_i = row % seq_q
    off_h = row // seq_q % H_Q
    off_b = row // seq_q // H_Q
    offs_s = tl.arange(0, SPLITS_POW2)
    offs_d = tl.arange(0, HEAD_DIM)
    s_ok = offs_s < num_splits
    part = row.to(tl.int64) * num_splits + offs_s
    lse = tl.load(Lse_part + part, mask=s_ok, other=float("-inf"))
    m = tl.max(lse, 0)
    w = tl.math.exp2(lse - tl.where(m == float("-inf"), 0.0, m))  # empty splits weigh 0
    # a slot of lse -inf is not read: the Gluon kernel's balanced runs leave the slots past a
    # unit's last segment unwritten but for that lse (NaN there times a zero weight is NaN)
    o_ok = s_ok & (lse > float("-inf"))
    o = tl.load(O_part + part[:, None] * HEAD_DIM + offs_d[None, :], mask=o_ok[:, None],
                other=0.0)
    denom = tl.sum(w, 0)
    out = tl.sum(o * w[:, None], 0) / tl.where(denom > 0.0, denom, 1.0)
    o_ptrs = (Out + off_b.to(tl.int64) * stride_ob + off_h.to(tl.int64) * stride_oh
              + off_i * stride_om + offs_d)
    tl.store(o_ptrs, out.to(Out.dtype.element_ty))

# fmt: on
