"""Split-KV attention decode (flash-decoding) over dense or paged KV caches: the launcher.

prepare_decode checks shapes, sizes the KV splits from the SM count and the KV length, picks
(on a GPU: times) a config and returns the launch; the kernels and how they split the work are
in attention_decode_kernel.py.

Ladder rungs (`rung`):
  full         split-KV with num_splits from the SM count and KV length (or tuned);
               K/V loads pipelined num_stages deep (cp.async on sm_90).
  no-split     num_splits = 1: one program per (batch, KV head); with batch x Hkv below a few
               programs per SM, the HBM bandwidth a decode needs cannot be reached.
  no-pipeline  num_stages = 1: each K/V load is waited on before use, so every tile exposes
               a full DRAM latency and far fewer bytes are in flight per SM.
  no-tma       the `tl` kernel only (cp.async loads from the compute warps): full also times
               the Gluon kernel (attention_decode_gluon_kernel.py: a TMA producer warp, wgmma,
               persistent CTAs) on sm_90 and takes whichever is faster.
  no-gluon     the same candidates as no-tma (full without the Gluon kernel), named as the
               prefill's rung that drops its Gluon kernel.
  no-balanced  full without the Gluon kernel's balanced runs (split_by "balanced": equal runs
               of KV tiles over all units, attention_decode_gluon_kernel.py), so one sweep
               measures what they are worth on ragged batches.
  no-longest-first
               full with the Gluon kernel's work items dealt to its persistent CTAs in item
               order, not longest first (attention_decode_gluon.longest_first; ragged batches
               with more items than SMs only), so one sweep measures what the order is worth.
  no-early-start
               full with the Gluon kernel's producer starting each item as before session 107:
               the Q box and the first page lookup wait on the item's length (two cold loads
               in a row ahead of the first K box, where full has one:
               attention_decode_gluon_kernel.py, EARLY_START).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import torch
import triton

from .attention_configs import decode_configs, next_pow2, split_candidates
from .attention_decode_gluon import ROWS as GLUON_ROWS
from .attention_decode_gluon import (
    balanced_plan,
    gluon_candidates,
    gluon_decode_problem,
    gluon_split_launch,
    item_tiles,
    longest_first,
    persistent_ctas,
)
from .attention_decode_kernel import _decode_reduce_kernel, _decode_split_kernel
from .attention_launch import AttentionLaunch, aot_spec, triton_dtype_name
from .attention_target import device_key, interpreting, num_sms, target_of
from .attention_tune import DECODE_SOURCES, candidate_name, stored_key
from .attention_tune import tune as tune_configs

# The rungs: the values of prepare_decode's `rung` keyword.
DECODE_RUNGS = (
    "full",
    "no-split",
    "no-pipeline",
    "no-tma",
    "no-gluon",
    "no-balanced",
    "no-longest-first",
    "no-early-start",
)
# How a split config's partial outputs are merged: a second kernel, the split kernel's last
# program of each unit (attention_decode_kernel.py, FUSED_REDUCE), or the second kernel launched
# as the split kernel's programmatic dependent ("pdl": sm_90 and later, so its launch overlaps
# the split kernel's tail).
REDUCES = ("kernel", "fused", "pdl")

MAX_BLOCK_M = 64  # larger GQA groups x q_len are cut into several M blocks
# The Gluon decode's row split (attention_decode_gluon_kernel's M_ROWS): CTAs per unit. Not
# among the tuner's candidates: on an H100 (session 98, _logs/session98/row_split_probe.txt) it
# ran 0.4-1.5% slower than one CTA a unit at all five batch-16 GQA-8 points it was timed at,
# where it was meant to put the 68 idle SMs to work. Configs that name ROWS run it
# (scripts/decode_split_probe.py times it), so a GPU where it wins can be shown before it is
# offered.
ROW_SPLITS = (2, 4, 8)


def row_splits(rows: int, units: int, sms: int) -> list[int]:
    """Rows per CTA for the row split: each unit's `rows` (G x Sq, one M block) over 2, 4 or 8
    CTAs, where all of them still fit one CTA per SM; [] when the units fill over half the SMs
    or a unit spans several M blocks."""
    if rows > MAX_BLOCK_M:
        return []
    cut = {-(-rows // f) for f in ROW_SPLITS if f <= rows and units * f <= sms}
    return sorted(cut, reverse=True)


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
    rung: str = "full",
    num_splits: int | None = None,
    tune: bool = True,
    configs: list[dict] | None = None,
    reduce: str | None = None,
) -> AttentionLaunch:
    """Check shapes, allocate output and split buffers, choose splits/config, return the launch.

    q [B, Hq, Sq, D]; dense k/v_cache [B, Hkv, Skv, D], or paged [num_pages, page_size, Hkv, D]
    with block_table [B, max_pages] int32; cache_seqlens [B] int32 (KV length per sequence,
    >= Sq when causal); out [B, Hq, Sq, D]. cache_seqlens is read once here (host sync) to size
    the splits; launches read it on device, so it may change between calls within capacity.
    `configs` (dicts as attention_configs._cfg makes, without BLOCK_M) replaces the candidate
    list, for probes of configs the lists lack (scripts/decode_probe.py); taken as given: the
    rung's stage count and the shared-memory pruning are not applied to them.
    `reduce` merges the splits of a split config in a second kernel ("kernel"), inside the
    split kernel ("fused": attention_decode_kernel.py, and the Gluon kernel's per-item splits),
    or in the second kernel launched as the split kernel's programmatic dependent ("pdl", sm_90);
    None: the ways the target and config allow are timed for the chosen config (untimed:
    "kernel"; balanced runs are never fused).
    """
    if rung not in DECODE_RUNGS:
        raise ValueError(f"rung {rung!r} not in {DECODE_RUNGS}")
    if reduce not in (None, *REDUCES):
        raise ValueError(f"reduce {reduce!r} not in {REDUCES}")
    _check(q, k_cache, v_cache, cache_seqlens, block_table)
    batch, h_q, seq_q, head_dim = q.shape
    paged = block_table is not None
    k_strides: tuple[int, ...]
    v_strides: tuple[int, ...]
    if block_table is not None:  # paged: [num_pages, page_size, Hkv, D]: (page, head, row)
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
    total_kv = int(cache_seqlens.sum())
    fill = length_fill(total_kv, batch, max_kv)
    sm_scale = 1.0 / math.sqrt(head_dim) if sm_scale is None else float(sm_scale)
    target, sms = target_of(q.device), num_sms(q.device)
    # griddepcontrol (programmatic dependent launch) is sm_90's and later
    pdl_ok = target[0] == "cuda" and isinstance(target[1], int) and target[1] >= 90
    if reduce == "pdl" and not pdl_ok:
        raise ValueError(f"reduce 'pdl' needs sm_90 or later; target {target[0]}:{target[1]}")
    group = h_q // h_kv
    block_m = min(MAX_BLOCK_M, max(16, next_pow2(group * seq_q)))  # >= 16: tensor-core M
    m_blocks = triton.cdiv(group * seq_q, block_m)
    programs = batch * h_kv * m_blocks
    out = torch.empty_like(q)

    def m_blocks_of(cfg: dict) -> int:
        """A candidate's M blocks: the row split's (ROWS rows per CTA), else the problem's."""
        return triton.cdiv(group * seq_q, cfg["ROWS"]) if "ROWS" in cfg else m_blocks

    def splits_for(block_n: int) -> list[int]:
        """Split counts worth trying: fixed by the rung or the caller, else split_candidates."""
        if rung == "no-split":
            return [1]
        if num_splits is not None:
            return [max(1, int(num_splits))]
        return split_candidates(programs, max_kv, block_n, sms)

    gluon_why: str | None = "the caller's configs"

    def splits_of(cfg: dict) -> list[int]:
        """splits_for, and for the Gluon kernel only those giving at most two work items per
        SM: its grid is persistent (min(items, SMs) CTAs), so more items add no parallelism,
        only partials to merge. Its picks on the H200 (session 64, batch 16 and 64) were all
        at most one item per SM; the cut leaves it 1-3 split counts of 5-8 at the serving
        grid's points (20-40 fewer candidates at batch 16, where a point searched 73-208)."""
        if cfg.get("split_by") == "balanced":
            return [0]  # its slots follow from the lengths: balanced_slots, at each launch
        if "ROWS" in cfg:
            return [1]  # the row split reads each unit's whole KV range in every CTA
        splits = splits_for(cfg["BLOCK_N"])
        if cfg.get("impl") != "gluon" or num_splits is not None:
            return splits
        return [s for s in splits if s == 1 or programs * s <= 2 * sms] or [1]

    # no-balanced offers full's candidates but the balanced runs, no-longest-first full's
    # candidates in item order, no-early-start full's with the old item start (each tuned
    # under its own key)
    cand_rung = "full" if rung in ("no-balanced", "no-longest-first", "no-early-start") else rung
    if configs is None:
        cands = decode_configs(target, head_dim, q.element_size(), cand_rung, block_m, page_size)
        # The Gluon kernel's candidates join the `tl` kernel's in the joint search (sm_90)
        gluon, gluon_why = gluon_candidates(
            target,
            q,
            k_cache,
            v_cache,
            paged=paged,
            page_size=page_size,
            rung=cand_rung,
            block_m=block_m,
        )
        cands += gluon
        if (
            rung not in ("no-split", "no-balanced")
            and num_splits is None
            and fill < 8
            and reduce != "fused"  # balanced runs merge in the reduction kernel only
        ):
            # and, for a ragged batch, each Gluon tile over equal runs of KV tiles (split_by
            # "balanced"). Not for one of equal lengths, whose equal splits are already balanced:
            # there they would only add a kernel to compile and time per Gluon tile to the tune
            # pass. At q_len 1, batch 16 on the H200 they were worth 0.999x (session 66).
            cands += [dict(c, split_by="balanced") for c in gluon]
    else:
        cands = [dict(c, BLOCK_M=block_m) for c in configs]
        if any(c.get("split_by") == "balanced" and c.get("impl") != "gluon" for c in cands):
            raise ValueError("split_by 'balanced' is the Gluon kernel's only")
        for c in cands:  # the row split: the Gluon kernel's, unsplit items only
            if "ROWS" in c and (
                c.get("impl") != "gluon" or c.get("split_by") or num_splits not in (None, 1)
            ):
                raise ValueError(
                    f"ROWS given with impl {c.get('impl')!r}, split_by {c.get('split_by')!r}, "
                    f"num_splits {num_splits}; allowed: a Gluon config, unsplit"
                )
        balanced_given = any(c.get("split_by") == "balanced" for c in cands)
        if balanced_given and reduce == "fused":
            raise ValueError("split_by 'balanced' merges in the reduction kernel, not 'fused'")
        if balanced_given and (rung in ("no-split", "no-balanced") or num_splits is not None):
            # its slots follow from the lengths: a split count or a rung without them would be
            # ignored silently
            raise ValueError(
                f"split_by 'balanced' given with rung {rung!r}, num_splits {num_splits}"
            )
        if any(c.get("impl") == "gluon" for c in cands):
            why = gluon_decode_problem(target, q, k_cache, v_cache, paged, cand_rung)
            if why is not None:
                raise ValueError(f"a Gluon config was given, but {why}")

    def balanced_slots(block_n: int) -> int:
        """A balanced launch's partial slots per query row, for these lengths."""
        return balanced_plan(cache_seqlens, h_kv * m_blocks, block_n, capacity, sms)[2]

    # split buffers sized once for the largest split count any candidate may use
    most = max(
        s
        for c in cands
        for s in (
            [balanced_slots(c["BLOCK_N"])]
            if c.get("split_by") == "balanced"
            else splits_for(c["BLOCK_N"])
        )
    )
    o_part = lse_part = counters = None
    if most > 1:
        o_part = q.new_empty((batch, h_q, seq_q, most, head_dim), dtype=torch.float32)
        lse_part = q.new_empty((batch, h_q, seq_q, most), dtype=torch.float32)
        # the fused merge's per-unit counts of finished splits; each launch leaves them at 0
        counters = torch.zeros(programs, dtype=torch.int32, device=q.device)
    bt_stride = block_table.stride(0) if block_table is not None else 0

    lens = cache_seqlens.tolist() if fill < 8 else None  # host sync: at prepare only
    orders: dict[tuple, torch.Tensor | None] = {}

    def item_order(cfg: dict, splits: int) -> torch.Tensor | None:
        """The Gluon kernel's work items longest first for this candidate (ragged batches with
        more items than SMs: attention_decode_gluon.longest_first), or None."""
        if lens is None or rung == "no-longest-first" or cfg.get("split_by") == "balanced":
            return None
        by_longest = cfg.get("split_by") == "longest"
        key = (cfg["BLOCK_N"], splits, by_longest, cfg.get("ROWS"))
        if key not in orders:
            tiles = item_tiles(
                lens, h_kv * m_blocks_of(cfg), splits, cfg["BLOCK_N"], max_kv, by_longest
            )
            order = longest_first(tiles, persistent_ctas(len(tiles), sms))
            orders[key] = (
                None if order is None else torch.tensor(order, dtype=torch.int32, device=q.device)
            )
        return orders[key]

    def build(cfg: dict) -> Callable[[], object]:
        balanced = cfg.get("split_by") == "balanced"
        splits = balanced_slots(cfg["BLOCK_N"]) if balanced else cfg["num_splits"]
        fused = splits > 1 and cfg.get("REDUCE") == "fused"
        pdl = splits > 1 and cfg.get("REDUCE") == "pdl"
        if cfg.get("impl") == "gluon":
            split_launch = gluon_split_launch(
                q,
                k_cache,
                v_cache,
                out,
                o_part,
                lse_part,
                cache_seqlens,
                block_table,
                cfg=cfg,
                splits=splits,
                m_blocks=m_blocks_of(cfg),
                longest=max_kv,
                causal=causal,
                sm_scale=sm_scale,
                sms=sms,
                capacity=capacity,
                order=item_order(cfg, splits),
                counters=counters if fused else None,
                launch_dependents=pdl,
                early_start=rung != "no-early-start",
            )
        else:
            split_launch = _tl_split_launch(cfg, splits, fused)
        if splits == 1 or fused:
            return split_launch
        reduce_kernel = _decode_reduce_kernel[(batch * h_q * seq_q,)]
        reduce_args = (o_part, lse_part, out, h_q, seq_q, splits, *out.stride()[:3])
        # a balanced launch may have up to cdiv(SMs, units per sequence) + 1 slots: above 32 the
        # [slots, D] fp32 tile needs more than two warps' registers
        warps = 2 if next_pow2(splits) <= 32 else 4
        reduce_meta = dict(HEAD_DIM=head_dim, SPLITS_POW2=next_pow2(splits), num_warps=warps)
        if pdl and not interpreting():  # the split kernel's programmatic dependent: it waits
            # for it on the GPU (the interpreter, which runs launches in order, has no
            # griddepcontrol: there, as the CPU tests' pretend sm_90, the plain launch)
            reduce_meta.update(GDC_WAIT=True, launch_pdl=True)

        def launch() -> None:
            split_launch()
            reduce_kernel(*reduce_args, **reduce_meta)

        return launch

    def _tl_split_launch(cfg: dict, splits: int, fused: bool) -> Callable[[], object]:
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
            counters,
            h_q,
            h_kv,
            group,
            seq_q,
            splits,
            max_kv,
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
            FUSED_REDUCE=fused,
            SPLIT_BY_LONGEST=cfg.get("split_by") == "longest",
            num_warps=cfg["num_warps"],
            num_stages=cfg["num_stages"],
            **cfg["options"],
        )
        return lambda: split_kernel(*split_args, **split_meta)

    # The tuning key: what the choice depends on.
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
        rung,
        page_size,
        next_pow2(max_kv),
        num_splits,
        device_key(q.device),
    ) + ((repr(configs),) if configs is not None else ())
    # with the Gluon tiles among the candidates the choice is another one (the `tl` kernel's
    # pick for a layout TMA cannot take must not stand in for it)
    key += ("gluon",) if any(c.get("impl") == "gluon" for c in cands) else ()
    # A ragged batch is tuned apart from one of its longest length (keys of full batches are
    # unchanged): on the H200 (session 53, fmha_decode_serving) ragged batches reused the split
    # count tuned for the uniform one, 1 split at batch 16 x 8 KV heads, so the SMs given the
    # short sequences idled while the longest ran: 0.80-0.86x FlashInfer at KV 16k.
    key += (f"fill{fill}/8",) if fill < 8 else ()
    # Tiles and split counts are timed together: tuned in two stages (the tile at the first split
    # candidate, then the splits for that tile) the tuner missed the pair that won by 4-5% at
    # batch 16, KV 4k on an H100 (a 64x6-stage tile whole beat 64x3 in 2 splits; session 46,
    # results/h100/_logs/session46/call9-decode_probe.txt). 35-42 pairs at batch 16, 5-6 at 256.
    joint = [dict(c, num_splits=s) for c in cands for s in splits_of(c)]
    if fill < 8:
        # A ragged batch also tries splits of one size for every sequence, a share of the
        # longest (SPLIT_BY_LONGEST): split by its own length, each sequence's programs run as
        # long as it is, and the SMs that drew the long ones finish last. On the H200 own decode
        # at batch 16, KV 4k reached 0.86x a one-pass read of the same bytes with ragged
        # lengths against 0.95x with full ones (results/h200/_logs/session57).
        joint += [
            dict(c, split_by="longest")
            for c in joint
            if c["num_splits"] > 1 and c.get("split_by") is None
        ]
    stored = (
        stored_key(key + ("joint",), joint, device_key(q.device), DECODE_SOURCES)
        if tune_on
        else None
    )
    # a split candidate's partials must be its own: each candidate's check starts from NaN
    scratch = [t for t in (out, o_part, lse_part) if t is not None]
    cfg, info = tune_configs(key + ("joint",), joint, build, tune_on, out, stored, poison=scratch)
    balanced = cfg.get("split_by") == "balanced"
    plan = None
    if balanced:  # the slots of these lengths (the candidate, and so a cached pick, has 0)
        plan = balanced_plan(cache_seqlens, h_kv * m_blocks, cfg["BLOCK_N"], capacity, sms)
        cfg = dict(cfg, num_splits=plan[2])
    assert cfg["num_splits"] <= max(most, 1), (cfg, most)  # the split buffers hold it
    # the split counts offered with the chosen tile, for provider_config
    split_cands = [c for c in joint if dict(c, num_splits=0) == dict(cfg, num_splits=0)]
    # The merge of the chosen split config: the two ways timed against each other (a decision
    # of its own, so the joint search's stored decisions still hold), or the caller's.
    reduce_info: dict[str, Any] = {}
    if cfg["num_splits"] > 1:
        # every way the target allows (pdl: sm_90), but balanced runs are never fused: a unit's
        # partials are segments of several CTAs' runs, which the reduction kernel merges
        merges: tuple[str, ...] = (reduce,) if reduce else REDUCES if pdl_ok else REDUCES[:2]
        if balanced:
            merges = tuple(m for m in merges if m != "fused")
        ways = [dict(cfg, REDUCE=r) for r in merges]
        stored = (
            stored_key(key + ("reduce",), ways, device_key(q.device), DECODE_SOURCES)
            if tune_on
            else None
        )
        # named as the joint search names them, so reduce_info keeps each way's time
        cfg, reduce_info = tune_configs(
            key + ("reduce",),
            ways,
            build,
            tune_on,
            out,
            stored,
            label=candidate_name,
            poison=scratch,
        )
    # num_splits_source "variant": fixed by the no-split rung (a value committed rows carry)
    source = (
        "variant"
        if rung == "no-split"
        else "user"
        if num_splits is not None
        else ("tuned" if info["tuned"] and (len(split_cands) > 1 or balanced) else "heuristic")
    )
    picked_gluon = cfg.get("impl") == "gluon"
    gluon_failed = [f for f in info.get("tune_failed", []) if f.startswith("gluon-")]
    gluon_lost = (
        "the Gluon tiles were not timed (tuning off): the first candidate taken"
        if not info["tuned"]
        else f"the Gluon tiles failed or disagreed ({len(gluon_failed)}: see tune_failed)"
        if gluon_failed and len(gluon_failed) == sum(c.get("impl") == "gluon" for c in joint)
        else "the `tl` kernel was faster"
    )
    page_path = None
    if paged:
        if page_size % cfg["BLOCK_N"] == 0:
            page_path = "page-per-tile"
        else:
            page_path = "box-per-page" if picked_gluon else "per-row-gather"
    # "variant": the rung's stored key in provider_config (committed rows carry it)
    config: dict[str, Any] = dict(
        kernel="attn_decode",
        # "tl": attention_decode_kernel.py; "gluon": attention_decode_gluon_kernel.py (TMA
        # producer warp, one wgmma consumer warpgroup, persistent CTAs: `programs` is the work
        # items, at most num_sms CTAs run them)
        impl="gluon" if picked_gluon else "tl",
        variant=rung,
        causal=causal,
        head_dim=head_dim,
        dtype=str(q.dtype).removeprefix("torch."),
        group=group,
        seq_q=seq_q,
        # the Gluon kernel always runs 64-row M blocks (wgmma m64), padding past G x Sq
        BLOCK_M=GLUON_ROWS if picked_gluon else cfg["BLOCK_M"],
        BLOCK_N=cfg["BLOCK_N"],
        M_BLOCKS=m_blocks_of(cfg),
        # the Gluon kernel's row split: each CTA's own rows of a unit (None: all of them)
        rows_per_cta=cfg.get("ROWS"),
        num_warps=cfg["num_warps"],
        num_stages=cfg["num_stages"],
        options=dict(cfg["options"]),
        num_splits=cfg["num_splits"],
        num_splits_source=source,
        split_candidates=[c["num_splits"] for c in split_cands]
        if not balanced
        else [cfg["num_splits"]],
        # "length": each sequence cut into num_splits of its own length; "longest": chunks of
        # the longest sequence's share, the same for all (ragged batches, tuned); "balanced"
        # (the Gluon kernel): equal runs of KV tiles over all units, num_splits its partial slots
        split_by=cfg.get("split_by", "length") if cfg["num_splits"] > 1 else None,
        # balanced: the CTAs and the least KV tiles each runs (balanced_plan)
        balanced_ctas=plan[0] if plan else None,
        balanced_tiles_per_cta=plan[1] if plan else None,
        # the Gluon kernel's work items dealt to its CTAs longest first (item_order), or None:
        # in item order
        item_order="longest-first"
        if picked_gluon and item_order(cfg, cfg["num_splits"]) is not None
        else None,
        # how the Gluon kernel's producer starts a work item: "early" (its Q box, a prefetch of
        # its first page's table entry and its length's load in flight together: EARLY_START),
        # "length first" (the rung no-early-start, and a balanced run's segments), or None
        item_start=(
            ("length first" if balanced or rung == "no-early-start" else "early")
            if picked_gluon
            else None
        ),
        # how the splits are merged, and whether that was timed ("tuned", "cache") or not
        reduce=cfg.get("REDUCE") if cfg["num_splits"] > 1 else None,
        reduce_source=reduce_info and ("user" if reduce else reduce_info["tune_source"]) or None,
        # each way's time when they were timed against each other (tuned now or read from the
        # tune cache): what the choice beat; a row's `reduce` alone names only the winner
        reduce_timings_ms=merge_timings(reduce_info.get("tune_timings_ms")),
        programs=plan[0] if plan else batch * h_kv * m_blocks_of(cfg) * cfg["num_splits"],
        num_sms=sms,
        max_kv_len=max_kv,
        length_fill=round(total_kv / (batch * max_kv), 3),
        paged=paged,
        page_size=page_size,
        page_path=page_path,
        tma=picked_gluon,
        # why the Gluon (TMA) kernel was not a candidate: its wording, when it was one but lost,
        # says so; committed rows before session 64 carry "decode has no TMA path: ..."
        tma_reason=None if picked_gluon else (gluon_why or gluon_lost),
        sm_scale=sm_scale,
        target=f"{target[0]}:{target[1]}",
        tuned=bool(info["tuned"]),
        tune_candidates=info["tune_candidates"],
        tune_ms=info.get("tune_ms"),
        tune_source=info["tune_source"],
        # candidates dropped: failed to compile or run, or disagreed with the first good output
        tune_failed=list(info.get("tune_failed", [])),
        tune_key=info.get("tune_key", ""),
        # an in-process hit keeps the first tuning's "tuned": this tells the report it was not
        # tuned inside this point (harness/report/data.py tuned_in_point), as prefill's **info does
        tune_cache_hit=bool(info.get("tune_cache_hit", False)),
    )
    return AttentionLaunch(out, None, config, [build(cfg)])


