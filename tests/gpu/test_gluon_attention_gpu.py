"""GPU correctness of the Gluon FMHA (kernels/triton/attention_gluon_kernel.py) against an fp32
reference, on sm_90: every rung and candidate config, head_dim 64/128/256, causal with q_len <
kv_len, ragged tiles (a half-tile of padding rows, a KV tail shorter than a tile), GQA and MQA,
tiles a consumer skips past its diagonal, a launch that repeats (barrier phases reset), the
persistent rung over more work items than SMs (Q buffers and the stage ring reused), and the
ping-pong candidates apart (their own test, so a call can run them alone).
Run with `pytest -m gpu` on a Hopper GPU."""

from __future__ import annotations

import math
import zlib

import pytest
import torch

pytestmark = pytest.mark.gpu

TOL = {torch.float16: 4e-3, torch.bfloat16: 2e-2}


def _sm90() -> bool:
    return torch.cuda.is_available() and torch.cuda.get_device_capability() == (9, 0)


def _reference(q, k, v, causal: bool) -> torch.Tensor:
    group = q.shape[1] // k.shape[1]
    kf = k.float().repeat_interleave(group, 1)
    vf = v.float().repeat_interleave(group, 1)
    s = q.float() @ kf.transpose(-1, -2) / math.sqrt(q.shape[-1])
    if causal:
        sq, skv = q.shape[2], k.shape[2]
        i = torch.arange(sq, device=q.device)[:, None]
        j = torch.arange(skv, device=q.device)[None, :]
        s = s.masked_fill(j > i + (skv - sq), float("-inf"))
    return torch.softmax(s, -1) @ vf


# (B, Hq, Hkv, Sq, Skv, D, causal, dtype)
CASES = [
    (2, 8, 2, 1024, 1024, 128, False, torch.bfloat16),
    (2, 8, 2, 1024, 1024, 128, True, torch.bfloat16),
    (1, 4, 4, 1000, 1000, 128, True, torch.bfloat16),  # ragged: a half of padding rows
    (1, 4, 1, 200, 777, 128, True, torch.float16),  # chunked prefill, MQA, KV tail of 9
    (1, 8, 8, 517, 517, 64, False, torch.float16),
    (2, 4, 2, 640, 640, 64, True, torch.bfloat16),
    (1, 4, 2, 384, 384, 256, True, torch.bfloat16),
    (1, 4, 1, 300, 900, 256, False, torch.bfloat16),
    (1, 2, 1, 64, 64, 128, True, torch.bfloat16),  # one tile; consumer 1 all padding
    # more work items than SMs: a persistent CTA loops, its Q buffers and stage ring reused
    (4, 16, 4, 2048, 2048, 128, True, torch.bfloat16),
    (2, 16, 2, 1536, 1536, 64, False, torch.float16),
    (4, 16, 4, 1536, 1536, 64, True, torch.bfloat16),  # three consumers, causal
    (2, 16, 2, 1024, 1024, 256, True, torch.bfloat16),  # one Q buffer: K/V loaded ahead of Q
]


def _inputs(case: tuple) -> tuple[torch.Tensor, ...]:
    """q, k, v of `case` (randn, seeded by the case) and their fp32 reference output."""
    batch, h_q, h_kv, seq_q, seq_kv, head_dim, causal, dtype = case
    gen = torch.Generator(device="cuda").manual_seed(zlib.crc32(repr(case).encode()))
    q, k, v = (
        torch.randn(batch, h, s, head_dim, device="cuda", generator=gen).to(dtype)
        for h, s in ((h_q, seq_q), (h_kv, seq_kv), (h_kv, seq_kv))
    )
    return q, k, v, _reference(q, k, v, causal)


def _check_candidates(case: tuple, rung: str, pingpong: bool) -> None:
    """Every candidate of `rung` the tuner may pick (those with PINGPONG == pingpong), launched
    twice, against the fp32 reference."""
    from harness_kernels.triton.attention_gluon import gluon_configs, prepare_gluon_attention

    head_dim, causal, dtype = case[5:]
    q, k, v, ref = _inputs(case)
    scale = max(1.0, ref.abs().max().item())
    cands = [c for c in gluon_configs(head_dim, rung, causal) if c["PINGPONG"] == pingpong]
    assert cands or pingpong
    for cfg in cands:
        launch = prepare_gluon_attention(q, k, v, causal=causal, rung=rung, config=cfg)
        assert launch.config["persistent"] == (rung == "persistent")
        assert launch.config["variant"] == rung
        for _ in range(2):  # a second launch reuses nothing stale
            out = launch()
            torch.cuda.synchronize()
            assert not torch.isnan(out).any(), (cfg, "NaN")
            err = (out.float() - ref).abs().max().item()
            assert err <= TOL[dtype] * scale, (cfg, err)


@pytest.mark.skipif(not _sm90(), reason="the Gluon FMHA needs an sm_90 GPU")
@pytest.mark.parametrize("rung", ["not-persistent", "no-overlap", "persistent"])
@pytest.mark.parametrize("case", CASES, ids=lambda c: "-".join(map(str, c)))
def test_gluon_fmha_matches_reference(case: tuple, rung: str) -> None:
    _check_candidates(case, rung, pingpong=False)


