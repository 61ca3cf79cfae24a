"""harness goals: each issue's bar checked against rows written the way the harness writes them.
The deciding run is the latest that covers the goal, a wrong own row fails it, and a ratio is
never taken across runs."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import pytest
from report_fixtures import ceiling_row, read_once_row, speed_row, write_run

from harness.providers import load_all
from harness.report.data import load
from harness.report.goals import (
    GOALS_FILE,
    goals_table,
    load_goals,
    parse_goals,
    selected,
    verdicts,
)

REPO = Path(__file__).resolve().parents[2]
SHAPES = [
    {"m": m, "n": 4096, "k": 4096, "dtype": "bf16", "layout": "nt", "batch": 1}
    for m in (1, 16, 128, 2048)
]
GEMM_GOAL = {
    "id": "gemm",
    "goal": "own >= 1.00x cuBLAS, none < 0.90x, 4 shapes",
    "own": "own-triton",
    "reference": "cublas",
    "where": {"op": "gemm", "dtype": "bf16"},
    "points": 4,
    "geomean": 1.0,
    "min": 0.9,
}


def _gemm_run(root, run, own_over_vendor, *, when="2026-01-01", dev="h200", statuses=None):
    """A run with cuBLAS at 100 us and own Triton at 100 us / ratio at each shape."""
    rows = []
    for i, (shape, ratio) in enumerate(zip(SHAPES, own_over_vendor, strict=True)):
        ts = f"{when}T00:00:{i:02d}+00:00"
        status = (statuses or {}).get(i, "ok")
        rows.append(speed_row(dev, "gemm", shape, "cublas", run, median_ms=0.1, timestamp=ts))
        rows.append(
            speed_row(
                dev,
                "gemm",
                shape,
                "own-triton",
                run,
                median_ms=0.1 / ratio,
                status=status,
                timestamp=ts,
            )
        )
    write_run(root, run, rows)


def _one(table, device="NVIDIA H200"):
    lines = table[table["device"] == device]
    assert len(lines) == 1, lines
    return lines.iloc[0]


def test_the_latest_covering_run_decides_not_the_best(tmp_path):
    _gemm_run(tmp_path, "lucky", [1.10, 1.10, 1.10, 1.10], when="2026-01-01")
    _gemm_run(tmp_path, "later", [1.00, 0.95, 0.85, 1.05], when="2026-01-02")
    line = _one(verdicts(load([tmp_path]), parse_goals([GEMM_GOAL])))
    assert line["run"] == "later"
    assert line["commit"] == "0123456"  # the fixture rows' git sha, shortened
    assert line["verdict"] == "not met"  # 0.85 is below the min
    assert line["min"] == pytest.approx(0.85, rel=0.02)
    assert line["below_min"] == 1
    assert line["covering_runs"] == 2
    low, high = map(float, line["range"].split("-"))
    assert low == pytest.approx((1.0 * 0.95 * 0.85 * 1.05) ** 0.25, rel=0.02)
    assert high == pytest.approx(1.10, rel=0.02)


def test_every_lists_each_covering_run_latest_first(tmp_path):
    _gemm_run(tmp_path, "first", [1.1] * 4, when="2026-01-01")
    _gemm_run(tmp_path, "second", [1.0] * 4, when="2026-01-02")
    table = verdicts(load([tmp_path]), parse_goals([GEMM_GOAL]), every=True)
    assert list(table["run"]) == ["second", "first"]
    assert list(table["verdict"]) == ["met", "met"]


def test_a_fast_wrong_kernel_fails_the_goal(tmp_path):
    _gemm_run(tmp_path, "wrong", [1.2, 1.2, 1.2, 1.2], statuses={2: "wrong"})
    line = _one(verdicts(load([tmp_path]), parse_goals([GEMM_GOAL])))
    assert line["not_ok"] == 1
    assert line["verdict"] == "not met (1 own rows not ok)"


def test_a_run_short_of_the_points_is_partial_and_never_met(tmp_path):
    rows = [
        speed_row("h100", "gemm", SHAPES[0], "cublas", "short", median_ms=0.1),
        speed_row("h100", "gemm", SHAPES[0], "own-triton", "short", median_ms=0.05),
    ]
    write_run(tmp_path, "short", rows)
    line = _one(verdicts(load([tmp_path]), parse_goals([GEMM_GOAL])), "NVIDIA H100 80GB HBM3")
    assert line["verdict"] == "partial (1 of 4 points)"
    assert line["covering_runs"] == 0


def test_a_ratio_never_takes_its_reference_from_another_run(tmp_path):
    _gemm_run(tmp_path, "both", [1.0] * 4)
    own_only = [
        speed_row("h200", "gemm", s, "own-triton", "own-only", median_ms=0.01) for s in SHAPES
    ]
    write_run(tmp_path, "own-only", own_only)
    table = verdicts(load([tmp_path]), parse_goals([GEMM_GOAL]), every=True)
    assert list(table["run"]) == ["both"]  # the own-only run has no reference: no points


def test_the_reference_is_the_fastest_of_the_named_vendors_only(tmp_path):
    shape = SHAPES[0]
    rows = [
        speed_row("h200", "gemm", shape, "cublas", "r", median_ms=0.10),
        speed_row("h200", "gemm", shape, "torch-eager", "r", median_ms=0.05),
        speed_row("h200", "gemm", shape, "own-triton", "r", median_ms=0.08),
    ]
    write_run(tmp_path, "r", rows)
    goal = {**GEMM_GOAL, "points": 1, "min": None}
    named = _one(verdicts(load([tmp_path]), parse_goals([goal])))
    assert named["geomean"] == pytest.approx(0.10 / 0.08, rel=0.02)
    anyone = _one(verdicts(load([tmp_path]), parse_goals([{**goal, "reference": None}])))
    assert anyone["geomean"] == pytest.approx(0.05 / 0.08, rel=0.02)


def test_where_and_at_least_select_the_goal_points(tmp_path):
    rows = []
    for q_len in (1024, 4096):
        for causal in (False, True):
            p = {
                "batch": 4,
                "q_heads": 32,
                "kv_heads": 8,
                "q_len": q_len,
                "kv_len": q_len,
                "head_dim": 128,
                "causal": causal,
                "dtype": "bf16",
                "kv_layout": "dense",
                "page_size": None,
            }
            own_ms = 0.2 if q_len < 4096 else (0.1 if causal else 0.125)
            rows.append(speed_row("h200", "attention", p, "sdpa-flash", "attn", median_ms=0.1))
            rows.append(speed_row("h200", "attention", p, "own-triton", "attn", median_ms=own_ms))
    write_run(tmp_path, "attn", rows)
    goal = {
        "id": "prefill",
        "goal": "causal, S >= 4k",
        "own": "own-triton",
        "reference": "sdpa-flash",
        "where": {"op": "attention", "head_dim": 128, "causal": True},
        "at_least": {"q_len": 4096},
        "points": 1,
        "geomean": 1.0,
    }
    line = _one(verdicts(load([tmp_path]), parse_goals([goal])))
    assert line["points"] == 1 and line["geomean"] == pytest.approx(1.0, rel=0.02)
    both = {**goal, "where": {"op": "attention", "causal": [False, True]}, "points": 2}
    line = _one(verdicts(load([tmp_path]), parse_goals([both])))
    assert line["points"] == 2 and line["geomean"] == pytest.approx((1.0 * 0.8) ** 0.5, rel=0.02)


def test_rows_off_the_default_protocol_do_not_count(tmp_path):
    _gemm_run(tmp_path, "cold", [1.0] * 4, when="2026-01-01")
    rows = []
    for s in SHAPES:
        for provider, ms in (("cublas", 0.1), ("own-triton", 0.05)):
            r = speed_row(
                "h200",
                "gemm",
                s,
                provider,
                "warm",
                median_ms=ms,
                timestamp="2026-02-01T00:00:00+00:00",
            )
            r["l2"] = "warm"
            rows.append(r)
    write_run(tmp_path, "warm", rows)
    assert _one(verdicts(load([tmp_path]), parse_goals([GEMM_GOAL])))["run"] == "cold"


@pytest.mark.parametrize(
    "entry, message",
    [
        ({**GEMM_GOAL, "colour": "red"}, r"unknown keys \['colour'\]"),
        ({k: v for k, v in GEMM_GOAL.items() if k not in ("geomean", "min")}, "no bar"),
        ({**GEMM_GOAL, "points": 0}, "points: '0'"),
        ({**GEMM_GOAL, "geomean": -1}, "geomean: '-1'"),
        ({**GEMM_GOAL, "own": ""}, "own: ''"),
    ],
)
def test_a_bad_goal_is_one_line_naming_it(entry, message):
    with pytest.raises(ValueError, match=message):
        parse_goals([entry])


def test_two_goals_with_one_id_are_refused():
    with pytest.raises(ValueError, match="'gemm' twice"):
        parse_goals([GEMM_GOAL, GEMM_GOAL])


def test_the_committed_goals_name_registered_providers():
    goals, reg = load_goals(GOALS_FILE), load_all()
    names = set(reg.names("gemm")) | set(reg.names("attention"))
    assert len(goals) >= 10
    for g in goals:
        assert g.own in names, g.id
        assert all(r in names for r in g.reference or ()), g.id
        assert g.bar()


def _goals_cmd(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "harness.cli", "goals", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
    )


def test_the_command_prints_a_verdict_per_goal_and_gpu(tmp_path):
    _gemm_run(tmp_path / "res", "grid", [1.02, 1.0, 0.97, 1.01])
    goals = tmp_path / "goals.yaml"
    goals.write_text(
        "- {id: gemm, goal: g, own: own-triton, reference: cublas, where: {op: gemm}, points: 4, geomean: 1.0}\n"
    )
    res = str(tmp_path / "res")
    md, tex = tmp_path / "goals.md", tmp_path / "goals.tex"
    done = _goals_cmd(res, f"goals={goals}", f"out={md}")
    assert done.returncode == 0, done.stderr
    assert "grid" in done.stdout and "met" in done.stdout
    assert "nan" not in done.stdout  # no ceiling asked: blank cells, as in the file
    # The file names the command that made it (less out=), then the table.
    head, table = md.read_text().split("\n\n| goal")
    assert head.startswith("# Where the goals stand")
    assert f"`harness goals {res} goals={goals}`" in head and "out=" not in head
    assert "| grid " in table
    done = _goals_cmd(res, f"goals={goals}", f"out={tex}")
    assert done.returncode == 0, done.stderr
    assert tex.read_text().startswith(f"% written by `harness goals {res} goals={goals}`")
    assert "\\toprule" in tex.read_text()
    bad = _goals_cmd(res, "every=perhaps")
    assert bad.returncode == 2
    assert "every: 'perhaps'; allowed: true, false" in bad.stderr


def test_the_report_table_leaves_out_goals_without_rows(tmp_path):
    _gemm_run(tmp_path, "grid", [1.0, 1.0, 1.0, 1.0])
    other = {**GEMM_GOAL, "id": "fp8", "where": {"op": "gemm", "dtype": "fp8_e4m3"}}
    table = goals_table(load([tmp_path]), parse_goals([GEMM_GOAL, other]))
    assert list(table.frame["goal"]) == ["gemm"]
    assert table.frame.loc[0, "verdict"] == "met" and table.frame.loc[0, "geomean"] == "1.000"
    assert "| gemm" in table.markdown()


def _decode_point(root) -> list[dict]:
    """One memory-bound decode GEMM: cuBLAS at 40 us, own Triton at 36 us (rows 0 and 1)."""
    p = {"m": 1, "n": 8192, "k": 8192, "dtype": "bf16", "layout": "nt", "batch": 1}
    rows = [
        speed_row("h200", "gemm", p, "cublas", "decode", median_ms=0.040),
        speed_row("h200", "gemm", p, "own-triton", "decode", median_ms=0.036),
    ]
    write_run(root, "decode", rows)
    return rows


def test_a_ceiling_goal_reads_the_gpus_measured_hbm_read(tmp_path):
    rows = _decode_point(tmp_path / "res")
    goal = {**GEMM_GOAL, "points": 1, "min": None, "ceiling": 0.9}
    no_ceiling = _one(verdicts(load([tmp_path / "res"]), parse_goals([goal])))
    assert no_ceiling["verdict"] == "not met (no measured HBM read ceiling for this GPU)"
    own_gbps = rows[1]["gbps"]
    write_run(
        tmp_path / "res",
        "ceilings",
        [ceiling_row("h200", "hbm_read_gbps", own_gbps / 0.95, "ceilings")],
    )
    line = _one(verdicts(load([tmp_path / "res"]), parse_goals([goal])))
    assert line["of_ceiling"] == pytest.approx(0.95, rel=1e-3)
    assert line["verdict"] == "met"
    assert line["ceiling_run"] == "ceilings, the run's card"
    stricter = _one(verdicts(load([tmp_path / "res"]), parse_goals([{**goal, "ceiling": 0.97}])))
    assert stricter["verdict"] == "not met"
    assert math.isnan(line["cold_read_of_ceiling"])  # no read-once run among the paths
    # one cold read of the point's bytes at 0.98 of the ceiling: the bar is within reach
    read = read_once_row("h200", rows[1]["min_bytes"], own_gbps / 0.95 * 0.98, "read_once")
    write_run(tmp_path / "res", "read_once", [read])
    line = _one(verdicts(load([tmp_path / "res"]), parse_goals([goal])))
    assert line["cold_read_of_ceiling"] == pytest.approx(0.98, rel=1e-3)


def test_a_later_own_only_run_shows_its_share_and_decides_nothing(tmp_path):
    """An own-only run (no vendor rows: the vendors' wheels not on the card) has no ratio, so the
    covering run still decides; its ceiling share is shown beside the verdict as the own kernel's
    latest. One before the deciding run, one with a wrong own row, and a run with the vendors
    (it covers, so it is a verdict of its own) are not."""
    rows = _decode_point(tmp_path / "res")  # 2026-01-01, own at 0.85 of the ceiling
    ceiling = ceiling_row("h200", "hbm_read_gbps", rows[1]["gbps"] / 0.85, "ceilings")
    write_run(tmp_path / "res", "ceilings", [ceiling])
    goal = parse_goals([{**GEMM_GOAL, "points": 1, "min": None, "ceiling": 0.9}])
    p = {"m": 1, "n": 8192, "k": 8192, "dtype": "bf16", "layout": "nt", "batch": 1}

    def own_only(run, ms, day, status="ok"):
        ts = f"2026-01-{day:02d}T00:00:00+00:00"
        row = speed_row("h200", "gemm", p, "own-triton", run, median_ms=ms, timestamp=ts)
        write_run(tmp_path / "res", run, [{**row, "status": status}])

    def shown(every=False):
        return verdicts(load([tmp_path / "res"]), goal, every=every)

    own_only("own-early", 0.030, 0)  # before the deciding run
    assert _one(shown())["own_only_since"] == ""
    own_only("own-late", 0.0342, 2)
    own_only("own-wrong", 0.020, 3, status="wrong")  # latest, but wrong: never shown
    line = _one(shown())
    assert line["run"] == "decode" and line["verdict"] == "not met"  # 0.85: the covering run
    share, run = line["own_only_since"].split()
    assert run == "(own-late)"
    assert float(share) == pytest.approx(0.85 * 36 / 34.2, rel=5e-3)  # 36 us -> 34.2 us
    assert "own_only_since" in goals_table(load([tmp_path / "res"]), goal).frame.columns
    # a later run with the vendors decides, and no own-only run is later than it
    ts = "2026-01-04T00:00:00+00:00"
    write_run(
        tmp_path / "res",
        "decode-b",
        [
            speed_row("h200", "gemm", p, "cublas", "decode-b", median_ms=0.040, timestamp=ts),
            speed_row("h200", "gemm", p, "own-triton", "decode-b", median_ms=0.036, timestamp=ts),
        ],
    )
    assert _one(shown())["run"] == "decode-b" and _one(shown())["own_only_since"] == ""
    every = shown(every=True).set_index("run")["own_only_since"]
    assert every["decode"].endswith("(own-late)")  # the older verdict names no run with vendors


def test_a_ceiling_share_says_when_its_ceiling_was_read_on_another_card(tmp_path):
    """A GPU model's ceiling is its latest ceilings run's, whichever card ran it: the share of
    a run timed on another card says so (two H100s read 3,104 and 3,195 GB/s)."""
    rows = _decode_point(tmp_path / "res")
    other = ceiling_row("h200", "hbm_read_gbps", rows[1]["gbps"] / 0.9, "ceilings-b")
    other["device_uuid"] = "GPU-h200-second"
    write_run(tmp_path / "res", "ceilings-b", [other])
    goal = {**GEMM_GOAL, "points": 1, "min": None, "ceiling": 0.9}
    line = _one(verdicts(load([tmp_path / "res"]), parse_goals([goal])))
    assert line["ceiling_run"] == "ceilings-b, another card"
    assert line["of_ceiling"] == pytest.approx(0.9, rel=1e-3)
    no_bar = _one(verdicts(load([tmp_path / "res"]), parse_goals([GEMM_GOAL | {"points": 1}])))
    assert no_bar["ceiling_run"] == ""  # a goal without a ceiling bar names none


def test_a_run_is_read_against_its_own_cards_ceiling_before_a_later_one_of_another(tmp_path):
    """Two cards of one model: the run's card read its ceiling first, another card later and
    faster. The run's share is of its own card's read; a run on a third card, which measured
    none, takes the latest and says how far its share moves over the cards' ceilings."""
    rows = _decode_point(tmp_path / "res")  # on DEVICES["h200"]'s card
    own_gbps = rows[1]["gbps"]
    mine = ceiling_row("h200", "hbm_read_gbps", own_gbps / 0.92, "ceilings-mine")
    later = ceiling_row("h200", "hbm_read_gbps", own_gbps / 0.88, "ceilings-later")
    later.update(device_uuid="GPU-h200-second", timestamp="2026-01-05T00:00:00+00:00")
    write_run(tmp_path / "res", "ceilings-mine", [mine])
    write_run(tmp_path / "res", "ceilings-later", [later])
    goal = parse_goals([{**GEMM_GOAL, "points": 1, "min": None, "ceiling": 0.9}])
    line = _one(verdicts(load([tmp_path / "res"]), goal))
    assert line["ceiling_run"] == "ceilings-mine, the run's card"
    assert line["of_ceiling"] == pytest.approx(0.92, rel=1e-3) and line["verdict"] == "met"
    # the same point timed on a third card, which read no ceiling of its own
    third = [{**r, "device_uuid": "GPU-h200-third"} for r in rows]
    write_run(tmp_path / "other", "decode", third)
    line = _one(
        verdicts(
            load(
                [tmp_path / "other"]
                + [tmp_path / "res" / "ceilings-mine", tmp_path / "res" / "ceilings-later"]
            ),
            goal,
        )
    )
    assert line["of_ceiling"] == pytest.approx(0.88, rel=1e-3) and line["verdict"] == "not met"
    assert line["ceiling_run"] == "ceilings-later, another card (0.880-0.920 over 2 cards)"


def test_a_run_over_two_cards_reads_each_row_against_its_own_cards_ceiling(tmp_path):
    """A run resumed on a second card: each point's share is of its own card's ceiling where
    that card read one, the model's latest where not, and `ceiling_run` says which."""
    p1 = {"m": 1, "n": 8192, "k": 8192, "dtype": "bf16", "layout": "nt", "batch": 1}
    p2 = {**p1, "n": 4096}
    rows = []
    for p, card in ((p1, "GPU-a"), (p2, "GPU-b")):
        for provider, ms in (("cublas", 0.040), ("own-triton", 0.036)):
            row = speed_row("h200", "gemm", p, provider, "decode", median_ms=ms)
            rows.append({**row, "device_uuid": card})
    write_run(tmp_path / "res", "decode", rows)
    own = {r["device_uuid"]: r["gbps"] for r in rows if r["provider"] == "own-triton"}
    a = ceiling_row("h200", "hbm_read_gbps", own["GPU-a"] / 0.95, "ceilings-a")
    a["device_uuid"] = "GPU-a"
    later = ceiling_row("h200", "hbm_read_gbps", own["GPU-b"] / 0.85, "ceilings-c")
    later.update(device_uuid="GPU-c", timestamp="2026-01-05T00:00:00+00:00")
    write_run(tmp_path / "res", "ceilings-a", [a])
    write_run(tmp_path / "res", "ceilings-c", [later])
    goal = parse_goals([{**GEMM_GOAL, "points": 2, "min": None, "ceiling": 0.9}])
    line = _one(verdicts(load([tmp_path / "res"]), goal))
    # GPU-a's point against its own 0.95, GPU-b's against the latest (GPU-c's) 0.85
    assert line["of_ceiling"] == pytest.approx((0.95 * 0.85) ** 0.5, rel=1e-3)
    assert (
        line["ceiling_run"]
        == "ceilings-a, 1 of the run's 2 cards; the rest ceilings-c, another card"
    )
    b = ceiling_row("h200", "hbm_read_gbps", own["GPU-b"] / 0.91, "ceilings-b")
    b["device_uuid"] = "GPU-b"
    write_run(tmp_path / "res", "ceilings-b", [b])
    line = _one(verdicts(load([tmp_path / "res"]), goal))
    assert line["of_ceiling"] == pytest.approx((0.95 * 0.91) ** 0.5, rel=1e-3)
    assert line["ceiling_run"] == "ceilings-a, ceilings-b, the run's cards"


def test_a_ratio_pairs_rows_of_one_card_only(tmp_path):
    """A run resumed on a second machine of the same model: at the point whose vendor row was
    timed on the other card the own row has no reference, so the run no longer covers 4 points."""
    _gemm_run(tmp_path, "resumed", [1.0] * 4)
    moved = speed_row(
        "h200",
        "gemm",
        SHAPES[3],
        "cublas",
        "resumed",
        median_ms=0.1,
        timestamp="2026-01-01T00:01:00+00:00",
    )
    moved["device_uuid"] = "GPU-h200-second"
    write_run(tmp_path, "resumed", [moved])
    line = _one(verdicts(load([tmp_path]), parse_goals([GEMM_GOAL])))
    assert line["verdict"] == "partial (3 of 4 points)"


def test_rows_of_one_problem_under_two_protocols_make_no_ratio(tmp_path):
    """An own row timed with one fill and the vendor's with another are two points, not one."""
    shape = SHAPES[0]
    own = speed_row("h200", "gemm", shape, "own-triton", "mixed", median_ms=0.05)
    own["fill"] = "zeros"
    write_run(
        tmp_path, "mixed", [speed_row("h200", "gemm", shape, "cublas", "mixed", median_ms=0.1), own]
    )
    goal = {**GEMM_GOAL, "points": 1, "min": None}
    assert (
        _one(verdicts(load([tmp_path]), parse_goals([goal])))["verdict"]
        == "partial (0 of 1 points)"
    )


def test_a_wrong_own_row_fails_even_where_the_vendor_failed_too(tmp_path):
    _gemm_run(tmp_path, "both-failed", [1.1] * 4, statuses={0: "wrong"})
    rows = [
        speed_row(
            "h200",
            "gemm",
            SHAPES[0],
            "cublas",
            "both-failed",
            status="error",
            timestamp="2026-01-01T00:02:00+00:00",
        )
    ]
    write_run(tmp_path, "both-failed", rows)
    goal = {**GEMM_GOAL, "points": 3}
    line = _one(verdicts(load([tmp_path]), parse_goals([goal])))
    assert line["points"] == 3 and line["not_ok"] == 1
    assert line["verdict"] == "not met (1 own rows not ok)"


def test_smoke_runs_never_decide_a_goal(tmp_path):
    _gemm_run(tmp_path, "real", [1.0] * 4, when="2026-01-01")
    smoke = [
        speed_row(
            "h200", "gemm", s, p, "smoky", median_ms=ms, timestamp="2026-02-01T00:00:00+00:00"
        )
        for s in SHAPES
        for p, ms in (("cublas", 0.1), ("own-triton", 0.01))
    ]
    write_run(tmp_path, "smoky", smoke, sweep="smoke")
    line = _one(verdicts(load([tmp_path]), parse_goals([GEMM_GOAL])))
    assert line["run"] == "real" and line["covering_runs"] == 1


def test_the_committed_goals_file_is_the_committed_rows_verdict(tmp_path):
    """results/goals.md is what `harness goals results/h100 results/h200` writes today: a run
    committed without writing it again fails here, so the cited file is never stale."""
    committed = REPO / "results" / "goals.md"
    fresh = tmp_path / "goals.md"
    done = _goals_cmd("results/h100", "results/h200", f"out={fresh}", cwd=REPO)
    assert done.returncode == 0, done.stderr
    assert fresh.read_text() == committed.read_text(), (
        "results/goals.md is stale: run `harness goals results/h100 results/h200 "
        "out=results/goals.md` and commit it"
    )


def test_a_gemm_goal_counts_gemm_llamas_shapes_not_every_run_named_gemm_llama():
    """`sweep=gemm_llama` with other shapes (Qwen2.5-7B's 4608x3584) writes rows named
    gemm_llama too: the committed goals name the preset's M, N and K, so those never count."""
    import pandas as pd

    goal = next(g for g in load_goals() if g.id == "20.1 own Triton")
    rows = []
    for n, k in ((4096, 4096), (4608, 3584)):
        p = {"m": 256, "n": n, "k": k, "dtype": "bf16", "layout": "nt", "batch": 1}
        for provider in ("cublas", "own-triton"):
            rows.append({**speed_row("h200", "gemm", p, provider, "mine"), "sweep": "gemm_llama"})
    kept = selected(pd.DataFrame(rows), goal)
    assert set(kept["n"]) == {4096} and len(kept) == 2


def test_a_goal_missed_says_what_it_is_short_of(tmp_path):
    """short_of: the factor the geomean still needs and the points under the min; blank where
    the bar is met."""
    _gemm_run(tmp_path, "grid", [1.02, 1.0, 0.97, 1.01])
    strict = {**GEMM_GOAL, "geomean": 1.03, "min": 0.99}
    line = _one(verdicts(load([tmp_path]), parse_goals([strict])))
    gm = (1.02 * 1.0 * 0.97 * 1.01) ** 0.25
    assert line["verdict"] == "not met"
    assert line["short_of"] == f"geomean x{1.03 / gm:.3f}; 1 < 0.99x"
    met = _one(verdicts(load([tmp_path]), parse_goals([{**GEMM_GOAL, "geomean": 0.99}])))
    assert met["verdict"] == "met" and met["short_of"] == ""


def test_room_is_the_speedup_a_kernel_at_the_roof_would_show(tmp_path):
    # One memory-bound decode GEMM: cuBLAS at 0.80 of the measured HBM read ceiling, and 0.90 of
    # one cold read of the point's bytes once a read-once run is among the rows.
    rows = _decode_point(tmp_path / "res")
    cublas_gbps = rows[0]["gbps"]
    roofs = [
        ceiling_row("h200", "hbm_read_gbps", cublas_gbps / 0.8, "ceilings"),
        ceiling_row("h200", "tensor_bf16_tflops", 700.0, "ceilings"),
    ]
    write_run(tmp_path / "res", "ceilings", roofs)
    goal = parse_goals([{**GEMM_GOAL, "points": 1, "min": None}])
    line = _one(verdicts(load([tmp_path / "res"]), goal))
    assert line["room"] == pytest.approx(1 / 0.8, rel=1e-3)  # the ceiling is the roof
    read = read_once_row("h200", rows[0]["min_bytes"], cublas_gbps / 0.9, "read_once")
    write_run(tmp_path / "res", "read_once", [read])
    line = _one(verdicts(load([tmp_path / "res"]), goal))
    assert line["room"] == pytest.approx(1 / 0.9, rel=1e-3)  # one cold read of its bytes
    assert line["verdict"] == "met"  # own at 1.11x: at the roof, as fast as any kernel can be


def test_room_reads_the_runs_own_cards_roofs_where_that_card_measured_them(tmp_path):
    """Two cards of one model read differently; a run's room is against its own card's read
    where it has one (as `harness gaps` with that card's runs), not the fastest card's."""
    rows = _decode_point(tmp_path / "res")  # timed on GPU-h200
    cublas_gbps = rows[0]["gbps"]
    ceilings = [ceiling_row("h200", "hbm_read_gbps", cublas_gbps / 0.7, "ceilings")]
    write_run(tmp_path / "res", "ceilings", ceilings)
    own_card = read_once_row("h200", rows[0]["min_bytes"], cublas_gbps / 0.9, "read_own")
    faster = {**read_once_row("h200", rows[0]["min_bytes"], cublas_gbps / 0.8, "read_other")}
    faster["device_uuid"] = "GPU-h200-second"
    write_run(tmp_path / "res", "read_other", [faster])
    goal = parse_goals([{**GEMM_GOAL, "points": 1, "min": None}])
    line = _one(verdicts(load([tmp_path / "res"]), goal))
    assert line["room"] == pytest.approx(1 / 0.8, rel=1e-3)  # no read on its card: every card's
    write_run(tmp_path / "res", "read_own", [own_card])
    line = _one(verdicts(load([tmp_path / "res"]), goal))
    assert line["room"] == pytest.approx(1 / 0.9, rel=1e-3)  # its own card's read
