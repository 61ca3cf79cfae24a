"""The causal FMHA work-order model (scripts/causal_order_model.py): a perfect split reads 1.0,
the longest-first orders balance the study's 4k shape better than head by head or strided, and
the CLI prints one row per length."""

from __future__ import annotations

import pytest
from script_module import load_script

model = load_script("causal_order_model")


def test_tile_costs_run_longest_first_within_a_head_or_across_heads():
    assert model.tile_costs(384, 2, 128, longest_first=False) == [3, 2, 1, 3, 2, 1]
    assert model.tile_costs(384, 2, 128, longest_first=True) == [3, 3, 2, 2, 1, 1]


def test_equal_items_that_fill_every_round_balance_perfectly():
    assert model.dispatched([1.0] * 8, 4) == 1.0
    assert model.rounds([1.0] * 8, 4, snake=False) == model.rounds([1.0] * 8, 4, snake=True) == 1.0


def test_snake_rounds_hand_the_next_round_back_to_front():
    # two rounds of 2 on 2 CTAs: strided gives CTA 0 both long items, snake one each
    assert model.rounds([2, 2, 1, 1], 2, snake=False) == 1.0
    assert model.rounds([3, 2, 2, 1], 2, snake=False) == pytest.approx(4 / 5)
    assert model.rounds([3, 2, 2, 1], 2, snake=True) == 1.0


def test_the_studys_4k_shape():
    s = model.shares(4096, 32, 132, 128)
    assert s["head by head"] == pytest.approx(0.877, abs=1e-3)
    assert s["strided"] == pytest.approx(0.889, abs=1e-3)
    assert s["longest first"] == pytest.approx(0.992, abs=1e-3)
    assert s["snake"] >= s["strided"] and s["longest first"] > s["head by head"]


def test_cli_prints_a_row_per_length(capsys):
    assert model.main(["--lengths", "1024", "4096"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 4 and out[2].split()[0] == "1024" and out[3].split()[0] == "4096"
