"""harness crosscheck on the CPU: the preset, the explanations, nvbench's result columns, the
matched protocol, the store's side table, the skip path and the wiring (with fake timings)."""

import dataclasses

import pandas as pd
import pytest
from omegaconf import OmegaConf

from harness import store
from harness.cli import main
from harness.config import compose_run_config
from harness.crosscheck import command, nvbench
from harness.crosscheck.explain import PointTimes, explain, regime
from harness.crosscheck.measure import HarnessPart, matched_protocol
from harness.crosscheck.table import markdown, ridge_flop_per_byte, table_row
from harness.measure.protocol import Protocol
from harness.plan import run_plan
from harness.providers import load_all
from harness.sweep import expand

H200_RIDGE = 989.4e3 / 4800  # bf16 dense TFLOP/s over HBM GB/s: ~206 FLOP/B


def test_preset_has_gemm_and_attention_points_from_us_to_ms():
    cfg = compose_run_config(["sweep=crosscheck"])
    points = expand(OmegaConf.to_container(cfg.sweep.groups), load_all())
    gemm = [p for p in points if p.problem.op == "gemm"]
    attn = [p for p in points if p.problem.op == "attention"]
    assert len(gemm) >= 8 and len(attn) >= 4
    assert {p.provider for p in gemm} == {"cublas", "own-triton"}
    assert {p.problem.phase for p in attn} == {"prefill", "decode"}
    assert {"own-triton", "sdpa-cudnn", "sdpa-flash"} <= {p.provider for p in attn}
    flops = sorted(p.problem.flops() for p in gemm)
    assert flops[0] < 1e7 and flops[-1] == 2 * 8192**3  # ~2 us launch scale .. ~2 ms


def test_ridge_from_the_datasheet():
    assert ridge_flop_per_byte("NVIDIA H200", 132, "bf16") == pytest.approx(H200_RIDGE)
    assert ridge_flop_per_byte("no such gpu", 1, "bf16") is None
    assert regime(1.0, H200_RIDGE) == "memory" and regime(2730.0, H200_RIDGE) == "compute"
    assert regime(None, H200_RIDGE) is None


def test_explain_matched_within_tolerance():
    t = PointTimes(1.00, 1.02, 1.00, 1900, 1905, 1910, intensity=2730, ridge=H200_RIDGE)
    assert explain(t) == "matched within 5%"


def test_explain_clocks_when_matched_and_nvbench_differ():
    t = PointTimes(1.00, 1.00, 0.88, 1600, 1600, 1980, intensity=2730, ridge=H200_RIDGE)
    assert explain(t) == (
        "sustained vs burst clocks: SM clock 1600 MHz (matched) vs 1980 MHz (nvbench)"
    )


def test_explain_unexplained_difference_says_so():
    t = PointTimes(1.00, 1.00, 0.80, 1980, 1980, 1975, intensity=2730, ridge=H200_RIDGE)
    assert "+25%" in explain(t) and "not explained" in explain(t)


def test_explain_write_flush_on_a_memory_bound_point():
    t = PointTimes(0.010, 0.0118, 0.0120, 1980, 1980, 1980, intensity=1.0, ridge=H200_RIDGE)
    text = explain(t)
    assert text.startswith("matched within 5%; flush by read vs write: memory-bound point")
    assert "intensity 1 below the ridge 206" in text and "cost +18%" in text


def test_explain_default_vs_matched_on_a_compute_bound_point():
    clocks = PointTimes(1.0, 1.10, 1.10, 1700, 1900, 1900, intensity=2730, ridge=H200_RIDGE)
    assert explain(clocks).endswith("SM clock 1900 MHz (matched) vs 1700 MHz (harness)")
    same = PointTimes(1.0, 1.10, 1.10, 1900, 1900, 1900, intensity=2730, ridge=H200_RIDGE)
    assert "compute-bound point: warm-up" in explain(same)


def test_explain_without_nvbench():
    t = PointTimes(1.0, 1.01, None, intensity=2730, ridge=H200_RIDGE)
    assert explain(t) == "matched within 5% of the harness default (no nvbench timing)"


