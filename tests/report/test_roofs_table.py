"""The report's roofs tables: the latest ceilings run's values per GPU and the fit of one cold
read pass, time = fixed + bytes / rate."""

from __future__ import annotations

import pandas as pd
import pytest
from report_fixtures import ceiling_row, read_once_row, write_run

from harness.report.data import load
from harness.report.roofs_table import FIT_MIN_BYTES, cold_read_table, read_fit, roofs_table

MIB = 1 << 20


def _curve(fixed_us: float, gbps: float, sizes) -> pd.Series:
    """GB/s by bytes of a read that takes fixed_us + bytes / gbps."""
    return pd.Series({b: b / (fixed_us * 1e3 + b / gbps) for b in sizes}, dtype=float)


def test_the_fit_recovers_the_fixed_cost_and_the_rate():
    sizes = [16 * MIB, 64 * MIB, 256 * MIB, 1024 * MIB, 4096 * MIB]
    fit = read_fit(_curve(4.5, 3100.0, [1 * MIB, 4 * MIB, *sizes]))
    assert fit is not None
    assert fit.fixed_us == pytest.approx(4.5, rel=1e-6)
    assert fit.gbps == pytest.approx(3100.0, rel=1e-6)
    assert fit.sizes == len(sizes) and fit.lo_bytes == FIT_MIN_BYTES  # 1-4 MiB left out
    assert fit.max_rel_err < 1e-9 and fit.us(32 * MIB) == pytest.approx(4.5 + 32 * MIB / 3.1e6)
    assert read_fit(_curve(4.5, 3100.0, [16 * MIB, 64 * MIB])) is None  # two sizes: no fit


def test_the_roofs_table_shows_the_latest_ceilings_and_the_read_fit(tmp_path):
    old = ceiling_row("h200", "hbm_read_gbps", 4000.0, "ceilings")
    new = {**ceiling_row("h200", "hbm_read_gbps", 4600.0, "ceilings-2")}
    new["timestamp"] = "2026-02-01T00:00:00+00:00"
    write_run(tmp_path, "ceilings", [old, ceiling_row("h200", "tensor_bf16_tflops", 700.0, "c")])
    write_run(tmp_path, "ceilings-2", [new])
    sizes = [16 * MIB, 64 * MIB, 256 * MIB, 1024 * MIB]
    curve = _curve(4.8, 4650.0, sizes)
    write_run(
        tmp_path, "read_once", [read_once_row("h200", b, g, "read_once") for b, g in curve.items()]
    )
    df = load([tmp_path])
    table = roofs_table(df).frame.set_index("roof")
    assert table.loc["hbm_read_gbps", "measured"] == "4,600"  # the latest run's, not the best
    assert table.loc["hbm_read_gbps", "run"] == "ceilings-2"
    assert table.loc["tensor_bf16_tflops", "measured"] == "700"
    assert table.loc["one cold read pass", "measured"] == "4.80 us + bytes / 4,650 GB/s"
    by_size = cold_read_table(df).frame
    assert list(by_size["bytes"]) == ["16MiB", "64MiB", "256MiB", "1GiB"]
    assert list(by_size["fitted"]) == ["yes"] * 4
    assert by_size["of_ceiling"].iloc[-1] == f"{curve.iloc[-1] / 4600.0:.3f}"


def test_no_ceilings_and_no_reads_give_empty_tables(tmp_path):
    write_run(tmp_path, "c", [ceiling_row("h200", "tensor_bf16_tflops", 700.0, "c")])
    df = load([tmp_path])
    assert "one cold read pass" not in set(roofs_table(df).frame["roof"])
    assert cold_read_table(df).frame.empty


def test_harness_ceilings_show_prints_the_cold_read_and_its_fit(tmp_path):
    from harness.report.ceiling_tables import show

    curve = _curve(4.5, 3100.0, [16 * MIB, 64 * MIB, 256 * MIB])
    write_run(
        tmp_path, "read_once", [read_once_row("h100", b, g, "read_once") for b, g in curve.items()]
    )
    out = show([str(tmp_path)])
    assert "## one cold read pass by size" in out
    assert "4.50 us + bytes / 3,100 GB/s (3 sizes, 16MiB-256MiB, within 0.0%)" in out


def test_the_roofs_table_names_the_rows_that_outrun_a_roof(tmp_path):
    """A GEMM row faster than the ceilings run's peak is counted beside that roof with its
    share and name (session 92: gemm_llama's one-wave 1024x4096x14336 ran 1.075x the H100's fp8
    roof, a shape the ceilings sweep did not probe); a roof no row beats shows nothing."""
    from report_fixtures import speed_row

    one_wave = {"m": 1024, "n": 4096, "k": 14336, "dtype": "bf16", "layout": "nt", "batch": 1}
    flops = 2 * 1024 * 4096 * 14336
    ms_at = {700.0: flops / 700e12 * 1e3, 756.0: flops / 756e12 * 1e3}  # under and over 720
    rows = [
        speed_row("h200", "gemm", one_wave, "cublas", "grid", median_ms=ms_at[756.0], noise=0.0),
        speed_row("h200", "gemm", one_wave, "own-triton", "grid", median_ms=ms_at[700.0]),
    ]
    write_run(tmp_path, "grid", rows)
    ceilings = [
        ceiling_row("h200", "tensor_bf16_tflops", 720.0, "ceilings"),
        ceiling_row("h200", "hbm_read_gbps", 4600.0, "ceilings"),
    ]
    write_run(tmp_path, "ceilings", ceilings)
    table = roofs_table(load([tmp_path])).frame.set_index("roof")
    assert table.loc["tensor_bf16_tflops", "rows_above"] == (
        "1 row, up to 1.050x: cublas gemm 1024x4096x14336 bf16 nt (run grid)"
    )
    assert table.loc["hbm_read_gbps", "rows_above"] == ""


def test_harness_ceilings_show_lists_the_rows_above_a_roof(tmp_path):
    from report_fixtures import speed_row

    from harness.report.ceiling_tables import show

    one_wave = {"m": 1024, "n": 4096, "k": 14336, "dtype": "bf16", "layout": "nt", "batch": 1}
    ms = 2 * 1024 * 4096 * 14336 / 756e12 * 1e3
    write_run(tmp_path, "grid", [speed_row("h200", "gemm", one_wave, "cublas", "g", median_ms=ms)])
    write_run(tmp_path, "c", [ceiling_row("h200", "tensor_bf16_tflops", 720.0, "c")])
    out = show([str(tmp_path)])
    assert "## kernel rows above a roof" in out
    assert "cublas gemm 1024x4096x14336 bf16 nt (run g)" in out
