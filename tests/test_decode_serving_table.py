"""harness/report/decode_serving.py (scripts/decode_serving_table.py prints it): own paged decode per (q_len, GQA group, ragged) slice against
the measured HBM read ceiling and the fastest vendor row of each point."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from harness.report import decode_serving as serving
from harness.report import read_once


def _row(provider: str, ms: float, gbps: float, ragged=None, q_len=1, kv_heads=8) -> dict:
    return dict(
        op="attention",
        status="ok",
        provider=provider,
        q_len=q_len,
        q_heads=32,
        kv_heads=kv_heads,
        ragged=ragged,  # None: a row of one length (schema 5 leaves the axis out)
        page_size=16,
        batch=16,
        kv_len=4096,
        latency_ms_median=ms,
        gbps=gbps,
    )


def test_slices_ceiling_fraction_and_the_fastest_vendor():
    rows = pd.DataFrame(
        [
            _row("own-triton", 0.10, 4500.0),
            _row("flashinfer", 0.11, 4100.0),
            _row("flash-attn-4", 0.12, 3800.0),
            _row("own-triton", 0.20, 2500.0, ragged=True),
            _row("flashinfer", 0.16, 3100.0, ragged=True),
            _row("flash-attn-4", 0.30, 1700.0, ragged=True),
            _row("own-triton", 0.05, 4000.0, q_len=4, kv_heads=4),  # no vendor row: left out
        ]
    )
    points = serving.table(rows, "own-triton", 5000.0)
    assert len(points) == 2  # the point without a vendor row has no ratio
    full = points.loc[(1, 4, False, 16, 16, 4096)]
    assert full["ceiling_frac"] == pytest.approx(0.9) and full["best"] == "flashinfer"
    assert full["vs_best"] == pytest.approx(1.1)
    ragged = points.loc[(1, 4, True, 16, 16, 4096)]
    assert ragged["vs_best"] == pytest.approx(0.8) and ragged["best"] == "flashinfer"
    summary = serving.summarize(points)
    assert summary.loc[(1, 4, False), ">=90%"] == 1 and summary.loc[(1, 4, True), ">=1.00x"] == 0
    whole = summary.loc[("all", "", "")]
    assert whole["points"] == 2 and whole["vs_fastest_vendor"] == pytest.approx(0.938, abs=1e-3)
    # the ceiling bar per (batch, KV length, ragged), and the one point behind a vendor
    bar = serving.ceiling_by(points)
    assert bar.loc[(16, 4096, False), ">=90%"] == 1 and bar.loc[(16, 4096, True), ">=90%"] == 0
    assert bar.loc[(16, 4096, True), "of_ceiling"] == pytest.approx(0.5)
    slow = serving.behind(points)
    assert list(slow.index) == [(1, 4, True, 16, 16, 4096)]
    assert slow.iloc[0]["best"] == "flashinfer" and slow.iloc[0]["vs_best"] == pytest.approx(0.8)


def test_a_point_timed_on_two_machines_has_no_vendor_ratio():
    """A resumed run can end on another machine: own's row of a point from one GPU and the
    vendors' from another compare two machines, so that point gets no ratio (and says so)."""
    rows = pd.DataFrame(
        [
            {**_row("own-triton", 0.10, 4500.0), "device_uuid": "GPU-a"},
            {**_row("flashinfer", 0.11, 4100.0), "device_uuid": "GPU-a"},
            {**_row("own-triton", 0.05, 4000.0, q_len=4), "device_uuid": "GPU-b"},
            {**_row("flashinfer", 0.04, 4100.0, q_len=4), "device_uuid": "GPU-a"},
        ]
    )
    points = serving.table(rows, "own-triton", 5000.0)
    assert len(points) == 2
    assert points.loc[(1, 4, False, 16, 16, 4096), "vs_best"] == pytest.approx(1.1)
    crossed = points.loc[(4, 4, False, 16, 16, 4096)]
    assert pd.isna(crossed["vs_best"]) and crossed["ceiling_frac"] == pytest.approx(0.8)
    whole = serving.summarize(points).loc[("all", "", "")]
    assert whole["points"] == 2 and whole["vs_fastest_vendor"] == pytest.approx(1.1)
    assert whole["of_ceiling"] == pytest.approx((0.9 * 0.8) ** 0.5, abs=1e-3)


