"""Split-KV attention decode (flash-decoding) over dense or paged KV caches, in Triton.

A decode step has 1..8 query rows per sequence, so a one-program-per-query-tile kernel would
launch only batch x heads tiny programs and leave most SMs idle while the KV cache, the
dominant traffic, streams through a few of them. Here one program owns (batch, KV head,
KV split): it stacks the G = Hq/Hkv query heads x Sq query rows of that KV group into the M
dimension of the dot (padded to >= 16 for the tensor cores), so each K/V byte is read from HBM
once for the whole group, and the KV sequence is cut into `num_splits` chunks processed by
separate programs. Each split writes an fp32 partial output and its log-sum-exp; a small
reduction kernel rescales and sums the splits. With num_splits == 1 the split kernel writes the
final output directly and no reduction runs.

Paged caches ([num_pages, page_size, Hkv, D], pages in any order via block_table): when
BLOCK_N divides page_size a KV tile lies in one page and costs one block-table lookup; when it
does not (page_size < BLOCK_N, or not a multiple) every row looks up its own page (a gather).

Ladder rungs (`variant`):
  full         split-KV with num_splits from the SM count and KV length (or tuned);
               K/V loads pipelined num_stages deep (cp.async on sm_90).
  no-split     num_splits = 1: one program per (batch, KV head); with batch x Hkv below a few
               programs per SM, the HBM bandwidth a decode needs cannot be reached.
  no-pipeline  num_stages = 1: each K/V load is waited on before use, so every tile exposes
               a full DRAM latency and far fewer bytes are in flight per SM.
  no-tma       identical to full: decode has no TMA path (paged gathers are not TMA boxes and
               the tiles are small); kept so the ladder has the same rungs as prefill.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import torch
import triton
import triton.language as tl

from .attention_configs import (
    AttentionLaunch,
    aot_spec,
    choose_num_splits,
    decode_configs,
    device_key,
    interpreting,
    next_pow2,
    num_sms,
    target_of,
    triton_dtype_name,
)
from .attention_configs import tune as tune_configs

# The rungs: the values of prepare_decode's `variant` keyword (named like PREFILL_VARIANTS,
# which the harness reads; both keep the old word until the harness renames them).
DECODE_VARIANTS = ("full", "no-split", "no-pipeline", "no-tma")

MAX_BLOCK_M = 64  # larger GQA groups x q_len are cut into several M blocks

# Kept unformatted: kernel arguments grouped by role on lines under comment headers (the Triton
# tutorials' layout); the formatter would put one argument per line and drop the grouping.
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
    Q, K, V, Out, O_part, Lse_part, Seqlens, Block_table,
    # sizes
    H_Q, H_KV, GROUP, seq_q, num_splits, sm_scale,
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

    # This split's share of its own sequence, in whole tiles (lengths differ per sequence).
    kv_len = tl.load(Seqlens + off_b)
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
    else:
        o_ptrs = (Out + off_b.to(tl.int64) * stride_ob + off_hq[:, None] * stride_oh
                  + off_i[:, None] * stride_om + offs_d[None, :])
        tl.store(o_ptrs, out.to(Out.dtype.element_ty), mask=row_ok[:, None])


@triton.jit
def _decode_reduce_kernel(
    # pointers
    O_part, Lse_part, Out,
    # sizes
    H_Q, seq_q, num_splits,
    # strides
    stride_ob, stride_oh, stride_om,
    # meta-parameters
    HEAD_DIM: tl.constexpr, SPLITS_POW2: tl.constexpr,
):
    """Out[b, h, i] = sum_s 2^(lse_s - lse) O_s over the KV splits of one query row."""
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
    o = tl.load(O_part + part[:, None] * HEAD_DIM + offs_d[None, :], mask=s_ok[:, None],
                other=0.0)
    denom = tl.sum(w, 0)
    out = tl.sum(o * w[:, None], 0) / tl.where(denom > 0.0, denom, 1.0)
    o_ptrs = (Out + off_b.to(tl.int64) * stride_ob + off_h.to(tl.int64) * stride_oh
              + off_i * stride_om + offs_d)
    tl.store(o_ptrs, out.to(Out.dtype.element_ty))

# fmt: on


# ----------------------------------------------------------------------------------------------
# Launcher
# ----------------------------------------------------------------------------------------------


def _check(
    q: torch.Tensor,
    k_cache: torch.Tensor,
    v_cache: torch.Tensor,
    cache_seqlens: torch.Tensor,
    block_table: torch.Tensor | None,
) -> None:
    if q.dim() != 4 or k_cache.dim() != 4 or k_cache.shape != v_cache.shape:
        raise ValueError("q must be [B, Hq, Sq, D]; k_cache, v_cache 4-d and of one shape")
    if (
        q.dtype not in (torch.float16, torch.bfloat16)
        or not q.dtype == k_cache.dtype == v_cache.dtype
    ):
        raise ValueError(f"dtypes must match and be fp16/bf16: {q.dtype}/{k_cache.dtype}")
    if any(t.stride(-1) != 1 for t in (q, k_cache, v_cache)):
        raise ValueError("the head dimension must be contiguous (stride 1)")
    if q.shape[-1] not in (16, 32, 64, 128, 256) or k_cache.shape[-1] != q.shape[-1]:
        raise ValueError(f"head_dim {q.shape[-1]} / {k_cache.shape[-1]} not supported")
    if cache_seqlens.dtype != torch.int32 or tuple(cache_seqlens.shape) != (q.shape[0],):
        raise ValueError("cache_seqlens must be int32 [B]")
    if block_table is not None and (
        block_table.dtype != torch.int32 or block_table.dim() != 2 or len(block_table) != len(q)
    ):
        raise ValueError("block_table must be int32 [B, max_pages_per_seq]")


def prepare_decode(
    q: torch.Tensor,
    k_cache: torch.Tensor,
    v_cache: torch.Tensor,
    *,
    cache_seqlens: torch.Tensor,
    block_table: torch.Tensor | None = None,
    causal: bool = True,
    sm_scale: float | None = None,
    variant: str = "full",
    num_splits: int | None = None,
    tune: bool = True,
) -> AttentionLaunch:
    """Check shapes, allocate output and split buffers, choose splits/config, return the launch.

    q [B, Hq, Sq, D]; dense k/v_cache [B, Hkv, Skv, D], or paged [num_pages, page_size, Hkv, D]
    with block_table [B, max_pages] int32; cache_seqlens [B] int32 (KV length per sequence,
    >= Sq when causal); out [B, Hq, Sq, D]. cache_seqlens is read once here (host sync) to size
    the splits; launches read it on device, so it may change between calls within capacity.
    """
    if variant not in DECODE_VARIANTS:
        raise ValueError(f"variant {variant!r} not in {DECODE_VARIANTS}")
    _check(q, k_cache, v_cache, cache_seqlens, block_table)
    batch, h_q, seq_q, head_dim = q.shape
    paged = block_table is not None
    if paged:  # [num_pages, page_size, Hkv, D]: (page, head, row) strides
        _, page_size, h_kv, _ = k_cache.shape
        capacity = block_table.shape[1] * page_size
        k_strides = (k_cache.stride(0), k_cache.stride(2), k_cache.stride(1))
        v_strides = (v_cache.stride(0), v_cache.stride(2), v_cache.stride(1))
    else:  # [B, Hkv, Skv, D]: (batch, head, row) strides
        _, h_kv, capacity, _ = k_cache.shape
        page_size = None
        k_strides, v_strides = k_cache.stride()[:3], v_cache.stride()[:3]
        if k_cache.shape[0] != batch:
            raise ValueError(f"dense cache batch {k_cache.shape[0]} != q batch {batch}")
    if h_q % h_kv:
        raise ValueError(f"query heads {h_q} not a multiple of kv heads {h_kv}")
    min_kv, max_kv = int(cache_seqlens.min()), int(cache_seqlens.max())
    if max_kv > capacity or min_kv < (seq_q if causal else 1):
        raise ValueError(f"cache_seqlens [{min_kv}, {max_kv}] outside [{seq_q}, {capacity}]")
    sm_scale = 1.0 / math.sqrt(head_dim) if sm_scale is None else float(sm_scale)
    target, sms = target_of(q.device), num_sms(q.device)
    group = h_q // h_kv
    block_m = min(MAX_BLOCK_M, max(16, next_pow2(group * seq_q)))  # >= 16: tensor-core M
    m_blocks = triton.cdiv(group * seq_q, block_m)
    programs = batch * h_kv * m_blocks
    out = torch.empty_like(q)

    def splits_for(block_n: int) -> list[int]:
        """Split counts worth trying: fixed by the rung or the caller, else the heuristic for
        2, 1, 4 and 8 resident CTAs per SM (occupancy is only known after compiling)."""
        if variant == "no-split":
            return [1]
        if num_splits is not None:
            return [max(1, int(num_splits))]
        picks = [choose_num_splits(programs, max_kv, block_n, sms, ctas) for ctas in (2, 1, 4, 8)]
        return list(dict.fromkeys(picks))

    cands = decode_configs(target, head_dim, q.element_size(), variant, block_m, page_size)
    # split buffers sized once for the largest split count any candidate may use
    most = max(s for c in cands for s in splits_for(c["BLOCK_N"]))
    o_part = lse_part = None
    if most > 1:
        o_part = q.new_empty((batch, h_q, seq_q, most, head_dim), dtype=torch.float32)
        lse_part = q.new_empty((batch, h_q, seq_q, most), dtype=torch.float32)
    bt_stride = block_table.stride(0) if paged else 0

    def build(cfg: dict) -> Callable[[], object]:
        splits = cfg["num_splits"]
        split_kernel = _decode_split_kernel[(programs, splits)]
        split_args = (
            q,
            k_cache,
            v_cache,
            out,
            o_part,
            lse_part,
            cache_seqlens,
            block_table,
            h_q,
            h_kv,
            group,
            seq_q,
            splits,
            sm_scale,
            *q.stride()[:3],
            *k_strides,
            *v_strides,
            *out.stride()[:3],
            bt_stride,
        )
        split_meta = dict(
            HEAD_DIM=head_dim,
            BLOCK_M=cfg["BLOCK_M"],
            BLOCK_N=cfg["BLOCK_N"],
            M_BLOCKS=m_blocks,
            SPLIT=splits > 1,
            PAGED=paged,
            PAGE_SIZE=page_size or 1,
            CAUSAL=causal,
            UPCAST=interpreting(),
            num_warps=cfg["num_warps"],
            num_stages=cfg["num_stages"],
            **cfg["options"],
        )
        if splits == 1:
            return lambda: split_kernel(*split_args, **split_meta)
        reduce_kernel = _decode_reduce_kernel[(batch * h_q * seq_q,)]
        reduce_args = (o_part, lse_part, out, h_q, seq_q, splits, *out.stride()[:3])
        reduce_meta = dict(HEAD_DIM=head_dim, SPLITS_POW2=next_pow2(splits), num_warps=2)

        def launch() -> None:
            split_kernel(*split_args, **split_meta)
            reduce_kernel(*reduce_args, **reduce_meta)

        return launch

    # Tune the tile shape at the first split candidate, then the split count at that shape.
    tune_on = tune and target[0] != "interpret"
    key = (
        "attn_decode",
        batch,
        h_q,
        h_kv,
        seq_q,
        head_dim,
        q.dtype,
        causal,
        variant,
        page_size,
        next_pow2(max_kv),
        num_splits,
        device_key(q.device),
    )
    first = [dict(c, num_splits=splits_for(c["BLOCK_N"])[0]) for c in cands]
    cfg, info = tune_configs(key + ("tile",), first, build, tune_on, out)
    split_cands = [dict(cfg, num_splits=s) for s in splits_for(cfg["BLOCK_N"])]
    cfg, split_info = tune_configs(
        key + ("splits", cfg["BLOCK_N"]), split_cands, build, tune_on, out
    )
    # "variant": fixed by the no-split rung (a recorded value, so it keeps the old word)
    source = (
        "variant"
        if variant == "no-split"
        else "user"
        if num_splits is not None
        else ("tuned" if split_info["tuned"] else "heuristic")
    )
    page_path = None
    if paged:
        page_path = "page-per-tile" if page_size % cfg["BLOCK_N"] == 0 else "per-row-gather"
    config: dict[str, Any] = dict(
        kernel="attn_decode",
        variant=variant,
        causal=causal,
        head_dim=head_dim,
        dtype=str(q.dtype).removeprefix("torch."),
        group=group,
        seq_q=seq_q,
        BLOCK_M=cfg["BLOCK_M"],
        BLOCK_N=cfg["BLOCK_N"],
        M_BLOCKS=m_blocks,
        num_warps=cfg["num_warps"],
        num_stages=cfg["num_stages"],
        options=dict(cfg["options"]),
        num_splits=cfg["num_splits"],
        num_splits_source=source,
        split_candidates=[c["num_splits"] for c in split_cands],
        programs=programs * cfg["num_splits"],
        num_sms=sms,
        max_kv_len=max_kv,
        paged=paged,
        page_size=page_size,
        page_path=page_path,
        tma=False,
        tma_reason="decode has no TMA path: the no-tma rung equals full",
        sm_scale=sm_scale,
        target=f"{target[0]}:{target[1]}",
        tuned=bool(info["tuned"] or split_info["tuned"]),
        tune_candidates=info["tune_candidates"] + split_info["tune_candidates"],
        tune_ms=split_info.get("tune_ms", info.get("tune_ms")),
    )
    return AttentionLaunch(out, None, config, [build(cfg)])


# ----------------------------------------------------------------------------------------------
# Ahead-of-time compile specs (for `harness inspect` and the AOT tests)
# ----------------------------------------------------------------------------------------------


def aot_specs(
    dtype: torch.dtype = torch.bfloat16,
    head_dim: int = 128,
    backend: str = "cuda",
    group: int = 4,
    seq_q: int = 1,
    page_size: int = 16,
    config: dict | None = None,
) -> list[dict[str, Any]]:
    """Compile specs [{name, fn, signature, constexprs, attrs, options}] for `harness inspect`:
    the split kernel over a dense and a paged cache, and the reduction (8 splits).

    backend "cuda" targets sm_90, "hip" gfx942; without `config` the first candidate."""
    ty = triton_dtype_name(dtype)
    target = ("cuda", 90) if backend == "cuda" else ("hip", "gfx942")
    block_m = min(MAX_BLOCK_M, max(16, next_pow2(group * seq_q)))
    cfg = config or decode_configs(target, head_dim, dtype.itemsize, "full", block_m, None)[0]
    opts = dict(num_warps=cfg["num_warps"], num_stages=cfg["num_stages"], **cfg.get("options", {}))
    types = dict(
        Q=f"*{ty}",
        K=f"*{ty}",
        V=f"*{ty}",
        Out=f"*{ty}",
        O_part="*fp32",
        Lse_part="*fp32",
        Seqlens="*i32",
        Block_table="*i32",
        sm_scale="fp32",
    )
    base = dict(
        HEAD_DIM=head_dim,
        BLOCK_M=block_m,
        BLOCK_N=cfg["BLOCK_N"],
        M_BLOCKS=triton.cdiv(group * seq_q, block_m),
        SPLIT=True,
        CAUSAL=True,
        UPCAST=False,
    )
    dense = dict(base, PAGED=False, PAGE_SIZE=1, Block_table=None)
    paged = dict(base, PAGED=True, PAGE_SIZE=page_size)
    reduce = dict(HEAD_DIM=head_dim, SPLITS_POW2=8)
    return [
        aot_spec("attn_decode_split_dense", _decode_split_kernel, types, dense, opts),
        aot_spec(f"attn_decode_split_paged{page_size}", _decode_split_kernel, types, paged, opts),
        aot_spec("attn_decode_reduce", _decode_reduce_kernel, types, reduce, dict(num_warps=2)),
    ]
