"""Fused multi-head attention forward (prefill), FlashAttention-2 style, in Triton.

One program owns a BLOCK_M tile of query rows of one (batch, query head) and streams the
KV sequence of its KV head in BLOCK_N tiles, keeping the running row max `m_i`, row sum `l_i`
and the fp32 output accumulator `acc` on chip (online softmax, exp2 with log2(e) folded into the
scale). GQA/MQA: query head h reads KV head h // (Hq / Hkv). Causal masking is bottom-right
aligned (row i sees keys j <= i + Skv - Sq); fully masked KV tiles are never visited and the
KV loop is split into an unmasked part and a masked part (the diagonal and the ragged tail),
so the mask arithmetic only runs where it can change the result.

Ladder rungs (`rung`), each removing one thing the full kernel relies on:
  full         Q held on chip for the whole KV loop; K/V (and Q, O) moved by TMA tensor
               descriptors on sm_90; K/V multi-buffered (num_stages) so loads of tile j+1..
               overlap the wgmma/softmax of tile j.
  q-reload     Q is re-read from global memory (L2) inside every KV iteration instead of held
               on chip: what holding Q is worth; it costs L2 bandwidth and shared-memory
               buffers (smaller stages fit) per KV tile. Not the original study's CK question:
               both CK pipelines keep Q in VGPRs and differ in K's path (docs/cross_vendor.md),
               which reg-stage below answers.
  no-pipeline  num_stages=1: each K/V load is waited on before its dot, so memory latency is
               exposed once per KV tile instead of hidden behind the previous tile's math.
  no-tma       plain pointer loads (cp.async on sm_90) instead of TMA descriptors: address
               generation moves back onto the warps and bounds checks become per-element masks.
  reg-stage    the original study's "register trick" (AMD CK) on NVIDIA: Q held on chip as in
               full, K/V staged through registers instead of async copies straight into shared
               memory: plain loads with num_stages=1 (no cp.async, no TMA), and the next K/V
               tile's loads issued before this tile's dots, carried in registers across them
               (software prefetch), then written to shared memory for the wgmma.
On AMD CDNA3 there is no TMA: every rung uses pointer loads and config["tma"] is False.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import torch
import triton
import triton.language as tl

from .attention_configs import prefill_configs
from .attention_launch import AttentionLaunch, aot_spec, triton_dtype_name
from .attention_target import device_key, interpreting, target_of
from .attention_tune import PREFILL_SOURCES, stored_key
from .attention_tune import tune as tune_configs

# The rungs: the values of prepare_attention's `rung` keyword.
PREFILL_RUNGS = ("full", "q-reload", "no-pipeline", "no-tma", "reg-stage")


# fmt: off
# Kernel argument lists are grouped by kind under comment headers, tutorial style.

@triton.jit
def _load_rows(base, desc, row0, start, offs_r, offs_d, stride_r, n_rows,
               USE_TMA: tl.constexpr, MASK: tl.constexpr, UPCAST: tl.constexpr):
    """Load the [len(offs_r), HEAD_DIM] tile of rows start + offs_r (rows >= n_rows read as 0).

    TMA: one bulk async copy of the box at row row0 + start of the [rows, D] view; rows past
    this head's end come from the next head (finite; the caller masks them) or TMA zero fill."""
    if USE_TMA:
        tile = desc.load([row0 + start, 0])
    else:
        ptrs = base + (start + offs_r)[:, None] * stride_r + offs_d[None, :]
        if MASK:
            tile = tl.load(ptrs, mask=(start + offs_r)[:, None] < n_rows, other=0.0)
        else:
            tile = tl.load(ptrs)
    if UPCAST:
        # The CPU interpreter computes garbage for bf16/fp16 dots: work in fp32 there.
        tile = tile.to(tl.float32)
    return tile


