"""The Gluon decode's row split (attention_decode.row_splits, the kernel's M_ROWS), without a GPU:
which rows per CTA row_splits gives (what scripts/decode_split_probe.py times; the tuner does not
offer it), that its configs keep their own names in the tune timings, and that the launcher and
prepare_decode refuse it where it cannot run: with a KV split or balanced runs (its CTAs write no
partials), with rows out of range, or on the `tl` kernel. The kernel compiles with it in
tests/kernels/test_gluon_decode_aot.py and runs against the fp32 reference in
tests/gpu/test_decode_gluon_gpu.py and scripts/decode_split_probe.py."""

from __future__ import annotations

import pytest
from harness_kernels.triton.attention_decode import row_splits
from harness_kernels.triton.attention_tune import candidate_name


def test_row_splits_where_the_units_fill_at_most_half_the_sms():
    # batch 16 x 4 KV heads (GQA 8, q_len 1: 8 rows a unit) on 132 SMs: two CTAs a unit fit
    assert row_splits(8, 64, 132) == [4]
    # q_len 8 at GQA 8 (64 rows): halves of 32 rows
    assert row_splits(64, 64, 132) == [32]
    # batch 16 x 8 KV heads (GQA 4): 128 units already fill the SMs
    assert row_splits(4, 128, 132) == []
    # a small batch: 2, 4 and 8 CTAs a unit, as many rows as the cut leaves
    assert row_splits(8, 16, 132) == [4, 2, 1]
    # rows that do not divide evenly: cut over 4, G 6 x q_len 1 runs 2 rows on each of 3 CTAs;
    # no cut into more CTAs than rows
    assert row_splits(6, 16, 132) == [3, 2]
    # one M block at most: a unit already cut into M blocks is not split again
    assert row_splits(128, 8, 132) == []
    assert row_splits(1, 8, 132) == []  # one row cannot be cut


def test_each_row_split_candidate_has_its_own_name():
    base = dict(impl="gluon", BLOCK_M=16, BLOCK_N=64, num_warps=4, num_stages=4, num_splits=1)
    names = {candidate_name(dict(base, ROWS=r)) for r in (4, 2)} | {candidate_name(base)}
    assert len(names) == 3
    assert candidate_name(dict(base, ROWS=4)).endswith("-rows4")


@pytest.mark.parametrize(
    ("rows", "m_blocks", "splits", "by", "match"),
    [
        (4, 2, 2, None, "unsplit"),  # a KV split: partials the row split never writes
        (4, 2, 0, "balanced", "unsplit"),
        (128, 1, 1, None, "allowed: 1 <= ROWS"),  # more rows than the m64 box holds
        (0, 8, 1, None, "allowed: 1 <= ROWS"),
        (2, 2, 1, None, "M blocks x ROWS"),  # 2 x 2 rows leave 4 of the unit's 8 unstored
    ],
)
def test_the_launcher_refuses_a_row_split_it_cannot_run(rows, m_blocks, splits, by, match):
    torch = pytest.importorskip("torch")
    from harness_kernels.triton.attention_decode_gluon import gluon_split_launch

    q = torch.zeros(1, 8, 1, 128, dtype=torch.bfloat16)  # GQA 8, q_len 1: 8 rows a unit
    k = torch.zeros(1, 1, 64, 128, dtype=torch.bfloat16)  # dense [B, Hkv, S, D]
    lens = torch.full((1,), 64, dtype=torch.int32)
    cfg = dict(impl="gluon", BLOCK_N=64, num_stages=4, ROWS=rows)
    if by:
        cfg["split_by"] = by
    with pytest.raises(ValueError, match=match):
        gluon_split_launch(
            q, k, k, q, None, None, lens, None, cfg=cfg, splits=splits, m_blocks=m_blocks,
            longest=64, causal=True, sm_scale=1.0, sms=132, capacity=64,
        )  # fmt: skip


def test_prepare_decode_takes_rows_on_an_unsplit_gluon_config_only():
    torch = pytest.importorskip("torch")
    from harness_kernels.triton.attention_decode import prepare_decode

    q = torch.zeros(1, 8, 1, 64, dtype=torch.float16)
    k = torch.zeros(1, 1, 64, 64, dtype=torch.float16)
    lens = torch.full((1,), 64, dtype=torch.int32)
    tl = dict(BLOCK_N=32, num_warps=4, num_stages=2, options={}, ROWS=4)
    with pytest.raises(ValueError, match="allowed: a Gluon config, unsplit"):
        prepare_decode(q, k, k, cache_seqlens=lens, configs=[tl], tune=False)
    gluon = dict(tl, impl="gluon")
    with pytest.raises(ValueError, match="allowed: a Gluon config, unsplit"):
        prepare_decode(q, k, k, cache_seqlens=lens, configs=[gluon], num_splits=2, tune=False)
