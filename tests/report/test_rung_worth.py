"""harness.report.rung_worth: a rung's time over its own kernel's, within one run only."""

from __future__ import annotations

import pandas as pd
import pytest

from harness.report.rung_worth import headline_of, rung_worth


def _line(run: str, own: str, problem: str, ms: float, rung: bool) -> dict:
    return dict(
        device="NVIDIA H200", run=run, op="gemm", dtype="fp8_e4m3", problem=problem, own=own,
        own_ms=ms, rung=rung,
    )  # fmt: skip


def test_a_rung_is_set_against_its_longest_base():
    own = {"own-triton", "own-triton-gluon", "own-triton-gluon-no-overlap", "own-triton-no-tma"}
    assert headline_of("own-triton-gluon-no-overlap", own) == "own-triton-gluon"
    assert headline_of("own-triton-no-tma", own) == "own-triton"
    assert headline_of("own-triton", own) is None


def test_worth_is_per_run_and_never_across_runs():
    frame = pd.DataFrame(
        [
            _line("a", "own-triton", "p1", 10.0, False),
            _line("a", "own-triton-no-swap-ab", "p1", 12.0, True),
            _line("a", "own-triton", "p2", 10.0, False),
            _line("a", "own-triton-no-swap-ab", "p2", 9.9, True),
            _line("a", "own-triton", "p3", 10.0, False),  # no rung row: not counted
            # run b holds the rung alone: its headline is in run a, on another card
            _line("b", "own-triton-no-swap-ab", "p3", 20.0, True),
        ]
    )
    worth = rung_worth(frame)
    assert len(worth) == 1
    (row,) = worth.to_dict("records")
    assert (row["run"], row["own"], row["rung"], row["points"]) == (
        "a",
        "own-triton",
        "own-triton-no-swap-ab",
        2,
    )
    assert row["rung_over_own"] == pytest.approx((1.2 * 0.99) ** 0.5)
    assert (row["min"], row["max"], row["paid_at"]) == (pytest.approx(0.99), 1.2, 1)


def test_no_rung_no_table():
    frame = pd.DataFrame([_line("a", "own-triton", "p1", 10.0, False)])
    assert rung_worth(frame).empty and rung_worth(pd.DataFrame()).empty


def test_the_report_table_formats_the_ratios():
    from harness.report.gaps import worth_table

    frame = pd.DataFrame(
        [
            _line("a", "own-triton", "p1", 10.0, False),
            _line("a", "own-triton-no-tma", "p1", 11.0, True),
        ]
    )
    table = worth_table(frame)
    assert table.stem == "ladder_worth" and table.frame["rung_over_own"].tolist() == ["1.100"]
    assert worth_table(frame.iloc[:1]).frame.empty  # no rung: the section shows no table