@triton.jit
def _attn_fwd_inner(acc, l_i, m_i, q,
                    # tiles: bases (pointer path), descriptors (TMA path), row offsets
                    q_base, k_base, v_base, desc_q, desc_k, desc_v,
                    q_row0, kv_row0, m0, offs_m, offs_n, offs_d,
                    stride_qm, stride_kn, stride_vn,
                    # sizes and the KV range [lo, hi) this loop covers
                    seq_q, seq_kv, causal_shift, qk_scale, lo, hi,
                    # meta-parameters
                    MASK: tl.constexpr, CAUSAL: tl.constexpr, USE_TMA: tl.constexpr,
                    Q_RELOAD: tl.constexpr, UPCAST: tl.constexpr, BLOCK_N: tl.constexpr,
                    V_TAIL_TMA: tl.constexpr, REG_PREFETCH: tl.constexpr):
    """Stream KV tiles [lo, hi) through the online softmax; MASK applies causal + tail masks.

    Masked scores become exactly 0 in p, but 0 * NaN is NaN: a V row past seq_kv must be
    finite. It is when the [rows, D] view is tight (the next head's rows, or TMA zero fill);
    otherwise (V sliced from a longer cache) masked tiles load V by masked pointer loads."""
    if REG_PREFETCH:  # reg-stage: tile lo in registers before the loop (rows >= hi read 0)
        k_next = _load_rows(k_base, desc_k, kv_row0, lo, offs_n, offs_d, stride_kn, hi,
                            USE_TMA=False, MASK=True, UPCAST=UPCAST)
        v_next = _load_rows(v_base, desc_v, kv_row0, lo, offs_n, offs_d, stride_vn, hi,
                            USE_TMA=False, MASK=True, UPCAST=UPCAST)
    # disable_licm keeps the q-reload rung's Q load inside the loop (it is loop-invariant).
    for start_n in tl.range(lo, hi, BLOCK_N, disable_licm=Q_RELOAD):
        start_n = tl.multiple_of(start_n, BLOCK_N)
        if Q_RELOAD:
            q = _load_rows(q_base, desc_q, q_row0, m0, offs_m - m0, offs_d, stride_qm, seq_q,
                           USE_TMA=USE_TMA, MASK=True, UPCAST=UPCAST)
        if REG_PREFETCH:
            # this tile was loaded one iteration ago; issue the next tile's loads now, so
            # they fly (into registers) while this tile's dots and softmax run
            k, v_staged = k_next, v_next
            k_next = _load_rows(k_base, desc_k, kv_row0, start_n + BLOCK_N, offs_n, offs_d,
                                stride_kn, hi, USE_TMA=False, MASK=True, UPCAST=UPCAST)
            v_next = _load_rows(v_base, desc_v, kv_row0, start_n + BLOCK_N, offs_n, offs_d,
                                stride_vn, hi, USE_TMA=False, MASK=True, UPCAST=UPCAST)
        else:
            k = _load_rows(k_base, desc_k, kv_row0, start_n, offs_n, offs_d, stride_kn, seq_kv,
                           USE_TMA=USE_TMA, MASK=MASK, UPCAST=UPCAST)
        qk = tl.dot(q, tl.trans(k))  # [BLOCK_M, BLOCK_N] fp32
        if MASK:
            offs_kv = start_n + offs_n
            keep = (offs_kv < seq_kv)[None, :]
            if CAUSAL:
                keep = keep & (offs_kv[None, :] <= offs_m[:, None] + causal_shift)
            qk = tl.where(keep, qk * qk_scale, float("-inf"))
            m_ij = tl.maximum(m_i, tl.max(qk, 1))
            qk = qk - m_ij[:, None]
        else:
            m_ij = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
            qk = qk * qk_scale - m_ij[:, None]
        p = tl.math.exp2(qk)
        alpha = tl.math.exp2(m_i - m_ij)
        l_ij = tl.sum(p, 1)
        acc = acc * alpha[:, None]
        if REG_PREFETCH:
            v = v_staged
        else:
            v = _load_rows(v_base, desc_v, kv_row0, start_n, offs_n, offs_d, stride_vn, seq_kv,
                           USE_TMA=USE_TMA and (V_TAIL_TMA or not MASK), MASK=MASK,
                           UPCAST=UPCAST)
        acc = tl.dot(p.to(v.dtype), v, acc)
        # updated last so old and new l_i need not both stay live across the dots
        l_i = l_i * alpha + l_ij
        m_i = m_ij
    return acc, l_i, m_i


