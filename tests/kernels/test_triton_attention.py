"""CPU (interpreter) correctness tests for the Triton attention kernels against an fp32 reference.

Shapes are tiny and odd on purpose: ragged KV tails, q_len < kv_len, GQA ratios 1/2/4 and MQA,
shuffled pages with partial last pages and NaN-poisoned unused cache slots.
"""

from __future__ import annotations

import math
import os
import zlib

os.environ.setdefault("TRITON_INTERPRET", "1")

import pytest  # noqa: E402
import torch  # noqa: E402
from harness_kernels.triton.attention_configs import choose_num_splits  # noqa: E402
from harness_kernels.triton.attention_decode import DECODE_RUNGS, prepare_decode  # noqa: E402
from harness_kernels.triton.attention_prefill import (  # noqa: E402
    PREFILL_RUNGS,
    prepare_attention,
)

# The interpreter turns 1-element scalar arrays into loop bounds with int(): NumPy < 2.4 warns.
pytestmark = pytest.mark.filterwarnings(
    "ignore:Conversion of an array with ndim:DeprecationWarning"
)

TOL = {torch.float16: 4e-3, torch.bfloat16: 2e-2}  # output rounding; math runs in fp32 here


def reference(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    causal: bool,
    sm_scale: float,
    kv_lens: list[int] | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """fp32 attention, explicit bottom-right causal mask: (out [B,Hq,Sq,D], lse [B,Hq,Sq])."""
    batch, h_q, seq_q, _ = q.shape
    group = h_q // k.shape[1]
    outs, lses = [], []
    for b in range(batch):
        kv_len = k.shape[2] if kv_lens is None else kv_lens[b]
        kb = k[b, :, :kv_len].float().repeat_interleave(group, 0)  # [Hq, L, D]
        vb = v[b, :, :kv_len].float().repeat_interleave(group, 0)
        s = q[b].float() @ kb.transpose(-1, -2) * sm_scale  # [Hq, Sq, L]
        if causal:
            i = torch.arange(seq_q)[:, None]
            j = torch.arange(kv_len)[None, :]
            s = s.masked_fill(j > i + (kv_len - seq_q), float("-inf"))
        lses.append(torch.logsumexp(s, -1))
        outs.append(torch.softmax(s, -1) @ vb)
    return torch.stack(outs), torch.stack(lses)


def _randn(*shape: int, dtype: torch.dtype, gen: torch.Generator) -> torch.Tensor:
    return torch.randn(*shape, generator=gen).to(dtype)


def _assert_close(out: torch.Tensor, ref: torch.Tensor, dtype: torch.dtype) -> None:
    assert not torch.isnan(out).any(), "NaN in output"
    err = (out.float() - ref).abs().max().item()
    assert err <= TOL[dtype] * max(1.0, ref.abs().max().item()), f"max abs err {err}"


# ----------------------------------------------------------------------------------------------
# Prefill
# ----------------------------------------------------------------------------------------------

# (B, Hq, Hkv, Sq, Skv, D, causal, dtype, rung)
PREFILL_CASES = [
    (2, 4, 4, 37, 37, 64, True, torch.bfloat16, "full"),  # MHA, ragged tail
    (1, 4, 2, 45, 45, 128, False, torch.float16, "full"),  # GQA 2
    (2, 4, 1, 29, 61, 64, True, torch.float16, "full"),  # MQA, chunked prefill
    (1, 4, 1, 17, 80, 128, False, torch.bfloat16, "full"),  # MQA, q_len < kv_len
    (1, 8, 2, 33, 50, 64, True, torch.bfloat16, "q-reload"),  # GQA 4
    (2, 2, 1, 40, 71, 64, True, torch.float16, "no-pipeline"),
    (1, 4, 2, 31, 47, 128, True, torch.bfloat16, "no-tma"),
    (2, 4, 2, 45, 77, 64, True, torch.bfloat16, "reg-stage"),  # prefetch past a ragged tail
    (1, 4, 1, 70, 70, 128, False, torch.float16, "reg-stage"),
    (1, 2, 2, 1, 53, 64, True, torch.float16, "full"),  # a single query row
    (1, 2, 1, 19, 19, 256, True, torch.bfloat16, "full"),  # head_dim 256
]


@pytest.mark.parametrize("case", PREFILL_CASES, ids=lambda c: "-".join(map(str, c)))
def test_prefill_matches_reference(case: tuple) -> None:
    batch, h_q, h_kv, seq_q, seq_kv, head_dim, causal, dtype, rung = case
    gen = torch.Generator().manual_seed(zlib.crc32(repr(case).encode()))
    q = _randn(batch, h_q, seq_q, head_dim, dtype=dtype, gen=gen)
    k = _randn(batch, h_kv, seq_kv, head_dim, dtype=dtype, gen=gen)
    v = _randn(batch, h_kv, seq_kv, head_dim, dtype=dtype, gen=gen)
    launch = prepare_attention(q, k, v, causal=causal, rung=rung, return_lse=True)
    out = launch()
    ref, ref_lse = reference(q, k, v, causal, 1.0 / math.sqrt(head_dim))
    _assert_close(out, ref, dtype)
    assert launch.lse is not None and launch.lse.shape == (batch, h_q, seq_q)
    assert torch.allclose(launch.lse, ref_lse, atol=1e-4, rtol=1e-4)
    assert launch.config["tma"] == (rung not in ("no-tma", "reg-stage"))
    # "variant": the rung's key in provider_config (a stored name, kept)
    assert launch.config["variant"] == rung and launch.config["tuned"] is False


def test_prefill_strided_layouts_and_scale() -> None:
    """[B, S, H, D] memory seen as [B, H, S, D] cannot use per-head TMA boxes (pointer path).
    K/V sliced from a longer, NaN-padded cache still can (a [rows, D] view), but the masked
    tail tiles must not multiply the NaN rows past kv_len by zero."""
    gen = torch.Generator().manual_seed(7)
    dtype = torch.float16
    q = _randn(2, 23, 4, 64, dtype=dtype, gen=gen).transpose(1, 2)  # [B, Hq, Sq, D] view
    k_big = _randn(2, 2, 64, 64, dtype=dtype, gen=gen)
    v_big = _randn(2, 2, 64, 64, dtype=dtype, gen=gen)
    k_big[:, :, 41:] = float("nan")
    v_big[:, :, 41:] = float("nan")
    k, v = k_big[:, :, :41], v_big[:, :, :41]
    launch = prepare_attention(q, k, v, causal=True, sm_scale=0.3)
    assert launch.config["tma"] is False and "view" in launch.config["tma_reason"]
    assert launch.out.stride() == q.stride()  # same layout as q
    ref, _ = reference(q, k, v, True, 0.3)
    _assert_close(launch(), ref, dtype)

    q2 = q.contiguous()
    launch2 = prepare_attention(q2, k, v, causal=False, sm_scale=0.3)
    assert launch2.config["tma"] is True and launch2.config["v_tail_tma"] is False
    assert launch2.lse is None
    ref2, _ = reference(q2, k, v, False, 0.3)
    _assert_close(launch2(), ref2, dtype)


def test_prefill_launch_reuses_output() -> None:
    gen = torch.Generator().manual_seed(3)
    q = _randn(1, 2, 16, 64, dtype=torch.float16, gen=gen)
    k = _randn(1, 2, 24, 64, dtype=torch.float16, gen=gen)
    launch = prepare_attention(q, k, k, causal=True)
    first = launch().clone()
    assert launch() is launch.out
    assert torch.equal(first, launch.out)
    for key in ("BLOCK_M", "BLOCK_N", "num_warps", "num_stages", "tma", "variant", "tuned"):
        assert key in launch.config


def test_prefill_rejects_bad_input() -> None:
    q = torch.randn(1, 3, 8, 64, dtype=torch.float16)
    k = torch.randn(1, 2, 8, 64, dtype=torch.float16)
    with pytest.raises(ValueError):
        prepare_attention(q, k, k, causal=False)  # 3 heads over 2 kv heads
    with pytest.raises(ValueError):
        prepare_attention(q[:, :2], k[:, :, :4], k[:, :, :4], causal=True)  # q_len > kv_len
    with pytest.raises(ValueError):
        prepare_attention(q[:, :2], k, k, causal=True, rung="fast")
    assert PREFILL_RUNGS == ("full", "q-reload", "no-pipeline", "no-tma", "reg-stage")


# ----------------------------------------------------------------------------------------------
# Decode
# ----------------------------------------------------------------------------------------------


def _paged(
    cache: torch.Tensor, page_size: int, perm: torch.Tensor, spare_pages: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """Scatter a dense [B, H, S, D] cache into shuffled NaN-filled pages: (pages, block_table)."""
    batch, heads, seq, dim = cache.shape
    per_seq = math.ceil(seq / page_size)
    pages = torch.full((batch * per_seq + spare_pages, page_size, heads, dim), float("nan"))
    pages = pages.to(cache.dtype)
    table = perm[: batch * per_seq].view(batch, per_seq).to(torch.int32)
    for b in range(batch):
        for p in range(per_seq):
            chunk = cache[b, :, p * page_size : (p + 1) * page_size].transpose(0, 1)
            pages[table[b, p], : chunk.shape[0]] = chunk
    return pages, table


# (B, Hq, Hkv, Sq, capacity, D, page_size or None, causal, dtype, rung, num_splits)
DECODE_CASES = [
    (2, 4, 2, 1, 75, 64, None, True, torch.bfloat16, "full", 3),  # dense
    (2, 8, 2, 3, 75, 128, 16, True, torch.float16, "full", 4),  # paged 16: per-row gather
    (2, 4, 1, 2, 130, 64, 64, False, torch.bfloat16, "no-split", None),  # paged 64: page/tile
    (3, 4, 4, 1, 70, 64, 16, True, torch.bfloat16, "no-pipeline", 2),  # MHA
    (2, 8, 1, 8, 96, 64, 64, True, torch.float16, "no-tma", 5),  # MQA: G*Sq = 64 rows
    (1, 4, 2, 4, 300, 64, None, True, torch.float16, "full", None),  # heuristic splits > 1
    (1, 16, 1, 5, 60, 64, 16, True, torch.float16, "full", 2),  # G*Sq = 80: two M blocks
]


def _decode_inputs(case: tuple) -> tuple:
    """(q, k, v, k_cache, v_cache, block_table, lens) of a DECODE_CASES case: ragged lengths
    (the first sequence full), the cache past each length NaN."""
    batch, h_q, h_kv, seq_q, capacity, head_dim, page_size, causal, dtype, rung, splits = case
    gen = torch.Generator().manual_seed(zlib.crc32(repr(case).encode()))
    q = _randn(batch, h_q, seq_q, head_dim, dtype=dtype, gen=gen)
    k = _randn(batch, h_kv, capacity, head_dim, dtype=dtype, gen=gen)
    v = _randn(batch, h_kv, capacity, head_dim, dtype=dtype, gen=gen)
    lens = torch.randint(seq_q, capacity + 1, (batch,), generator=gen, dtype=torch.int32)
    lens[0] = capacity
    if page_size is None:
        # poison the dense cache past each sequence's length: those rows must never be read
        for b in range(batch):
            k[b, :, lens[b] :] = float("nan")
            v[b, :, lens[b] :] = float("nan")
        k_cache, v_cache, table = k, v, None
    else:
        perm = torch.randperm(batch * math.ceil(capacity / page_size) + 3, generator=gen)
        k_cache, table = _paged(k, page_size, perm, spare_pages=3)
        v_cache, _ = _paged(v, page_size, perm, spare_pages=3)
        # pages past each sequence's length hold NaN too: write NaN over the valid copies' tails
        for b in range(batch):
            for pos in range(int(lens[b]), capacity):
                page, row = table[b, pos // page_size], pos % page_size
                k_cache[page, row] = float("nan")
                v_cache[page, row] = float("nan")
    return q, k, v, k_cache, v_cache, table, lens


@pytest.mark.parametrize("case", DECODE_CASES, ids=lambda c: "-".join(map(str, c)))
def test_decode_matches_reference(case: tuple) -> None:
    batch, h_q, h_kv, seq_q, capacity, head_dim, page_size, causal, dtype, rung, splits = case
    q, k, v, k_cache, v_cache, table, lens = _decode_inputs(case)
    launch = prepare_decode(
        q,
        k_cache,
        v_cache,
        cache_seqlens=lens,
        block_table=table,
        causal=causal,
        rung=rung,
        num_splits=splits,
    )
    out = launch()
    ref, _ = reference(q, k, v, causal, 1.0 / math.sqrt(head_dim), kv_lens=lens.tolist())
    _assert_close(out, ref, dtype)
    cfg = launch.config
    assert cfg["variant"] == rung and cfg["tma"] is False and cfg["paged"] == (table is not None)
    if rung == "no-split":
        assert cfg["num_splits"] == 1
    elif splits is not None:
        assert cfg["num_splits"] == splits and cfg["num_splits_source"] == "user"
    else:
        assert cfg["num_splits"] > 1 and cfg["num_splits_source"] == "heuristic"
    assert cfg["M_BLOCKS"] == math.ceil(h_q // h_kv * seq_q / cfg["BLOCK_M"])
    if page_size is not None:
        expected = "page-per-tile" if page_size % cfg["BLOCK_N"] == 0 else "per-row-gather"
        assert cfg["page_path"] == expected


@pytest.mark.parametrize("case", [c for c in DECODE_CASES if c[-1] and c[-1] > 1], ids=str)
def test_decode_fused_merge_matches_the_reduction_kernel(case: tuple) -> None:
    """reduce="fused": the last split program of each unit merges the partials. Same output as
    the reduction kernel's, again on a second launch (the counters are back at zero), and
    recorded in provider_config."""
    *_, causal, dtype, rung, splits = case
    q, k, v, k_cache, v_cache, table, lens = _decode_inputs(case)
    args = dict(cache_seqlens=lens, block_table=table, causal=causal, rung=rung, num_splits=splits)
    fused = prepare_decode(q, k_cache, v_cache, reduce="fused", **args)
    first = fused().clone()
    assert torch.equal(fused(), first)
    kernel = prepare_decode(q, k_cache, v_cache, reduce="kernel", **args)
    ref, _ = reference(q, k, v, causal, 1.0 / math.sqrt(q.shape[-1]), kv_lens=lens.tolist())
    _assert_close(first, ref, dtype)
    torch.testing.assert_close(first, kernel(), rtol=0, atol=2e-3)
    assert (fused.config["reduce"], fused.config["reduce_source"]) == ("fused", "user")
    assert fused.config["reduce_timings_ms"] is None  # the caller's merge: nothing timed
    assert kernel.config["reduce"] == "kernel"
    # untimed (the interpreter), the merge defaults to the kernel; one split merges nothing
    assert prepare_decode(q, k_cache, v_cache, **args).config["reduce"] == "kernel"
    one = prepare_decode(q, k_cache, v_cache, **dict(args, num_splits=1), reduce="fused")
    assert one.config["reduce"] is None and one.config["reduce_source"] is None


def test_decode_cache_seqlens_read_at_launch() -> None:
    """Launches read cache_seqlens on device: shrinking it later changes the result."""
    gen = torch.Generator().manual_seed(11)
    q = _randn(1, 2, 1, 64, dtype=torch.float16, gen=gen)
    k = _randn(1, 1, 64, 64, dtype=torch.float16, gen=gen)
    v = _randn(1, 1, 64, 64, dtype=torch.float16, gen=gen)
    lens = torch.tensor([64], dtype=torch.int32)
    launch = prepare_decode(q, k, v, cache_seqlens=lens, num_splits=2)
    _assert_close(launch(), reference(q, k, v, True, 0.125)[0], torch.float16)
    lens[0] = 40
    _assert_close(launch(), reference(q, k, v, True, 0.125, kv_lens=[40])[0], torch.float16)


def test_decode_takes_a_given_candidate_list() -> None:
    """configs= replaces the candidate list (scripts/decode_probe.py times configs the lists
    lack): the launch runs the one given, records it, and is still correct."""
    from harness_kernels.triton.attention_configs import _cfg

    gen = torch.Generator().manual_seed(12)
    q = _randn(2, 4, 1, 64, dtype=torch.float16, gen=gen)
    k = _randn(2, 2, 64, 64, dtype=torch.float16, gen=gen)
    v = _randn(2, 2, 64, 64, dtype=torch.float16, gen=gen)
    lens = torch.tensor([64, 37], dtype=torch.int32)
    given = _cfg(16, 16, 4, 1)
    launch = prepare_decode(q, k, v, cache_seqlens=lens, configs=[given], num_splits=3)
    assert (launch.config["BLOCK_N"], launch.config["num_splits"]) == (16, 3)
    _assert_close(launch(), reference(q, k, v, True, 0.125, kv_lens=[64, 37])[0], torch.float16)


def test_decode_tunes_tiles_and_split_counts_together() -> None:
    """Every (tile, split count) pair is one candidate of a single search: timed in two stages
    (the tile at its first split count, then the splits) the tuner never timed the pairs that
    won by 4-5% at batch 16, KV 4k on an H100 (session 46)."""
    from harness_kernels.triton.attention_configs import _cfg, split_candidates
    from harness_kernels.triton.attention_target import num_sms

    gen = torch.Generator().manual_seed(13)
    q = _randn(2, 4, 1, 64, dtype=torch.float16, gen=gen)
    k = _randn(2, 2, 256, 64, dtype=torch.float16, gen=gen)
    lens = torch.tensor([256, 200], dtype=torch.int32)
    tiles = [_cfg(16, 16, 4, 1), _cfg(16, 32, 4, 1)]
    launch = prepare_decode(q, k, k, cache_seqlens=lens, configs=tiles)
    programs, sms = 2 * 2, num_sms(q.device)
    splits = [s for c in tiles for s in split_candidates(programs, 256, c["BLOCK_N"], sms)]
    # lengths 256 and 200 are ragged: each split pair is timed split by the longest too
    assert launch.config["tune_candidates"] == len(splits) + sum(s > 1 for s in splits)
    chosen = split_candidates(programs, 256, launch.config["BLOCK_N"], sms)
    assert launch.config["split_candidates"] == chosen


def test_decode_rejects_bad_input() -> None:
    q = torch.randn(2, 4, 2, 64, dtype=torch.float16)
    k = torch.randn(2, 2, 32, 64, dtype=torch.float16)
    with pytest.raises(ValueError):  # lengths past the cache
        prepare_decode(q, k, k, cache_seqlens=torch.tensor([8, 40], dtype=torch.int32))
    with pytest.raises(ValueError):  # int64 lengths
        prepare_decode(q, k, k, cache_seqlens=torch.tensor([8, 8]))
    with pytest.raises(ValueError):
        prepare_decode(q, k, k, cache_seqlens=torch.tensor([8, 8], dtype=torch.int32), rung="split")
    with pytest.raises(ValueError):
        prepare_decode(q, k, k, cache_seqlens=torch.tensor([8, 8], dtype=torch.int32), reduce="x")
    assert DECODE_RUNGS == (
        "full",
        "no-split",
        "no-pipeline",
        "no-tma",
        "no-gluon",
        "no-balanced",
        "no-longest-first",
        "no-early-start",
    )
    lens = torch.tensor([8, 8], dtype=torch.int32)
    balanced = [dict(impl="gluon", BLOCK_N=64, split_by="balanced")]
    for extra in (dict(rung="no-balanced"), dict(rung="no-split"), dict(num_splits=2)):
        with pytest.raises(ValueError, match="balanced"):  # would be ignored silently
            prepare_decode(q, k, k, cache_seqlens=lens, configs=balanced, **extra)


def test_num_splits_heuristic() -> None:
    # H200: 132 SMs. batch 16 x 8 KV heads = 128 programs: 2 splits fill 2 CTAs per SM.
    assert choose_num_splits(128, 4096, 64, 132) == 2
    # batch 64 x 8 heads already fills the GPU: no split.
    assert choose_num_splits(512, 4096, 64, 132) == 1
    # batch 1: many splits, but each keeps >= 4 tiles of 64 keys.
    assert choose_num_splits(8, 32768, 64, 132) >= 16
    assert choose_num_splits(8, 512, 64, 132) == 2
    assert choose_num_splits(8, 100, 64, 132) == 1


def test_tune_picks_fastest_correct_candidate(monkeypatch: pytest.MonkeyPatch) -> None:
    """The tuner (GPU-only in real use) with the timer faked: a wrong-output candidate and a
    failing one are dropped, the fastest correct one wins, and the result is cached."""
    from harness_kernels.triton import attention_configs as configs
    from harness_kernels.triton import attention_tune

    out = torch.zeros(4)
    fake_ms = {16: 3.0, 32: 1.0, 64: 0.5, 128: 2.0}  # BLOCK_N 64 is fast but wrong

    def build(cfg: dict):
        def run() -> None:
            if cfg["BLOCK_N"] == 128:
                raise RuntimeError("out of resources")
            out.fill_(2.0 if cfg["BLOCK_N"] == 64 else 1.0)
            run.ms = fake_ms[cfg["BLOCK_N"]]

        return run

    monkeypatch.setattr(torch.cuda, "synchronize", lambda: None)
    monkeypatch.setattr(attention_tune, "bench_cold", lambda fn, device: fn.ms)
    cands = [configs._cfg(16, n, 4, 2) for n in (16, 32, 64, 128)]
    key = ("test", 1)
    cfg, info = attention_tune.tune(key, cands, build, enabled=True, output=out)
    assert cfg["BLOCK_N"] == 32 and info["tuned"] and info["tune_ms"] == 1.0
    assert len(info["tune_failed"]) == 2
    cfg2, info2 = attention_tune.tune(key, cands, build, enabled=True, output=out)
    assert cfg2 == cfg and info2["tune_cache_hit"]
    attention_tune._TUNE_CACHE.pop(key)
    cfg3, info3 = attention_tune.tune(key, cands, build, enabled=False)
    assert cfg3 == cands[0] and not info3["tuned"]


def test_tune_names_gluon_candidates_that_have_no_tl_tile_keys(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The Gluon FMHA's candidates (BLOCK_N, STAGES, CONSUMERS, OVERLAP: no BLOCK_M, no
    num_warps) go through the same tuner: each timed or failed one is named by its keys. Until
    session 43 naming them raised KeyError on the GPU, so every Gluon tune failed and own-triton
    fell back to its `tl` kernel."""
    from harness_kernels.triton import attention_tune
    from harness_kernels.triton.attention_gluon import gluon_configs

    cands = gluon_configs(128, "full")
    assert len(cands) > 1 and all("BLOCK_M" not in c for c in cands)
    out = torch.zeros(2)

    def build(cfg: dict):
        def run() -> None:
            if cfg is cands[0]:
                raise RuntimeError("out of shared memory")
            out.fill_(1.0)

        run.ms = 1.0 if cfg is cands[-1] else 2.0
        return run

    monkeypatch.setattr(torch.cuda, "synchronize", lambda: None)
    monkeypatch.setattr(attention_tune, "bench_cold", lambda fn, device: fn.ms)
    key = ("test-gluon-names", 1)
    cfg, info = attention_tune.tune(key, cands, build, enabled=True, output=out)
    attention_tune._TUNE_CACHE.pop(key)
    assert cfg == cands[-1] and info["tune_ms"] == 1.0
    first = ",".join(f"{k}={v}" for k, v in sorted(cands[0].items()))
    assert info["tune_failed"] == [f"{first}: RuntimeError"]


def test_split_candidates_fill_the_gpu_at_batch_one():
    """Batch 1, 8 KV heads (64 programs), KV 4k in 128-wide tiles: the 4-tile floor stops at 8
    splits (64 programs on 132 SMs); the shorter-split candidates reach a full wave."""
    from harness_kernels.triton.attention_configs import split_candidates

    assert choose_num_splits(8, 4096, 128, 132) == 8
    cands = split_candidates(8, 4096, 128, 132)
    assert cands[0] == 8 and max(8 * s for s in cands) >= 132
    assert len(cands) == len(set(cands))
    assert split_candidates(512, 4096, 64, 132)[0] == 1  # a big batch needs no split first


def test_split_candidates_add_half_again_within_the_kv_tiles():
    """Batch 16, 8 KV heads (128 programs): 2, 4 and 8 splits, and 3 and 6 beside them (6
    splits won at KV 4k, pages of 16, on two H100s); not 12, since 12 splits of 32 KV tiles
    leave one empty (3 tiles each make 11); never more splits than KV tiles."""
    from harness_kernels.triton.attention_configs import split_candidates

    cands = split_candidates(128, 4096, 128, 132)
    assert cands[0] == 2 and {1, 2, 3, 4, 6, 8} <= set(cands) and 12 not in cands
    assert len(cands) == len(set(cands))
    assert max(split_candidates(8, 1024, 128, 132)) <= 1024 // 128


def test_cuda_decode_list_offers_the_deep_64_wide_tile():
    """The probe's winner at batch 16, KV 4k, pages of 256 (64 x 6 stages) is a
    candidate at D 128 and fits shared memory beside Q."""
    from harness_kernels.triton.attention_configs import decode_configs

    cands = decode_configs(("cuda", 90), 128, 2, "full", 16, 256)
    assert any((c["BLOCK_N"], c["num_stages"]) == (64, 6) for c in cands)


@pytest.mark.parametrize("reduce", ["kernel", "fused"])
@pytest.mark.parametrize(
    "case", [c for c in DECODE_CASES if c[-1] and c[-1] > 1 and c[6] is not None][:2], ids=str
)
def test_decode_split_by_longest_matches_reference(case: tuple, reduce: str) -> None:
    """split_by="longest" (a candidate the tuner adds for ragged batches): every sequence is cut
    in chunks of the longest one's share, so a short sequence's last splits hold no key and
    weigh nothing in the merge. The output is the reference's, with either merge."""
    *_, causal, dtype, rung, splits = case
    q, k, v, k_cache, v_cache, table, lens = _decode_inputs(case)
    # the last sequence a fifth of the first: its later splits hold no key (keys past its
    # length are real values here, so reading one would change the output)
    lens[-1] = max(case[3], int(lens[0]) // 5)
    args = dict(cache_seqlens=lens, block_table=table, causal=causal, rung=rung, num_splits=splits)
    plain = prepare_decode(q, k_cache, v_cache, **args).config
    cand = {key: plain[key] for key in ("BLOCK_N", "num_warps", "num_stages", "options")}
    launch = prepare_decode(
        q, k_cache, v_cache, configs=[dict(cand, split_by="longest")], reduce=reduce, **args
    )
    ref, _ = reference(q, k, v, causal, 1.0 / math.sqrt(q.shape[-1]), kv_lens=lens.tolist())
    _assert_close(launch(), ref, dtype)
    assert launch.config["split_by"] == "longest" and launch.config["num_splits"] == splits
    assert plain["split_by"] == "length"


@pytest.mark.parametrize(
    "case", [c for c in DECODE_CASES if c[-1] and c[-1] > 1 and c[6] is not None][:1], ids=str
)
def test_decode_split_by_longest_takes_a_sequence_grown_after_prepare(case: tuple) -> None:
    """Lengths may change within capacity after prepare_decode. A sequence grown past the
    longest length seen then cuts its own (longer) share per split rather than the stale
    longest one's, so its last keys are not left out."""
    *_, causal, dtype, rung, _ = case
    splits = 2  # two one-tile splits of the stale longest cover 64 of the 75 keys
    q, k, v, k_cache, v_cache, table, lens = _decode_inputs(case)
    grown = lens.clone()  # the first sequence is full: valid keys up to capacity
    lens.clamp_(max=max(case[3], case[4] // 4))  # what prepare sees: a quarter as long
    args = dict(block_table=table, causal=causal, rung=rung, num_splits=splits)
    plain = prepare_decode(q, k_cache, v_cache, cache_seqlens=lens, **args).config
    cand = {key: plain[key] for key in ("BLOCK_N", "num_warps", "num_stages", "options")}
    launch = prepare_decode(
        q, k_cache, v_cache, cache_seqlens=lens, configs=[dict(cand, split_by="longest")], **args
    )
    lens.copy_(grown)  # the launch reads the lengths on the device
    ref, _ = reference(q, k, v, causal, 1.0 / math.sqrt(q.shape[-1]), kv_lens=grown.tolist())
    assert launch.config["BLOCK_N"] * splits < int(grown.max())  # the stale cut falls short
    _assert_close(launch(), ref, dtype)


def test_decode_candidate_names_tell_split_cut_and_merge_apart() -> None:
    """tune_timings_ms is keyed by name: candidates that differ only in split_by or REDUCE kept
    one time between them until their names differed (session 57)."""
    from harness_kernels.triton.attention_configs import _cfg
    from harness_kernels.triton.attention_tune import candidate_name

    base = dict(_cfg(16, 64, 4, 3), BLOCK_M=16, num_splits=4)
    cands = [
        dict(base, **extra)
        for extra in (
            {},
            {"split_by": "longest"},
            {"REDUCE": "fused"},
            {"REDUCE": "kernel"},
            {"REDUCE": "fused", "split_by": "longest"},
        )
    ]
    assert len({candidate_name(c) for c in cands}) == len(cands)
