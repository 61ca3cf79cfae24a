"""The Gluon decode kernel's side of the decode launcher (attention_decode_gluon_kernel.py):
when it can run, its candidates, its shared memory, its launch and its AOT compile specs.

attention_decode.prepare_decode offers these candidates beside the `tl` kernel's (marked
impl="gluon") and times both in one joint search, so each problem gets the faster kernel and
its provider_config says which. The Gluon kernel writes the same split partials, so a split
config merges them with the same reduction kernel, or inside the kernel (the fused merge, as the
`tl` kernel's; not for balanced runs, whose units' partials are segments of runs).
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from typing import Any

import torch

from .attention_configs import SM90_SMEM_BYTES
from .attention_launch import aot_spec, triton_dtype_name
from .attention_prefill import _flat_rows

ROWS = 64  # query rows per CTA (attention_decode_gluon_kernel.ROWS)
SMEM_SLACK = 1024  # mbarriers and alignment beside the tiles
# (BLOCK_N, STAGES), best guess first: 64-key tiles 4 and 6 deep, 128-key tiles 2 and 3 deep,
# and 64 x 2, the one that fits beside D 256's two 32 KiB Q boxes.
# One CTA per SM whatever the shared memory: the warp-specialized kernel launches 256 threads
# at up to 255 registers (sm_90 AOT, Triton 3.9), the whole register file.
TILES = ((64, 4), (64, 6), (128, 2), (128, 3), (64, 2))


def smem_bytes(head_dim: int, block_n: int, stages: int, elem_bytes: int = 2) -> int:
    """Shared memory of one CTA: two 64-row Q boxes (the next work item's lands while this one's
    is read), STAGES K and V tiles, the barriers."""
    tile = head_dim * elem_bytes
    return 2 * ROWS * tile + 2 * stages * block_n * tile + SMEM_SLACK


def box_rows(block_n: int, page_size: int | None) -> int | None:
    """Rows per TMA box: the tile, or one page when pages are shorter than tiles; None when
    neither divides the other or a page is not a whole number of 8-row swizzle atoms."""
    if page_size is None or page_size % block_n == 0:
        return block_n
    if block_n % page_size == 0 and page_size % 8 == 0:
        return page_size
    return None


def _paged_view_ok(t: torch.Tensor) -> bool:
    """[num_pages, page_size, Hkv, D] with heads packed in a row and pages back to back, so the
    cache is a [num_pages * page_size, Hkv * D] matrix that one TMA descriptor covers."""
    _, page, h, d = t.shape
    s0, s1, s2, s3 = t.stride()
    return (
        s3 == 1
        and s2 == d
        and s1 >= h * d
        and s0 == page * s1
        and (s1 * t.element_size()) % 16 == 0
        and t.data_ptr() % 16 == 0
    )


def gluon_decode_problem(
    target: tuple[str, Any],
    q: torch.Tensor,
    k_cache: torch.Tensor,
    v_cache: torch.Tensor,
    paged: bool,
    rung: str,
) -> str | None:
    """Why the Gluon decode cannot run this problem, or None."""
    if target[0] != "cuda" or target[1] != 90:
        return f"the Gluon decode is sm_90 only (wgmma, TMA); target {target[0]}:{target[1]}"
    if rung in ("no-tma", "no-pipeline", "no-gluon"):
        return f"rung {rung}: the `tl` kernel only"
    head_dim = q.shape[-1]
    if head_dim not in (64, 128, 256):
        return f"the Gluon decode takes head_dim 64, 128 or 256, not {head_dim}"
    b, h, s, _ = q.shape
    if _flat_rows(q) is None or (h > 1 and q.stride(1) != s * q.stride(2)):
        return "q is not packed over (heads, positions): a KV group's rows are not one TMA box"
    if k_cache.stride() != v_cache.stride():
        return "k_cache and v_cache differ in strides"
    if v_cache.data_ptr() % 16:  # k_cache's alignment is checked with its view below
        return "v_cache is not 16-byte aligned (a TMA base must be)"
    if paged and not _paged_view_ok(k_cache):
        return "the paged cache is not a [pages * page_size, Hkv * D] matrix TMA can address"
    if not paged and _flat_rows(k_cache) is None:
        return "the dense cache is not a [rows, D] view TMA can address"
    return None


def gluon_candidates(
    target: tuple[str, Any],
    q: torch.Tensor,
    k_cache: torch.Tensor,
    v_cache: torch.Tensor,
    *,
    paged: bool,
    page_size: int | None,
    rung: str,
    block_m: int,
) -> tuple[list[dict], str | None]:
    """(the Gluon candidates prepare_decode adds to the `tl` kernel's, why there are none)."""
    why = gluon_decode_problem(target, q, k_cache, v_cache, paged, rung)
    if why is not None:
        return [], why
    cands = gluon_decode_configs(q.shape[-1], page_size, block_m)
    return cands, None if cands else f"no tile fits pages of {page_size}"


def gluon_decode_configs(head_dim: int, page_size: int | None, block_m: int) -> list[dict]:
    """The Gluon candidates, in prepare_decode's config shape (num_stages is STAGES)."""
    return [
        dict(
            impl="gluon",
            BLOCK_M=block_m,
            BLOCK_N=bn,
            num_warps=4,
            num_stages=st,
            options={},
        )
        for bn, st in TILES
        if box_rows(bn, page_size) is not None and smem_bytes(head_dim, bn, st) <= SM90_SMEM_BYTES
    ]


def balanced_plan(
    cache_seqlens: torch.Tensor, units_b: int, block_n: int, capacity: int, sms: int
) -> tuple[int, int, int]:
    """A BALANCED launch's (CTAs, least KV tiles per CTA, partial slots per query row).

    Every (batch, KV head, M block) unit has max(cdiv(length, block_n), 1) tiles (`units_b`
    units per sequence); the CTAs take runs of per = max(per_min, cdiv(total, CTAs)) tiles of
    them laid end to end. A unit of n tiles then spans at most floor((n - 1) / per) + 2 runs:
    with per >= per_min and n <= the capacity's tiles, and, since per >= units_b * n / CTAs, at
    most cdiv(CTAs, units_b) + 1 whatever the lengths become within capacity. Reads the lengths
    (a host sync: at prepare, never in a timed launch)."""
    tiles = torch.clamp((cache_seqlens.long() + block_n - 1) // block_n, min=1)
    total = units_b * int(tiles.sum())
    ctas = max(1, min(sms, total))
    per_min = -(-total // ctas)
    cap_tiles = max(1, -(-capacity // block_n))
    slots = min(-(-ctas // units_b) + 1, (cap_tiles - 1) // per_min + 2)
    return ctas, per_min, slots


def persistent_ctas(n_items: int, sms: int) -> int:
    """The per-item launch's grid: one CTA per SM at most, none without an item (longest_first
    plans for this many)."""
    return max(1, min(n_items, sms))


def item_tiles(
    lens: list[int],
    units_b: int,
    splits: int,
    block_n: int,
    longest: int,
    split_by_longest: bool,
) -> list[int]:
    """Each work item's KV tiles, in the kernel's item order (split-major, then batch, KV head,
    M block; `units_b` = KV heads x M blocks per sequence), cut as the kernel's _item cuts them."""
    cdiv = lambda a, b: -(-a // b)  # noqa: E731
    units = len(lens) * units_b
    tiles = []
    for item in range(units * splits):
        split, unit = divmod(item, units)
        kv_len = lens[unit // units_b]
        share = max(longest, kv_len) if split_by_longest else kv_len
        per_split = cdiv(cdiv(share, block_n), splits) * block_n
        lo = split * per_split
        tiles.append(cdiv(max(min(lo + per_split, kv_len) - lo, 0), block_n))
    return tiles


def longest_first(tiles: list[int], ctas: int) -> list[int] | None:
    """The work items in the order the persistent CTAs should find them (order[slot] = item;
    CTA c runs slots c, c + ctas, ...), or None where the order cannot matter (every CTA one
    item at most, or all items of one size).

    The items go heaviest first, each to the CTA with the fewest tiles so far among those with
    a slot left (greedy longest-processing-time under the grid's fixed slots per CTA). In item
    order the CTAs take whatever lengths the batch holds where they fall: with a serving
    batch's shuffled lengths (batch 64, KV 2k-4k, 4 KV heads: 256 items on 132 CTAs) the most
    loaded CTA runs 1.26x the mean tiles, longest first 1.03x (counting tiles only;
    tests/kernels/test_decode_item_order.py)."""
    n = len(tiles)
    if n <= ctas or len(set(tiles)) == 1:
        return None
    rounds = -(-n // ctas)
    # CTA c has slots c, c + ctas, ... below n: `rounds` of them, or one fewer past n % ctas
    free = [rounds - (c >= n - (rounds - 1) * ctas) for c in range(ctas)]
    heap = [(0, c) for c in range(ctas)]
    taken: list[list[int]] = [[] for _ in range(ctas)]
    for item in sorted(range(n), key=lambda i: -tiles[i]):
        load, c = heapq.heappop(heap)
        taken[c].append(item)
        free[c] -= 1
        if free[c]:
            heapq.heappush(heap, (load + tiles[item], c))
    order = [0] * n
    for c, items in enumerate(taken):
        for r, item in enumerate(items):
            order[c + r * ctas] = item
    return order


def _descriptor(t: torch.Tensor, shape: list[int], row_stride: int, block_rows: int) -> Any:
    from triton.experimental.gluon import language as gl
    from triton.experimental.gluon.nvidia.hopper import TensorDescriptor

    d = t.shape[3]
    dtype = {torch.bfloat16: gl.bfloat16, torch.float16: gl.float16}[t.dtype]
    layout = gl.NVMMASharedLayout.get_default_for([block_rows, d], dtype)
    return TensorDescriptor(t, shape, [row_stride, 1], [block_rows, d], layout)


def gluon_split_launch(
    q: torch.Tensor,
    k_cache: torch.Tensor,
    v_cache: torch.Tensor,
    out: torch.Tensor,
    o_part: torch.Tensor | None,
    lse_part: torch.Tensor | None,
    cache_seqlens: torch.Tensor,
    block_table: torch.Tensor | None,
    *,
    cfg: dict,
    splits: int,
    m_blocks: int,
    longest: int,
    causal: bool,
    sm_scale: float,
    sms: int,
    capacity: int,
    order: torch.Tensor | None = None,
    counters: torch.Tensor | None = None,
    launch_dependents: bool = False,
    early_start: bool = True,
) -> Callable[[], object]:
    """The Gluon split kernel's launch for one candidate (the reduction is the caller's, or,
    given `counters`, int32 [units] at zero, the kernel's own fused merge): one persistent CTA
    per SM at most, each taking every sms-th work item (in `order`'s order when given: int32
    [items], longest_first's), or (split_by "balanced") one run of tiles (balanced_plan;
    `splits` is then its slots). `launch_dependents`: each CTA lets the next kernel, launched as
    its programmatic dependent (the reduction kernel's "pdl" way), be scheduled at its start.
    `early_start` False: each item's Q box and first page lookup wait on its length's load, as
    before session 107 (the rung no-early-start; the kernel's EARLY_START)."""
    from .attention_decode_gluon_kernel import _decode_gluon_kernel

    batch, h_q, seq_q, head_dim = q.shape
    bn = cfg["BLOCK_N"]
    balanced = cfg.get("split_by") == "balanced"
    rows = cfg.get("ROWS", ROWS)  # the row split: rows per CTA (M_ROWS), unsplit items only
    if rows != ROWS:
        stacked = h_q // (k_cache.shape[2] if block_table is not None else k_cache.shape[1]) * seq_q
        if not 1 <= rows < ROWS or m_blocks * rows < stacked:
            raise ValueError(
                f"ROWS {rows} over {m_blocks} M blocks for {stacked} rows a unit; allowed: "
                f"1 <= ROWS < {ROWS}, M blocks x ROWS >= the unit's rows"
            )
        if splits > 1 or balanced:
            raise ValueError(f"ROWS {rows}: the row split runs unsplit items; splits {splits}")
    q_desc = _descriptor(q, [_flat_rows(q), head_dim], q.stride(2), ROWS)  # type: ignore[list-item]
    paged = block_table is not None
    if paged:
        pages, page_size, h_kv, _ = k_cache.shape
        sub = box_rows(bn, page_size)
        assert sub is not None, (bn, page_size)
        shape = [pages * page_size, h_kv * head_dim]
        k_desc = _descriptor(k_cache, shape, k_cache.stride(1), sub)
        v_desc = _descriptor(v_cache, shape, v_cache.stride(1), sub)
        kv_rows = (0, 0)
    else:
        page_size, h_kv, sub = 1, k_cache.shape[1], bn
        shape = [_flat_rows(k_cache), head_dim]  # type: ignore[list-item]
        k_desc = _descriptor(k_cache, shape, k_cache.stride(2), sub)
        v_desc = _descriptor(v_cache, shape, v_cache.stride(2), sub)
        kv_rows = (k_cache.stride(0) // k_cache.stride(2), k_cache.stride(1) // k_cache.stride(2))
    n_items = batch * h_kv * m_blocks * splits
    ctas, per_min = persistent_ctas(n_items, sms), 1
    if balanced:
        ctas, per_min, slots = balanced_plan(cache_seqlens, h_kv * m_blocks, bn, capacity, sms)
        assert slots == splits, (slots, splits)  # the caller sized the partials with it
    assert order is None or (not balanced and order.numel() == n_items), (balanced, n_items)
    fused = counters is not None and splits > 1
    assert not (fused and balanced), "the fused merge takes per-item splits only"
    assert not fused or counters.numel() >= batch * h_kv * m_blocks  # type: ignore[union-attr]
    args = (
        q_desc,
        k_desc,
        v_desc,
        out,
        o_part,
        lse_part,
        cache_seqlens,
        block_table,
        counters if fused else None,
        order,
        h_q,
        h_q // h_kv,
        seq_q,
        splits,
        longest,
        sm_scale,
        n_items,
        batch,
        per_min,
        q.stride(0) // q.stride(2),
        q.stride(1) // q.stride(2),
        *kv_rows,
        *out.stride()[:3],
        block_table.stride(0) if paged else 0,  # type: ignore[union-attr]
    )
    meta = dict(
        HEAD_DIM=head_dim,
        H_KV=h_kv,
        BLOCK_N=bn,
        SUB=sub,
        M_BLOCKS=m_blocks,
        STAGES=cfg["num_stages"],
        SPLIT=splits > 1 or balanced,
        PAGED=paged,
        PAGE_SIZE=page_size,
        CAUSAL=causal,
        SPLIT_BY_LONGEST=cfg.get("split_by") == "longest",
        BALANCED=balanced,
        # the lengths' vector in _balanced_run: at least one element per thread of 4 warps
        BLOCK_B=max(128, 1 << (batch - 1).bit_length()),
        ORDERED=order is not None,
        FUSED_REDUCE=fused,
        LAUNCH_DEPENDENTS=launch_dependents,
        M_ROWS=rows,
        EARLY_START=early_start,
        num_warps=4,
    )
    kernel = _decode_gluon_kernel[(ctas,)]
    return lambda: kernel(*args, **meta)


# ----------------------------------------------------------------------------------------------
# Ahead-of-time compile specs (for `harness inspect` and the AOT tests)
# ----------------------------------------------------------------------------------------------


def aot_specs(
    dtype: torch.dtype = torch.bfloat16, head_dim: int = 128, page_size: int = 16
) -> list[dict[str, Any]]:
    """Compile specs for sm_90: every candidate tile over a paged cache of `page_size` (split,
    causal), the first with each launcher option (the row split whole), and the first over a
    dense cache (whole, non-causal)."""
    from triton.experimental.gluon import language as gl

    from .attention_decode_gluon_kernel import _decode_gluon_kernel

    ty = triton_dtype_name(dtype)
    gl_ty = {torch.bfloat16: gl.bfloat16, torch.float16: gl.float16}[dtype]
    specs = []
    cands = gluon_decode_configs(head_dim, page_size, 16)
    runs = [(c, True) for c in cands]
    runs += [(dict(cands[0], split_by="balanced"), True), (dict(cands[0], order=True), True)]
    runs += [(dict(cands[0], order=True, fused=True), True), (dict(cands[0], pdl=True), True)]
    runs += [(dict(cands[0], ROWS=4), True)]  # GQA 8 at q_len 1 over two CTAs
    runs += [(dict(cands[0], late_start=True), True)]  # the rung no-early-start
    runs += [(gluon_decode_configs(head_dim, None, 16)[0], False)]
    for cfg, paged in runs:
        bn, st = cfg["BLOCK_N"], cfg["num_stages"]
        sub = box_rows(bn, page_size if paged else None)
        descs = {}
        for arg, block in (("q_desc", ROWS), ("k_desc", sub), ("v_desc", sub)):
            layout = gl.NVMMASharedLayout.get_default_for([block, head_dim], gl_ty)
            descs[arg] = f"tensordesc<{ty}[{block}, {head_dim}],{layout!r}>"
        constexprs: dict[str, Any] = dict(
            HEAD_DIM=head_dim,
            H_KV=8,
            BLOCK_N=bn,
            SUB=sub,
            M_BLOCKS=1,
            STAGES=st,
            SPLIT=paged and "ROWS" not in cfg,
            PAGED=paged,
            PAGE_SIZE=page_size if paged else 1,
            CAUSAL=paged,
            SPLIT_BY_LONGEST=False,
            BALANCED=cfg.get("split_by") == "balanced",
            BLOCK_B=128,
            ORDERED=bool(cfg.get("order")),
            FUSED_REDUCE=bool(cfg.get("fused")),
            LAUNCH_DEPENDENTS=bool(cfg.get("pdl")),
            M_ROWS=cfg.get("ROWS", ROWS),
            EARLY_START=not cfg.get("late_start"),
        )
        types = dict(Out=f"*{ty}", O_part="*fp32", Lse_part="*fp32", Seqlens="*i32")
        types.update(Block_table="*i32", Order="*i32", Counters="*i32", sm_scale="fp32")
        if not paged:
            constexprs["Block_table"] = None
        if not cfg.get("order"):
            constexprs["Order"] = None
        if not cfg.get("fused"):
            constexprs["Counters"] = None
        types.update(descs)  # a Gluon descriptor's type names its shared layout
        kind = f"paged{page_size}" if paged else "dense"
        kind += "_balanced" if cfg.get("split_by") == "balanced" else ""
        kind += "_ordered" if cfg.get("order") else ""
        kind += "_fused" if cfg.get("fused") else ""
        kind += "_pdl" if cfg.get("pdl") else ""
        kind += f"_rows{cfg['ROWS']}" if "ROWS" in cfg else ""
        kind += "_late" if cfg.get("late_start") else ""
        name = f"attn_decode_gluon_{kind}_n{bn}s{st}_d{head_dim}"
        spec = aot_spec(name, _decode_gluon_kernel, types, constexprs, dict(num_warps=4))
        specs.append(dict(spec, gluon=True))
    return specs
