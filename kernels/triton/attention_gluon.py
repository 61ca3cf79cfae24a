"""Launcher of the Gluon FMHA forward (attention_gluon_kernel.py): checks, descriptors, the
config candidates and their tuning, and the AOT compile specs for tests and `harness inspect`.

Rungs (`rung`): "full" (FA3's intra-warpgroup overlap of softmax and P V; when causal, the tuner
also times the persistent candidates and keeps whichever is faster), "not-persistent" (full
without them: one CTA per work item, the headline up to session 88), "no-overlap" (each wgmma
waited on before the next step) and "persistent" (the overlap on at most one CTA per SM, each
looping over work items, the longest causal ones first across heads, the next item's Q in a
second buffer where shared memory allows: what FA3 does so that one item's prologue and epilogue
hide under another's main loop) and "no-pingpong" (full without the candidates whose two
consumers take turns to issue their wgmmas, FA3's and FA4's ping-pong: what the order is worth),
"two-compare-mask" (full with the causal mask's two compares and their AND a score instead of
one compare against a key limit a row), "scalar-cvt" (two-compare-mask with Triton's one-at-a-time
fp32-to-fp16 conversion of P instead of FA4's packed two-at-a-time one) and "scaled-mask"
(scalar-cvt masking the scaled scores, not the raw ones: the per-tile math up to session 104).
The last three are session 105's SASS reading (docs/prefill_attention.md) as rungs, so one run
says what each per-tile change is worth.
Session 88's A/B on an H200 (`fmha-persistent-s88`) found the
persistent candidates 1.04-1.17x faster at causal 1-2k and 0.95-0.96x at causal 4-16k, and
0.97-1.01x non-causal, where the tuner misranked one of five: hence persistent candidates in the
headline for causal problems only. All keep the warp-specialized TMA producer and the two
consumer warpgroups; attention_prefill.py's `tl` kernel is the rung without them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import torch
import triton

from .attention_configs import SM90_SMEM_BYTES
from .attention_launch import AttentionLaunch, triton_dtype_name
from .attention_prefill import _check, _flat_rows, _tight
from .attention_target import device_key, num_sms, target_of
from .attention_tune import PREFILL_SOURCES, stored_key
from .attention_tune import tune as tune_configs

GLUON_RUNGS = (
    "full",
    "not-persistent",
    "no-overlap",
    "persistent",
    "no-pingpong",
    "two-compare-mask",
    "scalar-cvt",
    "scaled-mask",
)
# attention_gluon_kernel._softmax's TILE_MATH per rung (FULL_TILE_MATH everywhere else)
FULL_TILE_MATH = 3
TILE_MATH = {"two-compare-mask": 2, "scalar-cvt": 1, "scaled-mask": 0}
# The rungs whose first candidates differ: "not-persistent"'s are "full"'s first ones.
AOT_RUNGS = ("full", "no-overlap", "persistent")
SLICE_ROWS = 64  # query rows per consumer warpgroup (attention_gluon_kernel.SLICE_ROWS)
SMEM_SLACK = 1024


class GluonUnsupported(ValueError):
    """The problem or machine is outside what the Gluon kernel runs (a skipped row, not a bug)."""


def gluon_problem(target: tuple[str, Any], head_dim: int) -> str | None:
    """Why the kernel cannot run on `target` for `head_dim`, or None."""
    if target[0] != "cuda" or target[1] != 90:
        return (
            f"the Gluon FMHA is sm_90 only (wgmma, TMA, setmaxnreg); target {target[0]}:{target[1]}"
        )
    if head_dim not in (64, 128, 256):
        return f"the Gluon FMHA takes head_dim 64, 128 or 256, not {head_dim}"
    return None


def smem_bytes(
    head_dim: int,
    block_n: int,
    stages: int,
    consumers: int = 2,
    elem_bytes: int = 2,
    qbuf: int = 1,
) -> int:
    """Shared memory of one CTA: `qbuf` 64-row Q slices per consumer (reused for O), STAGES K and
    V tiles, and SMEM_SLACK for the mbarriers and alignment (the sm_90 compile reports 216 bytes
    over the tiles at D 64/128/256)."""
    tile = head_dim * elem_bytes
    return qbuf * consumers * SLICE_ROWS * tile + 2 * stages * block_n * tile + SMEM_SLACK


def gluon_configs(head_dim: int, rung: str, causal: bool = False) -> list[dict]:
    """Candidates, best guess first: two consumers with 128-key tiles (64 at D 256, where the
    fp32 O accumulator alone takes 128 registers of a consumer's 240), as many stages as fit
    227 KiB; at D 64 also three consumers (160 registers each), with 64-key tiles only when
    causal with the overlap: 128-key tiles spilled there (sm_90 AOT, Triton 3.6 and 3.9; the
    mask arithmetic beside two live score tiles). The persistent candidates: the same, with the
    next item's Q in a second buffer where that still fits (QBUF 2), else one (QBUF 1: the next
    Q loads once this item's O has left); their three consumers take 64-key tiles unmasked too
    (128 spilled 304 bytes, sm_90 AOT, Triton 3.9: the item loop's registers). Causal, one CTA
    per item, each config comes in two orders (LONGEST_FIRST: every head's longest tiles first,
    then head by head); persistent ones take the longest-first list in snake rounds
    (attention_gluon_kernel._tile_of). With the overlap, each two-consumer config comes with
    and without PINGPONG (the consumers take turns to issue their wgmmas). "full" is
    "not-persistent"'s list, then, when causal, "persistent"'s; "no-pingpong" is "full" without
    the PINGPONG configs; "two-compare-mask", "scalar-cvt" and "scaled-mask" are "full" at a
    lower TILE_MATH."""
    if rung in TILE_MATH:
        return [dict(c, TILE_MATH=TILE_MATH[rung]) for c in gluon_configs(head_dim, "full", causal)]
    if rung == "no-pingpong":
        return [c for c in gluon_configs(head_dim, "full", causal) if not c["PINGPONG"]]
    if rung == "full":
        own = gluon_configs(head_dim, "not-persistent", causal)
        return own + (gluon_configs(head_dim, "persistent", causal) if causal else [])
    block_ns = (64,) if head_dim > 128 else (128, 64)
    consumers = (2, 3) if head_dim <= 64 else (2,)
    overlap = rung != "no-overlap"
    persistent = rung == "persistent"
    cands = []
    for c in consumers:
        for bn in block_ns:
            for st in (2, 3, 4):
                if c == 3 and bn > 64 and overlap and (causal or persistent):
                    continue
                fits = [q for q in ((2, 1) if persistent else (1,))
                        if smem_bytes(head_dim, bn, st, c, qbuf=q) <= SM90_SMEM_BYTES]  # fmt: skip
                if not fits:
                    continue
                # causal: every head's longest tiles first (persistent: always; one CTA per
                # item: first, beside head by head, which keeps a head's CTAs together in L2)
                for pp in (False, True) if c == 2 and overlap else (False,):
                    for longest in (True, False) if causal and not persistent else (causal,):
                        cands.append(dict(BLOCK_N=bn, STAGES=st, CONSUMERS=c, QBUF=fits[0],
                                          LONGEST_FIRST=longest, PINGPONG=pp))  # fmt: skip
    # the one-limit mask spilled 8 bytes in the persistent D 256 kernel under Triton 3.6 (the
    # GPU image's; none under 3.9): there the full kernel keeps the two-compare mask
    tile_math = 2 if persistent and head_dim > 128 else FULL_TILE_MATH
    return [dict(c, OVERLAP=overlap, PERSISTENT=persistent, TILE_MATH=tile_math) for c in cands]


def _order(causal: bool, cfg: dict) -> str:
    """The work items' order a config runs, in words (the row's provider_config)."""
    if not (causal and cfg["LONGEST_FIRST"]):
        return "head by head" + (", longest tile first" if causal else "")
    tiles = "every head's longest tiles first"
    return tiles + (", in snake rounds" if cfg["PERSISTENT"] else "")


def _descriptor(t: torch.Tensor, rows: int, block_rows: int) -> Any:
    from triton.experimental.gluon import language as gl
    from triton.experimental.gluon.nvidia.hopper import TensorDescriptor

    d = t.shape[3]
    dtype = {torch.bfloat16: gl.bfloat16, torch.float16: gl.float16}[t.dtype]
    layout = gl.NVMMASharedLayout.get_default_for([block_rows, d], dtype)
    return TensorDescriptor(t, [rows, d], [t.stride(2), 1], [block_rows, d], layout)


def _row_strides(t: torch.Tensor) -> tuple[int, int]:
    """Rows of the [rows, D] view between batches and between heads."""
    return t.stride(0) // t.stride(2), t.stride(1) // t.stride(2)


def prepare_gluon_attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    *,
    causal: bool,
    sm_scale: float | None = None,
    rung: str = "full",
    tune: bool = True,
    config: dict | None = None,
) -> AttentionLaunch:
    """Check shapes, allocate the output, choose (time) a config, return the launch.

    q [B, Hq, Sq, D]; k, v [B, Hkv, Skv, D]; out [B, Hq, Sq, D]. `config` (one of
    gluon_configs) pins the config untimed. Raises GluonUnsupported off sm_90 or for layouts
    TMA cannot address."""
    if rung not in GLUON_RUNGS:
        raise ValueError(f"rung {rung!r} not in {GLUON_RUNGS}")
    _check(q, k, v, causal)
    (batch, h_q, seq_q, head_dim), h_kv, seq_kv = q.shape, k.shape[1], k.shape[2]
    target = target_of(q.device)
    if (why := gluon_problem(target, head_dim)) is not None:
        raise GluonUnsupported(why)
    sm_scale = 1.0 / math.sqrt(head_dim) if sm_scale is None else float(sm_scale)
    out = torch.empty_like(q)
    rows = {name: _flat_rows(t) for name, t in dict(q=q, k=k, v=v, o=out).items()}
    if None in rows.values():
        raise GluonUnsupported("q, k, v or out is not a [rows, D] view TMA can address")
    cands = gluon_configs(head_dim, rung, causal)
    if not _tight(v) and seq_kv % min(c["BLOCK_N"] for c in cands):
        # A ragged last KV tile reads rows past seq_kv; masked scores make them count 0 times,
        # but 0 * NaN is NaN, and a V sliced from a longer cache may hold anything there.
        raise GluonUnsupported("v is not packed over (B, H, S) and seq_kv is not a tile multiple")

    sms = num_sms(q.device)

    def build(cfg: dict) -> Callable[[], object]:
        from .attention_gluon_kernel import _fa3_fwd_kernel

        bn = cfg["BLOCK_N"]
        descs = (
            _descriptor(q, rows["q"], SLICE_ROWS),  # type: ignore[arg-type]
            _descriptor(k, rows["k"], bn),  # type: ignore[arg-type]
            _descriptor(v, rows["v"], bn),  # type: ignore[arg-type]
            _descriptor(out, rows["o"], SLICE_ROWS),  # type: ignore[arg-type]
        )
        items = (triton.cdiv(seq_q, SLICE_ROWS * cfg["CONSUMERS"]), batch * h_q)
        grid = (min(items[0] * items[1], sms),) if cfg["PERSISTENT"] else items
        args = (
            *descs,
            out,
            h_q,
            batch * h_q,
            h_q // h_kv,
            seq_q,
            seq_kv,
            sm_scale,
            *_row_strides(q),
            *_row_strides(k),
            *_row_strides(out),
            out.stride(2),
        )
        meta = dict(
            HEAD_DIM=head_dim,
            BLOCK_N=bn,
            STAGES=cfg["STAGES"],
            CAUSAL=causal,
            OVERLAP=cfg["OVERLAP"],
            CONSUMERS=cfg["CONSUMERS"],
            PERSISTENT=cfg["PERSISTENT"],
            QBUF=cfg["QBUF"],
            LONGEST_FIRST=cfg["LONGEST_FIRST"],
            PINGPONG=cfg["PINGPONG"],
            TILE_MATH=cfg["TILE_MATH"],
            num_warps=4,
        )
        kernel = _fa3_fwd_kernel[grid]
        return lambda: kernel(*args, **meta)

    if _row_strides(k) != _row_strides(v):
        raise GluonUnsupported("k and v must share their batch and head strides")
    key = (
        "attn_prefill_gluon",
        batch,
        h_q,
        h_kv,
        seq_q,
        seq_kv,
        head_dim,
        q.dtype,
        causal,
        rung,
        device_key(q.device),
    )
    if config is not None:
        if config not in cands:
            raise ValueError(f"config {config} is not a candidate: {cands}")
        cfg, info = dict(config), dict(tuned=False, tune_candidates=1, tune_source="pinned")
    else:
        stored = stored_key(key, cands, device_key(q.device), PREFILL_SOURCES) if tune else None
        cfg, info = tune_configs(key, cands, build, tune, out, stored, capped=True)
    record: dict[str, Any] = dict(
        kernel="attn_prefill_gluon",
        variant=rung,
        causal=causal,
        head_dim=head_dim,
        dtype=str(q.dtype).removeprefix("torch."),
        group=h_q // h_kv,
        BLOCK_M=SLICE_ROWS * cfg["CONSUMERS"],
        BLOCK_N=cfg["BLOCK_N"],
        STAGES=cfg["STAGES"],
        overlap=cfg["OVERLAP"],
        consumers=cfg["CONSUMERS"],
        persistent=cfg["PERSISTENT"],
        q_buffers=cfg["QBUF"],
        # which CTA runs which query tile (attention_gluon_kernel._tile_of)
        order=_order(causal, cfg),
        # the two consumers take turns to issue their wgmmas (FA3's and FA4's ping-pong)
        pingpong=cfg["PINGPONG"],
        # the per-tile softmax math (attention_gluon_kernel._softmax's TILE_MATH)
        mask=("raw" if cfg["TILE_MATH"] >= 1 else "scaled")
        + " scores"
        + (
            (", one key limit a row" if cfg["TILE_MATH"] >= 3 else ", two compares")
            if causal
            else ""
        ),
        p_convert="packed, two a cvt" if cfg["TILE_MATH"] >= 2 else "one a cvt",
        warps=f"producer 1 (24 regs) + consumers {cfg['CONSUMERS']} x 4 warps",
        tma=True,
        sm_scale=sm_scale,
        target=f"{target[0]}:{target[1]}",
        **info,
    )
    return AttentionLaunch(out, None, record, [build(cfg)])


# ----------------------------------------------------------------------------------------------
# Ahead-of-time compile specs (for `harness inspect` and the AOT tests)
# ----------------------------------------------------------------------------------------------


def aot_specs(
    dtype: torch.dtype = torch.bfloat16,
    head_dim: int = 128,
    rungs: Sequence[str] = AOT_RUNGS,
    causal: Sequence[bool] = (True, False),
) -> list[dict[str, Any]]:
    """Compile specs [{name, fn, signature, constexprs, attrs, options, gluon}] for sm_90: each
    rung's first candidate per consumer count, order and ping-pong; the signature is what the JIT builds for real
    descriptors (their shared layouts are part of a Gluon descriptor's type)."""
    from triton.experimental.gluon import language as gl

    from .attention_gluon_kernel import _fa3_fwd_kernel

    ty = triton_dtype_name(dtype)
    gl_ty = {torch.bfloat16: gl.bfloat16, torch.float16: gl.float16}[dtype]
    specs = []
    picks = [  # each rung's first candidate per consumer count, order and ping-pong
        (r, c, cfg)
        for r in rungs
        for c in causal
        for cfg in {
            (x["CONSUMERS"], x["LONGEST_FIRST"], x["PINGPONG"]): x
            for x in reversed(gluon_configs(head_dim, r, c))
        }.values()
    ]
    for rung, is_causal, cfg in picks:
        descs = {}
        for arg, block in (
            ("q_desc", SLICE_ROWS),
            ("k_desc", cfg["BLOCK_N"]),
            ("v_desc", cfg["BLOCK_N"]),
            ("o_desc", SLICE_ROWS),
        ):
            layout = gl.NVMMASharedLayout.get_default_for([block, head_dim], gl_ty)
            descs[arg] = f"tensordesc<{ty}[{block}, {head_dim}],{layout!r}>"
        constexprs = dict(
            HEAD_DIM=head_dim,
            BLOCK_N=cfg["BLOCK_N"],
            STAGES=cfg["STAGES"],
            CAUSAL=is_causal,
            OVERLAP=cfg["OVERLAP"],
            CONSUMERS=cfg["CONSUMERS"],
            PERSISTENT=cfg["PERSISTENT"],
            QBUF=cfg["QBUF"],
            LONGEST_FIRST=cfg["LONGEST_FIRST"],
            PINGPONG=cfg["PINGPONG"],
            TILE_MATH=cfg["TILE_MATH"],
        )
        signature = {}
        for arg in _fa3_fwd_kernel.arg_names:
            if arg in constexprs:
                signature[arg] = "constexpr"
            elif arg in descs:
                signature[arg] = descs[arg]
            else:
                signature[arg] = {"o_ptr": f"*{ty}", "sm_scale": "fp32"}.get(arg, "i32")
        attrs = {(i,): [["tt.divisibility", 16]] for i, a in enumerate(signature) if a == "o_ptr"}
        mask = "causal" if is_causal else "full"
        order = "_lpt" if cfg["LONGEST_FIRST"] and not cfg["PERSISTENT"] else ""
        pp = "_pp" if cfg["PINGPONG"] else ""
        name = f"attn_prefill_gluon_{rung}_{mask}_d{head_dim}_c{cfg['CONSUMERS']}{order}{pp}"
        specs.append(
            dict(
                name=name,
                fn=_fa3_fwd_kernel,
                signature=signature,
                constexprs=constexprs,
                attrs=attrs,
                options=dict(num_warps=4),
                gluon=True,
            )
        )
    return specs
