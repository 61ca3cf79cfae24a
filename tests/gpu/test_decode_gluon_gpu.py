"""On a GPU (sm_90): the Gluon decode (attention_decode_gluon_kernel.py) against an fp32
reference, every candidate tile pinned, over paged caches (pages of 16: a TMA box per page; of
256: a box per tile) and dense ones, ragged lengths that end mid-tile, causal q_len 1-16 with
GQA 4 and 8 (16 x 8 rows: two M blocks), 1 and 3 KV splits (by each sequence's length and by
the longest), the row split (a unit's rows over 2 or 4 CTAs) and balanced runs of tiles
(split_by "balanced": up to 33 partial slots, units cut across CTAs), D 64 / 128 / 256. Cache slots past each sequence's end, the pages no sequence
owns and the block-table entries past a sequence's pages hold NaN or point at NaN pages: a
kernel that reads them, or multiplies their V rows by a zero weight, fails."""

import math

import pytest
import torch

pytestmark = pytest.mark.gpu


def _sm90() -> bool:
    return torch.cuda.is_available() and torch.cuda.get_device_capability() == (9, 0)


needs_sm90 = pytest.mark.skipif(not _sm90(), reason="the Gluon decode is sm_90 only")


def _paged(batch, h_kv, lens, page, head_dim, gen):
    """A shuffled paged cache with NaN everywhere no sequence's keys are, and its table."""
    per_seq = [math.ceil(n / page) for n in lens]
    width = max(per_seq)
    pages = sum(per_seq) + 3  # three pages nobody owns
    k = torch.randn(pages, page, h_kv, head_dim, generator=gen).to(torch.bfloat16)
    v = torch.randn(pages, page, h_kv, head_dim, generator=gen).to(torch.bfloat16)
    order = torch.randperm(pages, generator=gen).tolist()
    spare = order[-1]
    k[order[-3:]] = math.nan
    v[order[-3:]] = math.nan
    table = torch.full((batch, width), spare, dtype=torch.int32)
    used = 0
    for b, n in enumerate(per_seq):
        table[b, :n] = torch.tensor(order[used : used + n], dtype=torch.int32)
        used += n
        tail = lens[b] - (n - 1) * page  # keys in the sequence's last page
        k[table[b, n - 1], tail:] = math.nan
        v[table[b, n - 1], tail:] = math.nan
    return k.cuda(), v.cuda(), table.cuda()