@pytest.mark.skipif(not _sm90(), reason="the Gluon FMHA needs an sm_90 GPU")
@pytest.mark.parametrize("rung", ["not-persistent", "persistent"])
@pytest.mark.parametrize("case", CASES, ids=lambda c: "-".join(map(str, c)))
def test_gluon_fmha_pingpong_matches_reference(case: tuple, rung: str) -> None:
    """The ping-pong candidates (two consumers taking turns to issue; with the overlap only):
    causal cases where consumer 0 releases tiles unread (its empty turns), ragged tiles, and a
    persistent CTA carrying its turn count from item to item."""
    _check_candidates(case, rung, pingpong=True)


# causal bf16; chunked fp16 with MQA and a KV tail; fp16 D 64 unmasked; more items than SMs
PACKED_CASES = [CASES[1], CASES[3], CASES[4], CASES[9]]


@pytest.mark.skipif(not _sm90(), reason="the Gluon FMHA needs an sm_90 GPU")
@pytest.mark.parametrize("case", PACKED_CASES, ids=lambda c: "-".join(map(str, c)))
def test_packed_p_conversion_is_bitwise_the_scalar_one(case: tuple) -> None:
    """P's packed conversion (cvt.rn.{f16,bf16}x2.f32 through inline asm) and Triton's
    one-at-a-time one (the scalar-cvt rung) round alike, and the causal mask keeps the same keys
    whether it compares each against a key limit a row (the full kernel) or twice (the
    two-compare-mask rung), so every candidate config's output is bit for bit the same across
    the three; a swap of the pair's halves, or a limit off by one, would not be. The
    scaled-mask rung is checked against the fp32 reference (its FMUL and FADD round apart from
    an FFMA)."""
    from harness_kernels.triton.attention_gluon import gluon_configs, prepare_gluon_attention

    head_dim, causal, dtype = case[5:]
    q, k, v, ref = _inputs(case)
    full = gluon_configs(head_dim, "full", causal)
    picks = {(c["PERSISTENT"], c["PINGPONG"]): c for c in full}.values()
    for cfg in picks:
        outs = {}
        levels = {
            "full": cfg["TILE_MATH"],
            "two-compare-mask": 2,
            "scalar-cvt": 1,
            "scaled-mask": 0,
        }
        for rung, level in levels.items():
            pinned = dict(cfg, TILE_MATH=level)
            launch = prepare_gluon_attention(q, k, v, causal=causal, rung=rung, config=pinned)
            outs[rung] = launch().clone()
            torch.cuda.synchronize()
        assert torch.equal(outs["full"], outs["two-compare-mask"]), cfg
        assert torch.equal(outs["full"], outs["scalar-cvt"]), cfg
        err = (outs["scaled-mask"].float() - ref).abs().max().item()
        assert err <= TOL[dtype] * max(1.0, ref.abs().max().item()), (cfg, err)


def _prepared_matches_reference(prepare, batch: int, heads: tuple[int, int], causal: bool) -> dict:
    """Prepare a bf16 D 128 prefill of 2048 tokens with `prepare`, check its output against the
    fp32 reference, and return its config."""
    q = torch.randn(batch, heads[0], 2048, 128, device="cuda", dtype=torch.bfloat16)
    k = torch.randn(batch, heads[1], 2048, 128, device="cuda", dtype=torch.bfloat16)
    v = torch.randn_like(k)
    launch = prepare(q, k, v, causal=causal)
    out = launch()
    torch.cuda.synchronize()
    ref = _reference(q, k, v, causal)
    assert (out.float() - ref).abs().max().item() <= TOL[torch.bfloat16] * ref.abs().max().item()
    return launch.config


@pytest.mark.skipif(not _sm90(), reason="the Gluon FMHA needs an sm_90 GPU")
def test_gluon_fmha_tunes_and_records_config() -> None:
    from harness_kernels.triton.attention_gluon import prepare_gluon_attention

    cfg = _prepared_matches_reference(prepare_gluon_attention, 1, (8, 2), causal=True)
    assert cfg["kernel"] == "attn_prefill_gluon" and cfg["overlap"] is True
    assert cfg["tuned"] is True and cfg["tune_candidates"] >= 2


@pytest.mark.skipif(not _sm90(), reason="the Gluon FMHA needs an sm_90 GPU")
def test_causal_headline_tunes_persistent_candidates_too() -> None:
    """Session 88: causal, the headline times the persistent candidates beside one CTA per item
    (more work items than SMs here: 8 x 28 heads x 16 blocks) and records which ran."""
    from harness_kernels.triton.attention_gluon import gluon_configs, prepare_gluon_attention

    cfg = _prepared_matches_reference(prepare_gluon_attention, 8, (28, 4), causal=True)
    assert cfg["variant"] == "full" and cfg["tuned"] is True
    assert cfg["tune_candidates"] > len(gluon_configs(128, "not-persistent", True))
    assert isinstance(cfg["persistent"], bool)


@pytest.mark.skipif(not _sm90(), reason="needs sm_90")
def test_own_triton_prefill_runs_the_faster_of_tl_and_gluon_and_records_both() -> None:
    from harness_kernels.triton.attention_choice import prepare_best_attention

    cfg = _prepared_matches_reference(prepare_best_attention, 2, (16, 4), causal=False)
    assert cfg["choice"] in ("tl", "gluon") and cfg["choice_source"] in ("timed", "cache")
    assert cfg["kernel"] == ("attn_prefill_gluon" if cfg["choice"] == "gluon" else "attn_prefill")
    faster = min(cfg["choice_tl_ms"], cfg["choice_gluon_ms"])
    assert cfg["choice_gluon_ms" if cfg["choice"] == "gluon" else "choice_tl_ms"] == faster
