"""scripts/decode_merge_ncu.py picks, from committed runs, the points session 73's ncu pair
profiled (results/h200/_logs/session73/ncu-merge-*): the first own-triton Gluon split pick of
each run at one KV length, with its pinned config. CPU only: the launches need a GPU."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

import decode_merge_ncu  # noqa: E402

RAGGED = str(ROOT / "results/h200/fmha_decode_serving-b16-ragged-s73")
EQUAL = str(ROOT / "results/h200/fmha_decode_serving-b16-equal-s72")


def test_the_first_gluon_split_pick_of_each_run():
    picks = decode_merge_ncu.first_picks([RAGGED, EQUAL], 4096)
    assert [run for run, _, _ in picks] == [RAGGED, EQUAL]
    (_, ragged, rpick), (_, equal, epick) = picks
    assert ragged.ragged and not equal.ragged
    for problem, pick in ((ragged, rpick), (equal, epick)):
        assert problem.kv_len == 4096 and problem.batch == 16 and problem.page_size == 16
        assert pick["config"]["impl"] == "gluon" and pick["splits"] >= 2
    # the two points of session 73's table: 8 rows in 2 splits, and 32 rows in 2 splits
    assert (ragged.q_len, ragged.q_heads // ragged.kv_heads, rpick["splits"]) == (2, 4, 2)
    assert (equal.q_len, equal.q_heads // equal.kv_heads, epick["splits"]) == (4, 8, 2)


def test_a_run_without_a_pick_at_that_length_is_left_out():
    assert decode_merge_ncu.first_picks([RAGGED], 12345) == []