def test_nvbench_columns_from_summaries():
    summaries = {
        "nv/cold/time/gpu/median": 20e-6,
        "nv/cold/time/gpu/mean": 21e-6,
        "nv/cold/time/gpu/stdev/relative": 0.01,
        "nv/cold/sample_size": 4,
        "nv/cold/sm_clock_rate/mean": 1.98e9,
        "nv/batch/time/gpu/mean": 15e-6,
    }
    cols = nvbench.columns(summaries, [10e-6, 20e-6, 20e-6, 30e-6])
    assert cols["nvbench_status"] == "ok"
    assert cols["nvbench_ms_median"] == pytest.approx(0.020)
    assert cols["nvbench_sm_clock_mhz_own"] == pytest.approx(1980)
    assert cols["nvbench_batch_ms_mean"] == pytest.approx(0.015)
    assert cols["nvbench_p90_over_p10"] == pytest.approx(0.027 / 0.013)
    assert "nvbench_ms_p10" not in nvbench.columns(summaries, None)
    assert nvbench.columns({}, None, True, "harness wrong") == {
        "nvbench_status": "skipped",
        "nvbench_reason": "harness wrong",
    }
    assert nvbench.columns({}, None)["nvbench_status"] == "error"


def test_matched_protocol_copies_nvbench_cold_mode():
    p = matched_protocol(Protocol(), median_ms=0.002, timeout_s=15.0)
    p.validate()
    assert (p.l2, p.l2_flush, p.warmup_ms, p.stream_hold) == ("cold", "write", 0.0, True)
    assert (p.rse_target, p.max_time_s, p.max_attempts) == (0.005, 15.0, 1)
    assert p.min_samples == 250_000  # 0.5 s of a 2 us kernel's GPU time
    assert matched_protocol(Protocol(), median_ms=5.0, timeout_s=15.0).min_samples == 100
    assert matched_protocol(Protocol(), median_ms=900.0, timeout_s=15.0).min_samples == 10


def _harness_row(provider="cublas", status="ok", ms=0.010, clock=1980.0):
    return {
        "run_id": "r",
        "point_key": f"k-{provider}",
        "op": "gemm",
        "provider": provider,
        "family": "vendor",
        "problem": "gemm 1x6144x4096 bf16 nt",
        "dtype": "bf16",
        "m": 1,
        "intensity_flop_per_byte": 1.0,
        "status": status,
        "reason": None if status == "ok" else "rel_err 0.5 > 0.02",
        "latency_ms_median": ms if status == "ok" else None,
        "latency_p90_over_p10": 1.05 if status == "ok" else None,
        "sm_clock_mhz": clock if status == "ok" else None,
        "device_name": "NVIDIA H200",
    }


def _table():
    matched = {"latency_ms_median": 0.0118, "sm_clock_mhz": 1980.0, "min_samples": 42373}
    nv = nvbench.columns({"nv/cold/time/gpu/median": 11.9e-6}, None)
    nv["nvbench_sm_clock_mhz"] = 1975.0
    ok = table_row(_harness_row(), matched, nv, H200_RIDGE)
    wrong = table_row(_harness_row("own-triton", "wrong"), None, None, H200_RIDGE)
    return [ok, wrong]


def test_table_rows_and_markdown():
    ok, wrong = _table()
    assert ok["matched_over_nvbench"] == pytest.approx(0.0118 / 0.0119)
    assert ok["matched_over_harness"] == pytest.approx(1.18) and ok["regime"] == "memory"
    assert ok["explanation"].startswith("matched within 5%; flush by read vs write")
    assert wrong["explanation"] == "wrong: rel_err 0.5 > 0.02"
    assert wrong["nvbench_status"] == "skipped" and wrong["matched_ms_median"] is None
    text = markdown([ok, wrong], "crosscheck r: NVIDIA H200", 15.0)
    assert text.startswith("## crosscheck r: NVIDIA H200")
    assert "| cublas " in text and "1980 / 1980 / 1975" in text and "0.992" in text