def test_read_once_curve_sets_each_point_against_a_read_of_its_own_bytes(tmp_path):
    """--read-once: own GB/s over the one-pass read rate at the point's bytes, linear in log
    bytes between the probe's sizes (the faster provider at each size; re-reads left out)."""

    def probe(provider, ws, gbps, traffic=None):
        return dict(
            op="memory",
            status="ok",
            provider=provider,
            metric="read",
            working_set_bytes=ws,
            traffic_bytes=traffic or ws,
            gbps=gbps,
        )

    probes = pd.DataFrame(
        [
            probe("triton-stream", 10**8, 3000.0),
            probe("torch-stream", 10**8, 3200.0),  # the faster one at this size
            probe("triton-stream", 10**10, 4000.0),
            probe("triton-stream", 10**6, 9000.0, traffic=10**10),  # re-reads: not a pass
        ]
    )
    run = tmp_path / "probe"
    (run / "rows").mkdir(parents=True)
    probes.to_parquet(run / "rows" / "p.parquet")
    curve = serving.read_once_curve(run)
    assert list(curve.index) == [10**8, 10**10]
    assert list(curve) == [3200.0, 4000.0]
    at = read_once.gbps_at(curve, pd.Series([10**8, 10**9, 10**11]))
    assert list(at) == pytest.approx([3200.0, 3600.0, 4000.0])
    rows = pd.DataFrame(
        [
            dict(_row("own-triton", 0.10, 2880.0), min_bytes=10**9),
            dict(_row("flashinfer", 0.11, 2600.0), min_bytes=10**9),
        ]
    )
    points = serving.table(rows, "own-triton", 4000.0, curve)
    assert points["read_once_frac"].iat[0] == pytest.approx(0.8)  # 2880 / 3600
    assert serving.summarize(points).loc[("all", "", ""), "of_read_once"] == pytest.approx(0.8)


def test_a_run_of_own_rows_alone_keeps_every_point_without_a_ratio():
    rows = pd.DataFrame(
        [_row("own-triton", 0.10, 4500.0), _row("own-triton", 0.2, 2500.0, q_len=2)]
    )
    points = serving.table(rows, "own-triton", 5000.0)
    assert len(points) == 2 and points["vs_best"].isna().all()
    whole = serving.summarize(points).loc[("all", "", "")]
    assert whole["points"] == 2 and whole[">=1.00x"] == 0


def test_a_point_a_vendor_has_no_row_at_has_no_ratio_but_a_failed_vendor_row_keeps_one():
    """Session 58's H100 run ended before FA4's row at a point where FA4 had been the fastest:
    against FlashInfer alone own looked 1.155x where it was 0.921x against FA4 before. A point
    where a vendor of the run has no row at all gets no ratio; one where its row failed (it
    was measured and could not run) is set against the vendors that ran."""
    rows = pd.DataFrame(
        [
            _row("own-triton", 0.10, 4500.0),
            _row("flashinfer", 0.11, 4100.0),
            _row("flash-attn-4", 0.09, 4900.0),
            _row("own-triton", 0.10, 4500.0, q_len=2),
            _row("flashinfer", 0.11, 4100.0, q_len=2),  # FA4 not reached
            _row("own-triton", 0.10, 4500.0, q_len=4),
            _row("flashinfer", 0.12, 4100.0, q_len=4),
            {**_row("flash-attn-4", float("nan"), float("nan"), q_len=4), "status": "error"},
        ]
    )
    points = serving.table(rows, "own-triton", 5000.0)
    assert points.loc[(1, 4, False, 16, 16, 4096), "vs_best"] == pytest.approx(0.9)
    cut = points.loc[(2, 4, False, 16, 16, 4096)]
    assert pd.isna(cut["vs_best"]) and cut["no_ratio"] == "a vendor not measured"
    assert cut["ceiling_frac"] == pytest.approx(0.9)  # still counted against the ceiling
    failed = points.loc[(4, 4, False, 16, 16, 4096)]
    assert failed["vs_best"] == pytest.approx(1.2) and failed["best"] == "flashinfer"
    whole = serving.summarize(points).loc[("all", "", "")]
    assert whole["points"] == 3 and whole[">=1.00x"] == 1


