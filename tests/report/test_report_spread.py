"""harness spread: the same points over several runs (each a process of its own), on rows built
the way the harness writes them. The numbers echo results/h200/_process_spread (session 44)."""

from __future__ import annotations

import pytest
from report_fixtures import speed_row, write_run

from harness import cli
from harness.report import spread
from harness.report.data import load

P = {"m": 4, "n": 28672, "k": 4096, "dtype": "bf16", "layout": "nt", "batch": 1}
# median us per process: own CUTLASS moves 13%, cuBLAS 1% (one outlier left out here)
OWN_US = (64.1, 66.4, 66.4, 63.4, 62.2, 59.4, 59.8, 58.7)
CUBLAS_US = (57.8, 58.1, 58.7, 58.7, 58.5, 58.2, 58.5, 58.7)


def _runs(root, own_us=OWN_US, cublas_us=CUBLAS_US, uuids=None, **protocol):
    for i, (own, ven) in enumerate(zip(own_us, cublas_us, strict=True)):
        run = f"bimodal-{i + 1}"
        rows = [
            speed_row("h200", "gemm", P, "cublas", run, median_ms=ven / 1e3, noise=0.005),
            speed_row("h200", "gemm", P, "own-cutlass", run, median_ms=own / 1e3, noise=0.005),
        ]
        for r in rows:
            r.update(latency_p90_over_p10=1.038, **protocol)
            if uuids is not None:
                r["device_uuid"] = uuids[i]
        write_run(root, run, rows)


def test_the_spread_between_processes_is_set_against_the_spread_inside_one(tmp_path):
    _runs(tmp_path)
    lines = spread.spread_frame(load([tmp_path])).set_index("provider")
    own, ven = lines.loc["own-cutlass"], lines.loc["cublas"]
    assert own["runs"] == ven["runs"] == 8 and own["machines"] == 1
    assert own["min_us"] == pytest.approx(58.7, rel=2e-3)
    assert own["max_us"] == pytest.approx(66.4, rel=2e-3)
    assert own["between"] == pytest.approx(66.4 / 58.7, rel=4e-3)
    assert own["within"] == pytest.approx(1.038)
    # own moves 13% between processes against 3.8% inside one: set per process
    assert bool(own["process"]) and not bool(ven["process"])


def test_each_runs_own_over_vendor_ratio_and_its_range(tmp_path):
    _runs(tmp_path)
    ratios = spread.ratio_frame(load([tmp_path]))
    assert list(ratios["provider"]) == ["own-cutlass"]  # vendor rows are the reference
    line = ratios.iloc[0]
    per_run = [v / o for o, v in zip(OWN_US, CUBLAS_US, strict=True)]
    assert line["runs"] == 8
    assert line["lowest"] == pytest.approx(min(per_run), rel=4e-3)
    assert line["highest"] == pytest.approx(max(per_run), rel=4e-3)


def test_a_point_one_run_measured_is_left_out(tmp_path):
    _runs(tmp_path, OWN_US[:1], CUBLAS_US[:1])
    write_run(tmp_path, "other", [speed_row("h200", "gemm", {**P, "m": 8}, "cublas", "other")])
    assert spread.spread_frame(load([tmp_path])).empty
    assert spread.ratio_frame(load([tmp_path])).empty


def test_the_command_prints_the_summary_the_widest_and_the_ratios(tmp_path, capsys):
    _runs(tmp_path)
    assert cli.main(["spread", str(tmp_path), "worst=1"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("8 runs")
    assert "widest 1 between-run spreads" in out and "1 lowest own speedups" in out
    assert "gemm 4x28672x4096 bf16 nt" in out


def test_the_command_needs_two_runs(tmp_path, capsys):
    _runs(tmp_path, OWN_US[:1], CUBLAS_US[:1])
    assert cli.main(["spread", str(tmp_path)]) == 2
    assert "runs: 1 found; allowed: >= 2" in capsys.readouterr().err


def test_runs_on_several_machines_are_wider_but_not_called_a_process_spread(tmp_path):
    _runs(tmp_path, (66.4, 58.7), CUBLAS_US[:2], uuids=["GPU-a", "GPU-b"])
    own = spread.spread_frame(load([tmp_path])).set_index("provider").loc["own-cutlass"]
    assert own["machines"] == 2 and bool(own["wider"]) and not bool(own["process"])


def test_a_run_without_a_gpu_uuid_leaves_the_machines_unknown(tmp_path):
    _runs(tmp_path, (66.4, 58.7), CUBLAS_US[:2], uuids=["GPU-a", None])
    own = spread.spread_frame(load([tmp_path])).set_index("provider").loc["own-cutlass"]
    assert own["machines"] is None or own["machines"] != own["machines"]  # None or NaN
    assert bool(own["wider"]) and not bool(own["process"])


def test_points_under_other_protocols_stay_apart(tmp_path):
    # the same runs hold the point timed with a cold and with a warm L2: two lines each, never
    # one line whose range is the cold / warm difference
    _runs(tmp_path / "cold", OWN_US[:2], CUBLAS_US[:2], l2="cold")
    _runs(tmp_path / "warm", [u / 2 for u in OWN_US[:2]], CUBLAS_US[:2], l2="warm")
    df = load([tmp_path])
    lines = spread.spread_frame(df)
    assert sorted(lines["l2"]) == ["cold", "cold", "warm", "warm"]
    assert (lines["runs"] == 2).all() and spread.varying(lines) == ["l2"]
    ratios = spread.ratio_frame(df).set_index("l2")
    assert (ratios["runs"] == 2).all()
    assert ratios.loc["warm", "lowest"] > 1.5 > ratios.loc["cold", "highest"]
