"""scripts/preset_ops_table.py: a model preset run's non-GEMM ops by batch, each against own
Triton (the fastest vendor row over own Triton's, same point), attention also in GB/s."""

from __future__ import annotations

import pandas as pd
from script_module import load_script

table = load_script("preset_ops_table")


def _row(op: str, provider: str, size: int, us: float, status: str = "ok") -> dict:
    axis = table.BATCH_AXIS.get(op, "m")
    other = "m" if axis == "batch" else "batch"
    return {
        "op": op,
        "provider": provider,
        "status": status,
        axis: float(size),
        other: None,
        "latency_ms_median": us / 1e3,
        "min_bytes": 4e6,
    }


def test_each_op_by_its_axis_with_the_fastest_vendor_over_own():
    rows = pd.DataFrame(
        [
            _row("gemm", "cublas", 1, 10.0),  # the GEMMs are gemm_ratio_table's
            _row("attention", "own-triton", 1, 10.0),
            _row("attention", "sdpa-cudnn", 1, 12.0),
            _row("attention", "sdpa-flash", 1, 20.0),
            _row("attention", "own-triton", 16, 40.0),
            _row("attention", "sdpa-cudnn", 16, 38.0),
            _row("attention", "flash-attn", 16, 1.0, status="skipped"),
            _row("silu_mul", "own-triton", 4, 4.0),
            _row("silu_mul", "torch-compile", 4, 3.0),
            _row("silu_mul", "torch-eager", 4, 8.0),
        ]
    )
    tables = dict(table.op_tables(rows))
    assert list(tables) == [
        "attention, median us (by batch)",
        "attention, GB/s (minimum bytes / median)",
        "attention, fastest vendor / own-triton (above 1: own faster)",
        "silu_mul, median us (by m)",
        "silu_mul, fastest vendor / own-triton (above 1: own faster)",
    ]
    us = tables["attention, median us (by batch)"]
    assert list(us.index) == [1, 16] and "flash-attn" not in us.columns  # skipped rows left out
    ratio = tables["attention, fastest vendor / own-triton (above 1: own faster)"]
    assert ratio.loc[1, "ratio"] == 1.2 and ratio.loc[1, "fastest vendor"] == "sdpa-cudnn"
    assert ratio.loc[16, "ratio"] == 0.95
    assert tables["attention, GB/s (minimum bytes / median)"].loc[1, "own-triton"] == 400.0
    silu = tables["silu_mul, fastest vendor / own-triton (above 1: own faster)"]
    assert silu.loc[4, "ratio"] == 0.75 and silu.loc[4, "fastest vendor"] == "torch-compile"


def test_a_second_width_is_an_index_level_not_averaged_and_a_point_twice_is_refused(
    capsys, monkeypatch
):
    """layer_ops measures SiLU at two widths a row count: each width keeps its own row (session
    86's table printed their mean); two runs holding one point are refused, not averaged."""
    rows = pd.DataFrame(
        [
            {**_row("silu_mul", prov, 8192, us), "n": float(n)}
            for n, own, comp in ((14336, 168.0, 160.0), (18944, 222.0, 211.0))
            for prov, us in (("own-triton", own), ("torch-compile", comp))
        ]
    )
    tables = dict(table.op_tables(rows))
    us = tables["silu_mul, median us (by m x n)"]
    assert us.loc[(8192, 14336), "own-triton"] == 168.0
    assert us.loc[(8192, 18944), "own-triton"] == 222.0
    ratio = tables["silu_mul, fastest vendor / own-triton (above 1: own faster)"]
    assert ratio.loc[(8192, 18944), "ratio"] == round(211.0 / 222.0, 3)
    twice = pd.concat([rows, rows.iloc[:1]])
    monkeypatch.setattr(table, "read_rows", lambda *paths, columns=None: twice)
    assert table.main(["a", "b"]) == 2
    assert "measured twice" in capsys.readouterr().err


def test_cli_prints_every_table_and_refuses_a_run_without_ops(tmp_path, capsys, monkeypatch):
    rows = pd.DataFrame([_row("rope", "own-triton", 8, 5.0), _row("rope", "torch-eager", 8, 40.0)])
    monkeypatch.setattr(table, "read_rows", lambda *paths, columns=None: rows)
    assert table.main([str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "rope, median us (by m)" in out and "8    8.0    torch-eager" in out
    monkeypatch.setattr(table, "read_rows", lambda *paths, columns=None: rows.iloc[:0])
    assert table.main([str(tmp_path)]) == 1
    assert table.main([]) == 2