def test_keep_batches_sets_one_half_of_the_grid_against_the_same_half():
    rows = pd.DataFrame([_row("own-triton", 0.10, 4500.0), _row("flashinfer", 0.11, 4100.0)])
    twice = pd.concat([rows, rows.assign(batch=64, latency_ms_median=[0.4, 0.3])])
    assert len(serving.keep_batches(twice, None)) == 4
    half = serving.keep_batches(twice, [16])
    assert set(half["batch"]) == {16}
    points = serving.table(half, "own-triton", 5000.0)
    assert points["vs_best"].tolist() == pytest.approx([1.1])  # batch 64's 0.75 left out


def test_provider_drift_separates_each_providers_change_between_two_runs():
    """A vendor 10% slower in the second run and own 5% faster: the vs-vendor ratio moved by
    both, and the drift says how much is whose."""
    first = pd.DataFrame([_row("own-triton", 0.10, 4500.0), _row("flashinfer", 0.10, 4500.0)])
    second = pd.DataFrame([_row("own-triton", 0.095, 4700.0), _row("flashinfer", 0.11, 4100.0)])
    drift = serving.provider_drift(second, first, "own-triton").set_index(["provider", "points"])
    assert drift.loc[("own-triton", "all"), "speed_here_over_there"] == pytest.approx(1.053, 1e-3)
    assert drift.loc[("own-triton", "q_len 1"), "n"] == 1
    assert drift.loc[("flashinfer", "all"), "speed_here_over_there"] == pytest.approx(0.909, 1e-3)
    assert ("flashinfer", "q_len 1") not in drift.index  # per q_len for own only


def test_an_own_rung_is_set_against_own_and_never_counted_as_a_vendor():
    """A run with own-triton-no-longest-first beside own-triton and the vendors (session 68): the
    rung is faster than FlashInfer at one point, yet the fastest vendor stays FlashInfer, and the
    rung gets its own ratio (its time over own's) per point and per slice."""
    rows = pd.DataFrame(
        [
            {**_row("own-triton", 0.10, 4500.0, ragged=True), "family": "own"},
            {**_row("own-triton-no-longest-first", 0.105, 4300.0, ragged=True), "family": "own"},
            {**_row("flashinfer", 0.11, 4100.0, ragged=True), "family": "vendor"},
            {**_row("own-triton", 0.20, 4400.0, ragged=True, q_len=2), "family": "own"},
            {
                **_row("own-triton-no-longest-first", 0.19, 4600.0, ragged=True, q_len=2),
                "family": "own",
            },
            {**_row("flashinfer", 0.21, 4200.0, ragged=True, q_len=2), "family": "vendor"},
        ]
    )
    points = serving.table(rows, "own-triton", 5000.0)
    one = points.loc[(1, 4, True, 16, 16, 4096)]
    assert one["best"] == "flashinfer" and one["vs_best"] == pytest.approx(1.1)
    assert one[serving.RUNG + "own-triton-no-longest-first"] == pytest.approx(1.05)
    rungs = serving.rungs_by(points)
    whole = rungs[rungs["q_len"] == "all"].iloc[0]
    assert whole["points"] == 2 and whole[">=1.00x"] == 1
    assert whole["rung_over_own"] == pytest.approx((1.05 * 0.95) ** 0.5, abs=1e-3)
    # without a family column the provider's name says which rows are own
    assert serving.own_rungs(rows.drop(columns="family"), "own-triton") == [
        "own-triton-no-longest-first"
    ]