def _reference(q, k, v, lens, table, page, causal):
    """fp32 attention of each sequence's query rows over its own keys (bottom-right causal)."""
    batch, h_q, seq_q, d = q.shape
    h_kv = k.shape[1] if table is None else k.shape[2]
    out = torch.empty(q.shape, dtype=torch.float32, device=q.device)
    for b, n in enumerate(lens):
        if table is None:  # dense [B, Hkv, S, D]
            kb, vb = k[b, :, :n].float(), v[b, :, :n].float()
        else:
            ids = table[b, : math.ceil(n / page)].long()
            kb = k[ids].reshape(-1, h_kv, d)[:n].permute(1, 0, 2).float()
            vb = v[ids].reshape(-1, h_kv, d)[:n].permute(1, 0, 2).float()
        kb, vb = (t.repeat_interleave(h_q // h_kv, 0) for t in (kb, vb))
        s = q[b].float() @ kb.transpose(-1, -2) / math.sqrt(d)
        if causal:
            i = torch.arange(seq_q, device=q.device)[:, None]
            j = torch.arange(n, device=q.device)[None, :]
            s = s.masked_fill(j > i + n - seq_q, -math.inf)
        out[b] = s.softmax(-1) @ vb
    return out


CASES = [  # (page or None for dense, seq_q, group, head_dim, lengths)
    (16, 1, 4, 128, [4096, 3001, 1000, 17]),
    (16, 4, 8, 128, [2048, 1999, 64, 700]),
    (256, 1, 8, 128, [4096, 2500, 257, 4000]),
    (256, 8, 4, 128, [1024, 1023, 300, 9]),
    (16, 16, 8, 128, [512, 333, 100, 16]),  # 128 stacked rows: two M blocks
    (None, 2, 4, 128, [1000, 777, 64, 65]),
    (16, 1, 8, 64, [3000, 50, 999, 2048]),
    (256, 4, 4, 256, [1500, 800, 257, 256]),
]


@needs_sm90
@pytest.mark.parametrize("case", CASES, ids=lambda c: f"p{c[0]}-q{c[1]}-g{c[2]}-d{c[3]}")
def test_every_gluon_tile_matches_fp32_with_nan_past_each_end(case):
    from harness_kernels.triton.attention_decode import prepare_decode
    from harness_kernels.triton.attention_decode_gluon import gluon_decode_configs

    page, seq_q, group, head_dim, lens = case
    gen = torch.Generator().manual_seed(64)
    batch, h_kv = len(lens), 2
    if page is None:
        cap = max(lens) + 40
        k = torch.randn(batch, h_kv, cap, head_dim, generator=gen).to("cuda", torch.bfloat16)
        v = torch.randn(batch, h_kv, cap, head_dim, generator=gen).to("cuda", torch.bfloat16)
        for b, n in enumerate(lens):
            k[b, :, n:] = math.nan
            v[b, :, n:] = math.nan
        table = None
    else:
        k, v, table = _paged(batch, h_kv, lens, page, head_dim, gen)
    q = torch.randn(batch, h_kv * group, seq_q, head_dim, generator=gen).to("cuda", torch.bfloat16)
    seqlens = torch.tensor(lens, dtype=torch.int32, device="cuda")
    ref = _reference(q, k, v, lens, table, page, causal=True)
    tiles = gluon_decode_configs(head_dim, page, 16)
    assert tiles
    for tile in tiles:
        cfg = {key: val for key, val in tile.items() if key != "BLOCK_M"}
        # the row split (unsplit: each of 2 or 4 CTAs a unit owns its rows over every key)
        rows = [-(-group * seq_q // f) for f in (2, 4) if f <= group * seq_q <= 64]
        ways = [(1, None, None), (3, None, None), (3, "longest", None), (None, "balanced", None)]
        for splits, by, cut in ways + [(1, None, r) for r in rows]:
            cfgs = [dict(cfg, split_by=by)] if by else [dict(cfg, ROWS=cut)] if cut else [cfg]
            launch = prepare_decode(
                q,
                k,
                v,
                cache_seqlens=seqlens,
                block_table=table,
                configs=cfgs,
                num_splits=splits,
                tune=False,
            )
            assert launch.config["impl"] == "gluon" and launch.config["tma"] is True
            launch.out.fill_(math.nan)  # a row no CTA stores stays NaN, not an earlier way's
            out = launch().float()
            torch.cuda.synchronize()
            assert launch.config["rows_per_cta"] == cut
            where = f"{tile} splits {splits} by {by} rows {cut}"
            assert torch.isfinite(out).all(), where
            err = (out - ref).abs()
            assert err.max().item() < 3e-2, (where, err.max().item())


@needs_sm90
def test_the_tuner_times_gluon_beside_tl_and_repeated_launches_agree():
    from harness_kernels.triton.attention_decode import prepare_decode

    gen = torch.Generator().manual_seed(65)
    lens = [4096] * 8 + [2000] * 8
    k, v, table = _paged(16, 4, lens, 16, 128, gen)
    q = torch.randn(16, 32, 4, 128, generator=gen).to("cuda", torch.bfloat16)
    seqlens = torch.tensor(lens, dtype=torch.int32, device="cuda")
    launch = prepare_decode(q, k, v, cache_seqlens=seqlens, block_table=table)
    cfg = launch.config
    assert cfg["impl"] in ("gluon", "tl") and cfg["tuned"]
    assert not any("gluon" in f and "differs" in f for f in cfg["tune_failed"]), cfg["tune_failed"]
    first = launch().clone()
    for _ in range(50):
        assert torch.equal(launch(), first)
    ref = _reference(q, k, v, lens, table, 16, causal=True)
    assert (first.float() - ref).abs().max().item() < 3e-2


@needs_sm90
@pytest.mark.parametrize("splits,by", [(1, None), (4, "longest"), (None, "balanced")])
def test_many_work_items_per_persistent_cta(splits, by):
    """Batch 64 x 8 KV heads: 512 work items (2048 with 4 splits) on 132 CTAs, so every CTA
    reuses both Q buffers and runs stages across items; with split_by longest the short
    sequences' last splits are items with no tile; balanced, each CTA's run crosses several
    units. Added after session 64's run (the tests then had at most two items per CTA); the
    per-item splits passed on an H200 in session 65. The per-item launches are dealt longest
    first (session 67), and must give the bits of the same launch in item order."""
    from harness_kernels.triton.attention_decode import prepare_decode
    from harness_kernels.triton.attention_decode_gluon import gluon_decode_configs

    gen = torch.Generator().manual_seed(66)
    lens = [int(x) for x in torch.randint(17, 1500, (64,), generator=gen)]
    lens[0] = 1500
    k, v, table = _paged(64, 8, lens, 16, 128, gen)
    q = torch.randn(64, 32, 2, 128, generator=gen).to("cuda", torch.bfloat16)
    seqlens = torch.tensor(lens, dtype=torch.int32, device="cuda")
    ref = _reference(q, k, v, lens, table, 16, causal=True)
    cfg = {
        key: val for key, val in gluon_decode_configs(128, 16, 16)[0].items() if key != "BLOCK_M"
    }
    cfgs = [dict(cfg, split_by=by)] if by else [cfg]

    def prepare(rung: str = "full"):
        return prepare_decode(
            q,
            k,
            v,
            cache_seqlens=seqlens,
            block_table=table,
            configs=cfgs,
            num_splits=splits,
            tune=False,
            rung=rung,
        )

    launch = prepare()
    assert launch.config["impl"] == "gluon"
    if by != "balanced":
        assert launch.config["programs"] == 512 * splits
    # ragged, more items than CTAs: the per-item launches deal them longest first (session 67)
    assert launch.config["item_order"] == (None if by == "balanced" else "longest-first")
    first = launch().clone()
    for _ in range(20):
        assert torch.equal(launch(), first)
    assert torch.isfinite(first).all()
    assert (first.float() - ref).abs().max().item() < 3e-2
    if by != "balanced":  # each item's arithmetic is its own: item order gives the same bits
        in_item_order = prepare("no-longest-first")
        assert in_item_order.config["item_order"] is None
        assert torch.equal(in_item_order(), first)


@needs_sm90
def test_balanced_runs_after_sequences_grew():
    """The plan (CTAs, tiles per run, partial slots) is made from the lengths at prepare; the
    sequences then grow within capacity (one to 16x its length) before the launch, and the
    runs still cover every key: the kernel lengthens its runs (per) from the lengths it reads."""
    from harness_kernels.triton.attention_decode import prepare_decode
    from harness_kernels.triton.attention_decode_gluon import gluon_decode_configs

    gen = torch.Generator().manual_seed(67)
    grown = [4096, 4000, 3500, 2049, 4096, 1000, 3000, 64]
    lens = [256, 4000, 300, 2049, 100, 1000, 200, 64]
    k, v, table = _paged(8, 4, grown, 16, 128, gen)
    q = torch.randn(8, 32, 4, 128, generator=gen).to("cuda", torch.bfloat16)
    seqlens = torch.tensor(lens, dtype=torch.int32, device="cuda")
    ref = _reference(q, k, v, grown, table, 16, causal=True)
    for tile in gluon_decode_configs(128, 16, 16):
        cfg = {key: val for key, val in tile.items() if key not in ("BLOCK_M",)}
        seqlens.copy_(torch.tensor(lens, dtype=torch.int32))
        launch = prepare_decode(
            q,
            k,
            v,
            cache_seqlens=seqlens,
            block_table=table,
            configs=[dict(cfg, split_by="balanced")],
            tune=False,
        )
        assert launch.config["split_by"] == "balanced", launch.config
        seqlens.copy_(torch.tensor(grown, dtype=torch.int32))
        out = launch().float()
        torch.cuda.synchronize()
        assert torch.isfinite(out).all(), tile
        assert (out - ref).abs().max().item() < 3e-2, (tile, (out - ref).abs().max().item())


@needs_sm90
@pytest.mark.parametrize("by", [None, "balanced"])
@pytest.mark.parametrize("lens,sms", [([1000, 17, 17], 1), ([17, 1000], 2), ([17, 1000, 17], 1)])
def test_items_whose_first_tile_is_masked_after_other_items(monkeypatch, lens, sms, by):
    """Session 65's balanced runs computed wrong partials for exactly these: an item whose only
    tile is partly past its sequence's end (no unmasked tile), run by a CTA after items on the
    other Q buffer, or before any item with an unmasked tile. ptxas 12.8 (Triton 3.6's) built
    the Q operand's wgmma descriptors for head-dim columns 16-127 only in the unmasked tiles'
    loop preheader and reused them, stale or never set, in the masked loop when the first loop
    ran no tile (session 66, read off the SASS). One or two CTAs force the order; the per-item
    path gets the same items in the same order."""
    import harness_kernels.triton.attention_decode as decode
    from harness_kernels.triton.attention_decode_gluon import gluon_decode_configs

    monkeypatch.setattr(decode, "num_sms", lambda device: sms)
    gen = torch.Generator().manual_seed(68)
    k, v, table = _paged(len(lens), 2, lens, 16, 128, gen)
    q = torch.randn(len(lens), 8, 1, 128, generator=gen).to("cuda", torch.bfloat16)
    seqlens = torch.tensor(lens, dtype=torch.int32, device="cuda")
    ref = _reference(q, k, v, lens, table, 16, causal=True)
    for tile in gluon_decode_configs(128, 16, 16):
        cfg = {key: val for key, val in tile.items() if key != "BLOCK_M"}
        launch = decode.prepare_decode(
            q,
            k,
            v,
            cache_seqlens=seqlens,
            block_table=table,
            configs=[dict(cfg, split_by=by) if by else cfg],
            num_splits=None if by else 1,
            tune=False,
        )
        assert launch.config["impl"] == "gluon", launch.config
        out = launch().float()
        err = (out - ref).abs().amax(dim=(1, 2, 3))  # per sequence
        assert torch.isfinite(out).all() and (err < 3e-2).all(), (tile, err.tolist())