def merge_timings(timings: dict[str, float] | None) -> dict[str, float] | None:
    """{merge: ms} from the merge decision's tune timings, whose names end in "-<merge>"
    (candidate_name), or None when the merges were not timed against each other."""
    if not timings:
        return None
    return {name.rsplit("-", 1)[1]: ms for name, ms in timings.items()}


def length_fill(total_kv: int, batch: int, longest: int) -> int:
    """How full a batch's KV is, in eighths of batch x its longest length (8: every sequence of
    one length). The work a split balances depends on it, so it is part of the tuning key."""
    return min(8, round(8 * total_kv / (batch * longest)))


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
    the split kernel over a dense and a paged cache, the paged one with the fused merge, and the
    reduction (8 splits).

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
        Counters="*i32",
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
        FUSED_REDUCE=False,  # a constexpr with a default is still named: AOT applies none
        SPLIT_BY_LONGEST=False,
    )
    dense = dict(base, PAGED=False, PAGE_SIZE=1, Block_table=None, Counters=None)
    paged = dict(base, PAGED=True, PAGE_SIZE=page_size, Counters=None)
    fused = dict(base, PAGED=True, PAGE_SIZE=page_size, FUSED_REDUCE=True)
    reduce = dict(HEAD_DIM=head_dim, SPLITS_POW2=8, GDC_WAIT=False)
    specs = [
        aot_spec("attn_decode_split_dense", _decode_split_kernel, types, dense, opts),
        aot_spec(f"attn_decode_split_paged{page_size}", _decode_split_kernel, types, paged, opts),
        aot_spec(
            f"attn_decode_split_paged{page_size}_fused", _decode_split_kernel, types, fused, opts
        ),
        aot_spec("attn_decode_reduce", _decode_reduce_kernel, types, reduce, dict(num_warps=2)),
    ]
    if backend == "cuda":  # the "pdl" merge's reduction: griddepcontrol is sm_90's
        pdl = dict(reduce, GDC_WAIT=True)
        opts_pdl = dict(num_warps=2, launch_pdl=True)
        specs.append(
            aot_spec("attn_decode_reduce_pdl", _decode_reduce_kernel, types, pdl, opts_pdl)
        )
    return specs