def test_a_rung_ratio_is_split_by_whether_both_tuners_picked_the_same_config():
    """A rung is tuned under its own key (session 108's early-start A/B: 11 of 32 points picked
    differently), so rungs_by says at how many points the two configs agree on the tuner's
    choices, and the ratio over those alone. Tune bookkeeping and the rung's own feature
    (item_start) do not count as a different pick; a row without a config leaves its point
    out of the count."""

    def cfg(block_n, **extra):
        return json.dumps({"impl": "gluon", "BLOCK_N": block_n, "num_splits": 2, **extra})

    def pair(q_len, own_ms, rung_ms, own_cfg, rung_cfg):
        return [
            {**_row("own-triton", own_ms, 4000.0, q_len=q_len), "family": "own"}
            | {"provider_config": own_cfg},
            {**_row("own-triton-no-early-start", rung_ms, 3900.0, q_len=q_len), "family": "own"}
            | {"provider_config": rung_cfg},
        ]

    rows = pd.DataFrame(
        pair(
            1,
            0.100,
            0.102,
            cfg(128, item_start="early", tune_ms=0.1),
            cfg(128, item_start="length first", tune_ms=0.2),
        )
        + pair(2, 0.100, 0.095, cfg(128), cfg(64))  # another tile: the picks differ
        + pair(4, 0.100, 0.101, cfg(64), None)  # no config: not counted either way
    )
    points = serving.table(rows, "own-triton", 5000.0)
    same = points[serving.SAME + "own-triton-no-early-start"]
    assert same.loc[(1, 4, False, 16, 16, 4096)] == True  # noqa: E712 (an object column)
    assert same.loc[(2, 4, False, 16, 16, 4096)] == False  # noqa: E712
    assert pd.isna(same.loc[(4, 4, False, 16, 16, 4096)])
    rungs = serving.rungs_by(points)
    whole = rungs[rungs["q_len"] == "all"].iloc[0]
    assert whole["points"] == 3 and whole["same_config"] == 1
    assert whole["same_config_ratio"] == pytest.approx(1.02)
    two = rungs[rungs["q_len"] == 2].iloc[0]
    assert two["same_config"] == 0 and pd.isna(two["same_config_ratio"])
    # the report's serving table says the same beside the rung's ratio
    assert serving._same_text(points, "own-triton-no-early-start") == " (same config at 1: 1.020x)"
    # rows without provider_config (older runs) keep the table as it was
    plain = serving.rungs_by(serving.table(rows.drop(columns="provider_config"), "own-triton", 5e3))
    assert "same_config" not in plain.columns


def test_the_report_table_gives_each_serving_run_its_bars():
    """serving_table: one line per (GPU, run, batch, KV length, ragged) and one per run whole;
    a run of another sweep is not a serving run, a GPU without a measured read ceiling is left
    out and named, and a run of own providers alone shows its rung but no vendor columns."""

    def rows(run, sweep, device, *specs):
        return [
            {**_row(p, ms, gbps, ragged=ragged), "run_id": run, "sweep": sweep}
            | {"device_name": device, "family": "own" if p.startswith("own") else "vendor"}
            for p, ms, gbps, ragged in specs
        ]

    df = pd.DataFrame(
        rows(
            "serve",
            "fmha_decode_serving",
            "H200",
            ("own-triton", 0.10, 4500.0, None),
            ("flashinfer", 0.11, 4000.0, None),
            ("own-triton", 0.20, 3600.0, True),
            ("flashinfer", 0.18, 4000.0, True),
        )
        + rows(
            "ab",
            "fmha_decode_serving",
            "H200",
            ("own-triton", 0.10, 4500.0, True),
            ("own-triton-no-tma", 0.12, 3750.0, True),
        )
        + rows("other", "fmha_decode_paged", "H200", ("own-triton", 0.10, 4500.0, None))
        + rows("serve", "fmha_decode_serving", "MI300X", ("own-triton", 0.1, 4000.0, None))
    )
    t = serving.serving_table(df, {"H200": 5000.0})
    f = t.frame.set_index(["run", "batch", "kv_len", "ragged"])
    assert set(f.index.get_level_values("run")) == {"serve", "ab"}  # not "other"
    full = f.loc[("serve", "16", "4096", "no")]
    assert full["of_ceiling"] == "0.900" and full[">=90%"] == 1
    assert full["vs_fastest_vendor"] == "1.100x" and full["fastest_vendor"] == "flashinfer"
    ragged = f.loc[("serve", "16", "4096", "yes")]
    assert ragged["vs_fastest_vendor"] == "0.900x" and ragged[">=1.00x"] == 0
    whole = f.loc[("serve", "all", "", "")]
    assert whole["points"] == 2 and whole[">=1.00x"] == 1
    ab = f.loc[("ab", "all", "", "")]
    assert ab["vs_fastest_vendor"] == "" and ab["rung_over_own"] == "own-triton-no-tma: 1.200x"
    assert "No measured ceiling, left out: MI300X." in t.caption


