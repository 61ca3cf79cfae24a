"""scripts/ncu_table.py: an ncu `--csv --page details` log (the profiled script's prints and
ncu's ==PROF== lines first) pivoted to a row per launch and a column per metric."""

from __future__ import annotations

import lzma

import pytest
from script_module import load_script

ncu = load_script("ncu_table")

HEAD = '"ID","Kernel Name","Section Name","Metric Name","Metric Unit","Metric Value"'


def _line(i: int, kernel: str, metric: str, unit: str, value: str) -> str:
    return f'"{i}","{kernel}","Command line profiler metrics","{metric}","{unit}","{value}"'


LOG = "\n".join(
    [
        "==PROF== Connected to process 1",
        "256x2304x16384 bf16 nt; each label launched twice, in this order:",
        "  cublas   torch.matmul   rel err 1.66e-03",
        "==PROF== Disconnected from process 1",
        HEAD,
        _line(1, "_gemm_ws_kernel", "lts__t_bytes.sum", "byte", "232,044,992"),
        _line(1, "_gemm_ws_kernel", "gpu__time_duration.sum", "ns", "33,120"),
        _line(0, "nvjet_sm90_tst_144x128", "gpu__time_duration.sum", "ns", "29,280"),
        _line(0, "nvjet_sm90_tst_144x128", "lts__t_bytes.sum", "byte", "172,574,016"),
        _line(0, "nvjet_sm90_tst_144x128", "Duration", "ns", "29,280"),
        _line(1, "_gemm_ws_kernel", "Duration", "ns", "33,120"),
    ]
)


def test_one_row_per_launch_in_order_with_the_short_metric_names():
    found = ncu.table(LOG)
    assert list(found.columns) == ["ID", "Kernel Name", "time", "L2 bytes"]
    assert found["ID"].tolist() == [0, 1]
    assert found["time"].tolist() == [29280, 33120]  # ncu's thousands separators read
    assert found["L2 bytes"].tolist() == [172574016, 232044992]
    assert "Duration" in ncu.table(LOG, every=True).columns
    assert ncu.units(LOG)["time"] == "ns"


def test_kernels_are_kept_by_a_regular_expression_and_names_cut():
    found = ncu.table(LOG, kernels="^nvjet", width=5)
    assert found["Kernel Name"].tolist() == ["nvjet"]


def test_a_log_without_the_csv_header_is_refused():
    with pytest.raises(ValueError, match="no ncu CSV header"):
        ncu.table("==PROF== nothing profiled")


def test_xz_files_are_read_and_the_launch_order_printed(tmp_path, capsys):
    path = tmp_path / "ncu-x.csv.xz"
    path.write_bytes(lzma.compress(LOG.encode()))
    ncu.main([str(path)])
    out = capsys.readouterr().out
    assert "29,280" in out and "172,574,016" in out
    assert "launch order: in this order:" in out and "cublas" in out