@triton.jit
def _attn_fwd_kernel(
    # pointers
    Q, K, V, Out, Lse,
    # TMA descriptors over the [rows, HEAD_DIM] views (None on the pointer path)
    desc_q, desc_k, desc_v, desc_o,
    # sizes
    H_Q, GROUP, seq_q, seq_kv, sm_scale,
    # strides (the head dim is contiguous)
    stride_qb, stride_qh, stride_qm,
    stride_kb, stride_kh, stride_kn,
    stride_vb, stride_vh, stride_vn,
    stride_ob, stride_oh, stride_om,
    # meta-parameters
    HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
    CAUSAL: tl.constexpr, USE_TMA: tl.constexpr, Q_RELOAD: tl.constexpr,
    STORE_LSE: tl.constexpr, UPCAST: tl.constexpr, V_TAIL_TMA: tl.constexpr,
    REG_PREFETCH: tl.constexpr,
):
    """Out[b, h, tile] = softmax(Q K^T * sm_scale) V for one BLOCK_M query tile of one head."""
    pid_bh = tl.program_id(0)
    pid_m = tl.program_id(1)
    if CAUSAL:
        # Longest (bottom) tiles first: the last wave holds the cheap tiles, not the costly ones.
        pid_m = tl.num_programs(1) - 1 - pid_m
    off_b = pid_bh // H_Q
    off_h = pid_bh % H_Q
    off_hkv = off_h // GROUP
    m0 = pid_m * BLOCK_M

    offs_m = m0 + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    q_base = Q + off_b.to(tl.int64) * stride_qb + off_h.to(tl.int64) * stride_qh
    k_base = K + off_b.to(tl.int64) * stride_kb + off_hkv.to(tl.int64) * stride_kh
    v_base = V + off_b.to(tl.int64) * stride_vb + off_hkv.to(tl.int64) * stride_vh
    o_base = Out + off_b.to(tl.int64) * stride_ob + off_h.to(tl.int64) * stride_oh
    # row of element (b, h, 0, 0) in the [rows, HEAD_DIM] view the descriptors were built on
    q_row0 = off_b * (stride_qb // stride_qm) + off_h * (stride_qh // stride_qm)
    kv_row0 = off_b * (stride_kb // stride_kn) + off_hkv * (stride_kh // stride_kn)
    o_row0 = off_b * (stride_ob // stride_om) + off_h * (stride_oh // stride_om)

    m_i = tl.full([BLOCK_M], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale * 1.4426950408889634  # log2(e): exp2 is the native SFU op
    q = _load_rows(q_base, desc_q, q_row0, m0, offs_m - m0, offs_d, stride_qm, seq_q,
                   USE_TMA=USE_TMA, MASK=True, UPCAST=UPCAST)

    # KV tiles [0, full_end) are visible to every row of this tile: no mask. Tiles
    # [full_end, hi) hold the causal diagonal and/or the ragged KV tail. Keys >= hi are
    # masked for every row and never loaded.
    causal_shift = seq_kv - seq_q  # >= 0 when causal (checked on the host)
    if CAUSAL:
        hi = tl.minimum(seq_kv, m0 + BLOCK_M + causal_shift)
        full_end = tl.minimum(seq_kv, m0 + causal_shift + 1) // BLOCK_N * BLOCK_N
    else:
        hi = seq_kv
        full_end = seq_kv // BLOCK_N * BLOCK_N
    acc, l_i, m_i = _attn_fwd_inner(acc, l_i, m_i, q,
                                    q_base, k_base, v_base, desc_q, desc_k, desc_v,
                                    q_row0, kv_row0, m0, offs_m, offs_n, offs_d,
                                    stride_qm, stride_kn, stride_vn,
                                    seq_q, seq_kv, causal_shift, qk_scale, 0, full_end,
                                    MASK=False, CAUSAL=CAUSAL, USE_TMA=USE_TMA,
                                    Q_RELOAD=Q_RELOAD, UPCAST=UPCAST, BLOCK_N=BLOCK_N,
                                    V_TAIL_TMA=V_TAIL_TMA, REG_PREFETCH=REG_PREFETCH)
    acc, l_i, m_i = _attn_fwd_inner(acc, l_i, m_i, q,
                                    q_base, k_base, v_base, desc_q, desc_k, desc_v,
                                    q_row0, kv_row0, m0, offs_m, offs_n, offs_d,
                                    stride_qm, stride_kn, stride_vn,
                                    seq_q, seq_kv, causal_shift, qk_scale, full_end, hi,
                                    MASK=True, CAUSAL=CAUSAL, USE_TMA=USE_TMA,
                                    Q_RELOAD=Q_RELOAD, UPCAST=UPCAST, BLOCK_N=BLOCK_N,
                                    V_TAIL_TMA=V_TAIL_TMA, REG_PREFETCH=REG_PREFETCH)

    # epilogue: every real row saw key 0, so l_i > 0; the guard only covers padding rows
    l_i = tl.where(l_i > 0.0, l_i, 1.0)
    acc = acc / l_i[:, None]
    row_ok = offs_m < seq_q
    if STORE_LSE:
        lse = (m_i + tl.math.log2(l_i)) * 0.6931471805599453  # log2 units -> natural log
        tl.store(Lse + pid_bh.to(tl.int64) * seq_q + offs_m, lse, mask=row_ok)
    out = acc.to(Out.dtype.element_ty)
    o_ptrs = o_base + offs_m[:, None] * stride_om + offs_d[None, :]
    if USE_TMA:
        # A full tile leaves as one TMA store; a ragged last tile must not write its padding
        # rows into the next head's output, so it takes the masked pointer store.
        if m0 + BLOCK_M <= seq_q:
            desc_o.store([o_row0 + m0, 0], out)
        else:
            tl.store(o_ptrs, out, mask=row_ok[:, None])
    else:
        tl.store(o_ptrs, out, mask=row_ok[:, None])

# fmt: on


# ----------------------------------------------------------------------------------------------
# Launcher
# ----------------------------------------------------------------------------------------------


def _flat_rows(t: torch.Tensor) -> int | None:
    """Rows of the [rows, D] view (row stride t.stride(2)) holding t, or None when [B, H, S, D]
    does not sit on such a view; then per-head TMA boxes are impossible and pointers are used."""
    b, h, s, _ = t.shape
    sb, sh, ss, sd = t.stride()
    if sd != 1 or ss <= 0 or sb % ss or sh % ss or (ss * t.element_size()) % 16:
        return None
    if t.data_ptr() % 16:
        return None
    return (b - 1) * (sb // ss) + (h - 1) * (sh // ss) + s


def _tight(t: torch.Tensor) -> bool:
    """True when [B, H, S, D] is packed over (B, H, S): row S of one head is row 0 of the next."""
    b, h, s, _ = t.shape
    sb, sh, ss, _ = t.stride()
    return (h == 1 or sh == s * ss) and (b == 1 or sb == h * s * ss)


def _descriptor(t: torch.Tensor, rows: int, block_rows: int) -> Any:
    from triton.tools.tensor_descriptor import TensorDescriptor

    d = t.shape[3]
    return TensorDescriptor(t, [rows, d], [t.stride(2), 1], [block_rows, d])


def _check(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool) -> None:
    if q.dim() != 4 or k.dim() != 4 or k.shape != v.shape:
        raise ValueError("q must be [B, Hq, Sq, D]; k, v [B, Hkv, Skv, D] of one shape")
    (b, hq, sq, d), (bk, hkv, skv, dk) = q.shape, k.shape
    if b != bk or d != dk or hq % hkv:
        raise ValueError(f"q {tuple(q.shape)} does not fit k {tuple(k.shape)} (B, D, Hq % Hkv)")
    if d not in (16, 32, 64, 128, 256):
        raise ValueError(f"head_dim {d} not supported (16, 32, 64, 128, 256)")
    if q.dtype not in (torch.float16, torch.bfloat16) or not q.dtype == k.dtype == v.dtype:
        raise ValueError(f"dtypes must match and be fp16/bf16, got {q.dtype}/{k.dtype}/{v.dtype}")
    if any(t.stride(-1) != 1 for t in (q, k, v)):
        raise ValueError("the head dimension must be contiguous (stride 1)")
    if sq == 0 or skv == 0 or (causal and sq > skv):
        raise ValueError(f"need 0 < q_len <= kv_len for causal, got {sq}, {skv}")


def prepare_attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    *,
    causal: bool,
    sm_scale: float | None = None,
    rung: str = "full",
    return_lse: bool = False,
    tune: bool = True,
) -> AttentionLaunch:
    """Check shapes, allocate the output, choose (on GPU: time) a config, return the launch.

    q [B, Hq, Sq, D]; k, v [B, Hkv, Skv, D]; out [B, Hq, Sq, D]; lse [B, Hq, Sq] fp32 (ln).
    """
    if rung not in PREFILL_RUNGS:
        raise ValueError(f"rung {rung!r} not in {PREFILL_RUNGS}")
    _check(q, k, v, causal)
    (batch, h_q, seq_q, head_dim), h_kv, seq_kv = q.shape, k.shape[1], k.shape[2]
    sm_scale = 1.0 / math.sqrt(head_dim) if sm_scale is None else float(sm_scale)
    target = target_of(q.device)
    out = torch.empty_like(q)
    lse = None
    if return_lse:
        lse = torch.empty((batch, h_q, seq_q), device=q.device, dtype=torch.float32)

    rows = {name: _flat_rows(t) for name, t in dict(q=q, k=k, v=v, o=out).items()}
    use_tma, tma_reason = True, ""
    if rung == "no-tma":
        # the reason's wording is a recorded value (committed rows carry it): it keeps "variant"
        use_tma, tma_reason = False, "variant no-tma"
    elif rung == "reg-stage":
        use_tma, tma_reason = False, "rung reg-stage: K/V through registers"
    elif not (target[0] == "interpret" or (target[0] == "cuda" and target[1] >= 90)):
        use_tma, tma_reason = False, f"no TMA on {target[0]}:{target[1]}"
    elif None in rows.values():
        use_tma, tma_reason = False, "layout is not a [rows, D] view (strides or alignment)"

    def build(cfg: dict) -> Callable[[], object]:
        descs: tuple[Any, ...] = (None,) * 4
        if use_tma:
            bm, bn = cfg["BLOCK_M"], cfg["BLOCK_N"]
            flat = {n: r for n, r in rows.items() if r is not None}  # all four, under TMA
            descs = (
                _descriptor(q, flat["q"], bm),
                _descriptor(k, flat["k"], bn),
                _descriptor(v, flat["v"], bn),
                _descriptor(out, flat["o"], bm),
            )
        grid = (batch * h_q, triton.cdiv(seq_q, cfg["BLOCK_M"]))
        kernel = _attn_fwd_kernel[grid]
        args = (
            q,
            k,
            v,
            out,
            lse,
            *descs,
            h_q,
            h_q // h_kv,
            seq_q,
            seq_kv,
            sm_scale,
            *q.stride()[:3],
            *k.stride()[:3],
            *v.stride()[:3],
            *out.stride()[:3],
        )
        meta = dict(
            HEAD_DIM=head_dim,
            BLOCK_M=cfg["BLOCK_M"],
            BLOCK_N=cfg["BLOCK_N"],
            CAUSAL=causal,
            USE_TMA=use_tma,
            Q_RELOAD=rung == "q-reload",
            STORE_LSE=return_lse,
            UPCAST=interpreting(),
            V_TAIL_TMA=_tight(v),
            REG_PREFETCH=rung == "reg-stage",
            num_warps=cfg["num_warps"],
            num_stages=cfg["num_stages"],
            **cfg["options"],
        )
        return lambda: kernel(*args, **meta)

    cands = prefill_configs(target, head_dim, q.element_size(), rung, seq_q)
    key = (
        "attn_prefill",
        batch,
        h_q,
        h_kv,
        seq_q,
        seq_kv,
        head_dim,
        q.dtype,
        causal,
        rung,
        return_lse,
        use_tma,
        device_key(q.device),
    )
    tune_on = tune and target[0] != "interpret"
    stored = stored_key(key, cands, device_key(q.device), PREFILL_SOURCES) if tune_on else None
    cfg, info = tune_configs(key, cands, build, tune_on, out, stored, capped=True)
    # "variant": the rung's stored key in provider_config (committed rows carry it)
    config: dict[str, Any] = dict(
        kernel="attn_prefill",
        variant=rung,
        causal=causal,
        head_dim=head_dim,
        dtype=str(q.dtype).removeprefix("torch."),
        group=h_q // h_kv,
        BLOCK_M=cfg["BLOCK_M"],
        BLOCK_N=cfg["BLOCK_N"],
        num_warps=cfg["num_warps"],
        num_stages=cfg["num_stages"],
        options=dict(cfg["options"]),
        tma=use_tma,
        tma_reason=tma_reason,
        v_tail_tma=use_tma and _tight(v),
        q_reload=rung == "q-reload",
        return_lse=return_lse,
        sm_scale=sm_scale,
        target=f"{target[0]}:{target[1]}",
        **info,
    )
    return AttentionLaunch(out, lse, config, [build(cfg)])


# ----------------------------------------------------------------------------------------------
# Ahead-of-time compile specs (for `harness inspect` and the AOT tests)
# ----------------------------------------------------------------------------------------------


def aot_specs(
    dtype: torch.dtype = torch.bfloat16,
    head_dim: int = 128,
    backend: str = "cuda",
    rungs: Sequence[str] = ("full", "no-tma"),
    causal: Sequence[bool] = (True, False),
    config: dict | None = None,
) -> list[dict[str, Any]]:
    """Compile specs [{name, fn, signature, constexprs, attrs, options}] for `harness inspect`.

    backend "cuda" targets sm_90, "hip" gfx942. Without `config`, each rung uses the first
    candidate its untuned launch would take for a long (4k-row) prompt on that target."""
    ty = triton_dtype_name(dtype)
    target = ("cuda", 90) if backend == "cuda" else ("hip", "gfx942")
    specs = []
    for rung in rungs:
        cfg = config or prefill_configs(target, head_dim, dtype.itemsize, rung, 4096)[0]
        use_tma = backend == "cuda" and rung not in ("no-tma", "reg-stage")
        for is_causal in causal:
            types = dict(
                Q=f"*{ty}", K=f"*{ty}", V=f"*{ty}", Out=f"*{ty}", Lse="*fp32", sm_scale="fp32"
            )
            constexprs: dict[str, Any] = dict(
                HEAD_DIM=head_dim,
                BLOCK_M=cfg["BLOCK_M"],
                BLOCK_N=cfg["BLOCK_N"],
                CAUSAL=is_causal,
                USE_TMA=use_tma,
                Q_RELOAD=rung == "q-reload",
                STORE_LSE=True,
                UPCAST=False,
                V_TAIL_TMA=True,
                REG_PREFETCH=rung == "reg-stage",
            )
            for arg, block in (
                ("desc_q", "BLOCK_M"),
                ("desc_k", "BLOCK_N"),
                ("desc_v", "BLOCK_N"),
                ("desc_o", "BLOCK_M"),
            ):
                if use_tma:
                    types[arg] = f"tensordesc<{ty}[{cfg[block]},{head_dim}]>"
                else:
                    constexprs[arg] = None
            options = dict(
                num_warps=cfg["num_warps"], num_stages=cfg["num_stages"], **cfg.get("options", {})
            )
            name = f"attn_prefill_{rung}_{'causal' if is_causal else 'full'}_d{head_dim}"
            specs.append(aot_spec(name, _attn_fwd_kernel, types, constexprs, options))
    return specs