def test_the_script_prints_a_committed_run_with_its_rung():
    """scripts/decode_serving_table.py on session 68's committed ragged batch-64 run (own
    Triton, its item-order rung, FlashInfer, FA4; the H200's runs beside it). Its ceiling is
    the report's and `harness goals`': the ceilings run's."""
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    run = root / "results/h200/fmha_decode_serving-b64-ragged-s68"
    if not run.is_dir():
        pytest.skip("results/h200 not in this checkout")
    script = root / "scripts/decode_serving_table.py"
    out = subprocess.run(
        [sys.executable, str(script), str(run), "--read-once", str(run.parent / "read_once-s57")],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "HBM read ceiling 4,628 GB/s (measured: ceilings sweep (run ceilings))" in out
    assert "own against its rungs in this run" in out
    whole = [
        line for line in out.splitlines() if line.startswith("own-triton-no-longest-first   all")
    ]
    # 32 points, one left out of the ratios: its FA4 row ran on another card (session 70)
    assert len(whole) == 1 and whole[0].split()[2] == "31"  # points
    assert "0 point(s) behind the fastest vendor" in out
    assert "1 point(s) timed on more than one GPU" in out


def test_the_figure_draws_each_point_once_from_its_latest_run_with_a_vendor(tmp_path):
    """decode_serving_figure: per GPU with a measured ceiling, one scatter of both bars; a point
    timed by two runs is drawn from the later one, a run of own rows alone gives no point, and a
    GPU without a ceiling gets no figure."""
    from harness.report.decode_serving_figure import latest_points, serving_figures
    from harness.report.figures import styled

    def rows(run, when, device, *specs):
        return [
            {**_row(p, ms, gbps, ragged=ragged), "run_id": run, "timestamp": when}
            | {"sweep": "fmha_decode_serving", "device_name": device}
            | {"family": "own" if p.startswith("own") else "vendor"}
            for p, ms, gbps, ragged in specs
        ]

    df = pd.DataFrame(
        rows("old", "2026-11-28T10:00:00", "H200", ("own-triton", 0.10, 4000.0, None))
        + rows("old", "2026-11-28T10:00:01", "H200", ("flashinfer", 0.12, 3300.0, None))
        + rows("old", "2026-11-28T10:00:02", "H200", ("own-triton", 0.20, 3000.0, True))
        + rows("old", "2026-11-28T10:00:03", "H200", ("flashinfer", 0.18, 3300.0, True))
        + rows("new", "2026-11-29T10:00:00", "H200", ("own-triton", 0.16, 4700.0, True))
        + rows("new", "2026-11-29T10:00:01", "H200", ("flashinfer", 0.18, 4200.0, True))
        + rows("own-only", "2026-11-30T10:00:00", "H200", ("own-triton", 0.1, 5000.0, None))
        + rows("x", "2026-11-30T10:00:00", "MI300X", ("own-triton", 0.1, 4000.0, None))
    )
    points = latest_points(df[df["device_name"] == "H200"], 5000.0).set_index("ragged")
    assert points.loc[True, "run"] == "new" and points.loc[False, "run"] == "old"
    assert points.loc[True, "ceiling_frac"] == pytest.approx(0.94)
    assert points.loc[True, "vs_best"] == pytest.approx(0.18 / 0.16)
    with styled():
        figures = serving_figures(df, {"H200": 5000.0}, tmp_path)
    assert [f.stem for f in figures] == ["decode-serving-h200"]
    assert figures[0].png.is_file() and figures[0].svg.is_file()
    assert "new, old" in figures[0].caption and "own-only" not in figures[0].caption


def test_own_picks_count_how_the_tuner_ran_each_point():
    """provider_config, counted per (kernel, split, merge, item order); vendors and rows that
    are not ok are left out, and a whole-KV pick has no merge."""
    import json

    def pick(**cfg) -> str:
        return json.dumps(dict(kernel="attn_decode", **cfg))

    own = _row("own-triton", 1.0, 1.0)
    pdl = pick(
        impl="gluon", num_splits=4, split_by="length", reduce="pdl", item_order="longest-first"
    )
    rows = pd.DataFrame(
        [
            dict(own, provider_config=pick(impl="gluon", num_splits=1)),
            dict(own, provider_config=pdl),
            dict(own, provider_config=pdl),
            dict(
                own,
                provider_config=pick(impl="tl", num_splits=3, split_by="longest", reduce="fused"),
            ),
            dict(own, status="error", provider_config=pick(impl="tl")),
            dict(_row("flashinfer", 1.0, 1.0), provider_config="{}"),
        ]
    )
    picks = serving.own_picks(rows, "own-triton")
    assert picks.to_dict("records") == [
        dict(kernel="gluon", split="by length", merge="pdl", order="longest-first", points=2),
        dict(kernel="gluon", split="whole", merge="-", order="-", points=1),
        dict(kernel="tl", split="by longest", merge="fused", order="-", points=1),
    ]
    assert serving.own_picks(rows.drop(columns="provider_config"), "own-triton").empty


def test_fixed_and_rate_splits_own_time_into_fixed_cost_and_streaming_rate():
    """Own at 10 us + bytes / 4,500 GB/s over two KV lengths, a cold read at 5 us + bytes /
    4,650: the fit gives both back per (batch, group, ragged), the median over q_len slices."""
    rows = []
    for q_len in (1, 8):
        for kv_len, mb in ((4096, 134.0), (16384, 537.0)):
            us = 10.0 + mb / 4.5
            rows.append(
                {**_row("own-triton", us / 1e3, 0.0, q_len=q_len, kv_heads=4), "kv_len": kv_len}
                | {"min_bytes": mb * 1e6}
            )
    rows.append({**_row("flashinfer", 0.01, 0.0), "min_bytes": 1e8})  # a vendor: not fit
    sizes = pd.Index([67e6, 134e6, 268e6, 537e6, 1074e6])
    curve = pd.Series([s / 1e6 / (5.0 + s / 1e6 / 4.65) * 1e3 for s in sizes], index=sizes)
    fit = serving.fixed_and_rate(pd.DataFrame(rows), "own-triton", curve)
    (line,) = fit.to_dict("records")
    assert (line["batch"], line["group"], line["ragged"], line["slices"]) == (16, 8, False, 2)
    assert line["own_fixed_us"] == pytest.approx(10.0) and line["own_gbps"] == 4500
    assert line["read_fixed_us"] == pytest.approx(5.0) and line["read_gbps"] == 4650
    one_length = pd.DataFrame(
        [r for r in rows if r["kv_len"] == 4096 or r["provider"] != "own-triton"]
    )
    assert serving.fixed_and_rate(one_length, "own-triton").empty  # one byte count: no line
    flat = [r | {"latency_ms_median": 0.05} for r in rows if r["provider"] == "own-triton"]
    flat[0]["latency_ms_median"] = float("nan")
    assert serving.fixed_and_rate(pd.DataFrame(flat), "own-triton").empty  # no rate: no line


def test_the_report_table_reads_a_run_against_its_own_cards_ceiling():
    """As `harness goals` does: a run on a card that read its own HBM ceiling is set against
    that card's read, not the GPU model's latest, and column `ceiling` says which it was."""
    df = pd.DataFrame(
        [
            {**_row(p, ms, gbps, ragged=None), "run_id": run, "sweep": "fmha_decode_serving"}
            | {"device_name": "H200", "device_uuid": card}
            | {"family": "own" if p.startswith("own") else "vendor"}
            for run, card in (("mine", "GPU-a"), ("other", "GPU-b"))
            for p, ms, gbps in (("own-triton", 0.10, 4500.0), ("flashinfer", 0.11, 4000.0))
        ]
    )
    reads = {"H200": {"GPU-a": ("ceilings-a", 4737.0), "GPU-c": ("ceilings-c", 5000.0)}}
    t = serving.serving_table(df, {"H200": 5000.0}, card_reads=reads)
    f = t.frame.set_index(["run", "batch", "kv_len", "ragged"])
    mine, other = f.loc[("mine", "all", "", "")], f.loc[("other", "all", "", "")]
    assert mine["of_ceiling"] == f"{4500 / 4737:.3f}"
    assert mine["ceiling"] == "4,737 GB/s, the run's card"
    assert other["of_ceiling"] == "0.900" and other["ceiling"] == "5,000 GB/s, another card"
