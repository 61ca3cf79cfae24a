"""scripts/flush_series_table.py: one-pass read runs made with different L2 flush sizes (or
hot), side by side per working set, each over the last run given."""

from __future__ import annotations

import pytest
from report_fixtures import speed_row, write_run
from script_module import load_script

table = load_script("flush_series_table")

MIB = 2**20


def _run(root, run_id: str, flush_mib: int | None, ms_by_mib: dict[int, float]) -> str:
    rows = []
    for size, ms in ms_by_mib.items():
        # a fixture row made as a GEMM's (the fixtures price no memory op), then read as one
        p = {"m": size, "n": 64, "k": 64, "layout": "nn", "batch": 1, "dtype": "bf16"}
        row = speed_row("h200", "gemm", p, "triton-stream", run_id, median_ms=ms)
        row.update(op="memory", working_set_bytes=size * MIB, metric="read")
        row.update(l2="hot" if flush_mib is None else "cold")
        row.update(l2_flush_bytes=None if flush_mib is None else flush_mib * MIB)
        rows.append(row)
    return str(write_run(root, run_id, rows))


def test_columns_name_each_runs_flush_and_ratios_are_over_the_last(tmp_path, capsys):
    hot = _run(tmp_path, "hot", None, {16: 0.006, 128: 0.033})
    f2 = _run(tmp_path, "f2", 120, {16: 0.008, 128: 0.034})
    f8 = _run(tmp_path, "f8", 480, {16: 0.010, 128: 0.034})
    got = table.series([hot, f2, f8])
    assert list(got.columns) == ["hot", "120MiB", "480MiB"]
    assert list(got.index) == ["16 MiB", "128 MiB"]
    # the fixture's median is of samples drawn around the one given
    assert got.loc["16 MiB", "120MiB"] == pytest.approx(8.0, rel=0.02)
    assert table.main([hot, f2, f8]) == 0
    out = capsys.readouterr().out
    assert "over 480MiB" in out and "0.8" in out  # 16 MiB: 8 us over 10


def test_a_run_without_memory_rows_is_refused(tmp_path):
    p = {"m": 1, "n": 64, "k": 64, "layout": "nn", "batch": 1, "dtype": "bf16"}
    gemm = str(write_run(tmp_path, "g", [speed_row("h200", "gemm", p, "cublas", "g")]))
    f2 = _run(tmp_path, "f2", 120, {16: 0.008})
    with pytest.raises(SystemExit, match="no ok memory rows"):
        table.series([f2, gemm])
    assert table.main([f2]) == 2