def test_store_writes_the_side_table_that_read_rows_ignores(tmp_path):
    rows = _table()
    store.write_row(tmp_path, {k: v for k, v in _harness_row().items() if k in store.COLUMNS})
    path = store.write_crosscheck(tmp_path, pd.DataFrame(rows), "## t\n")
    assert path == tmp_path / "crosscheck.parquet" and (tmp_path / "crosscheck.md").exists()
    back = store.read_crosscheck(tmp_path)
    assert list(back.columns) == list(rows[0]) and len(back) == 2
    assert back.loc[0, "explanation"] == rows[0]["explanation"]
    assert len(store.read_rows(tmp_path)) == 1  # rows only, not the side table
    assert not list(tmp_path.glob(".*.tmp"))


def test_cpu_skips_with_its_reason_and_exit_0(capsys):
    assert main(["crosscheck", "device=cpu"]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    assert len(out) == 1 and out[0].startswith("crosscheck: skipped: no CUDA device")
    if not nvbench.importable():
        assert "cuda-bench not installed: pip install 'kernel-harness[nvbench]'" in out[0]


def test_help_and_bad_input(capsys):
    assert main(["crosscheck", "--help"]) == 0
    assert capsys.readouterr().out.startswith("usage: harness crosscheck ")
    assert main(["crosscheck", "batch=maybe"]) == 2
    assert main(["crosscheck", "protocol.timer=cuda-graph", "device=cpu"]) == 2
    assert main(["crosscheck", "devices=[0,1]", "device=cpu"]) == 2


def _fake_point(problem, provider, device, default, **_):
    row = {**_harness_row(provider.name, "wrong" if provider.name == "own-triton" else "ok")}
    row.update(problem=problem.label(), op=problem.op, m=problem.m, n=problem.n, k=problem.k)
    if row["status"] != "ok":
        return HarnessPart(row)
    return HarnessPart(row, {"latency_ms_median": 0.0101, "sm_clock_mhz": 1980.0}, lambda: None)


@pytest.mark.parametrize("with_nvbench", [False, True])
def test_wiring_with_fake_timings(with_nvbench, tmp_path, monkeypatch):
    """Every point's harness part runs once, inside nvbench when it is there; rows and the
    table come out per point, in sweep order."""
    monkeypatch.setattr(command, "time_point", _fake_point)
    monkeypatch.setattr(command, "L2Flusher", lambda *a, **k: None)
    monkeypatch.setattr(nvbench, "unavailable", lambda d: None if with_nvbench else "absent")
    seen = []

    def fake_run(jobs, device_index, out_dir, **_):
        out = {}
        for job in jobs:
            closure, why = job.harness()
            seen.append((job.name, why))
            out[job.name] = (
                nvbench.columns({"nv/cold/time/gpu/median": 10e-6}, None)
                if closure
                else nvbench.columns({}, None, True, why)
            )
            job.done()
        return out

    monkeypatch.setattr(nvbench, "run", fake_run)
    cfg = compose_run_config(
        [
            "sweep=crosscheck",
            f"results_dir={tmp_path}",
            "run_id=x",
            "device=cpu",
            "sweep.groups.0.zip={m:[1,16],n:[1024,4096],k:[1024,4096]}",
        ]
    )
    whole = run_plan(cfg)
    keyed = {k: p for k, p in whole.keyed.items() if p.problem.op == "gemm"}
    gemm = dataclasses.replace(whole, points=tuple(keyed.values()), keyed=keyed, mine=keyed)
    run_path, rows = command.crosscheck(gemm, batch=False, nvbench_timeout_s=15.0)
    assert [r["provider"] for r in rows] == ["cublas", "own-triton"] * 2
    assert len(store.read_rows(run_path)) == 4
    assert (run_path / "run.json").exists()
    ok = rows[0]
    if with_nvbench:
        assert len(seen) == 4 and seen[1][1].startswith("harness wrong")
        assert ok["nvbench_status"] == "ok" and ok["matched_over_nvbench"] == pytest.approx(1.01)
        assert rows[1]["nvbench_status"] == "skipped"
    else:
        assert not seen and ok["nvbench_status"] == "skipped" and ok["nvbench_reason"] == "absent"
        assert ok["explanation"].endswith("(no nvbench timing)")
