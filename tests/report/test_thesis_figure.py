"""harness/report/thesis_figure.py: the original study's two experiments, one figure per GPU,
each panel from one run (the fullest of that experiment), with what it skipped named in the
caption."""

from __future__ import annotations

import pandas as pd

from harness.report.figures import styled
from harness.report.thesis_figure import fullest_run, thesis_figures


def _row(run, when, provider, size, tflops, op="gemm", status="ok", device="H100", reason=None):
    family = "vendor" if provider in ("cublas", "sdpa-cudnn", "hipblaslt") else "own"
    axis = {"m": size, "n": size, "k": size} if op == "gemm" else {"q_len": size, "kv_len": size}
    return dict(
        op=op, status=status, sweep="thesis", run_id=run, timestamp=when, device_name=device,
        device_uuid="GPU-a", provider=provider, family=family, tflops=tflops,
        sm_clock_mhz=1980.0, reason=reason, **axis,
    )  # fmt: skip


def _rows():
    rows = []
    for size, scale in ((256, 1.0), (1024, 10.0), (4096, 50.0)):
        rows += [
            _row("thesis-new", "2026-12-06T08", "cublas", size, 14 * scale),
            _row("thesis-new", "2026-12-06T08", "own-triton", size, 13 * scale),
            _row("thesis-new", "2026-12-06T08", "own-triton-no-tensor-cores", size, 0.3 * scale),
            _row("thesis-new", "2026-12-06T08", "sdpa-cudnn", size, 12 * scale, op="attention"),
            _row("thesis-new", "2026-12-06T08", "own-triton", size, 13 * scale, op="attention"),
            _row(
                "thesis-new",
                "2026-12-06T08",
                "hipblaslt",
                size,
                None,
                status="skipped",
                reason="runs on amd, not nvidia",
            ),  # fmt: skip
            _row("thesis-old", "2026-12-01T08", "own-cutlass", size, 99 * scale),  # older run
        ]
    return pd.DataFrame(rows)


def test_each_panel_draws_the_run_with_most_ok_rows_of_its_experiment():
    rows = _rows()
    gemm = rows[rows["op"] == "gemm"]
    assert fullest_run(gemm) == "thesis-new"  # 9 ok GEMM rows against thesis-old's 3
    # a later run of two providers (the vendors' wheels alone) does not hide the ladder
    later = pd.DataFrame(
        [_row("thesis-fa4", "2026-12-09", p, 256, 1.0, op="attention") for p in ("a", "b")]
    )
    assert fullest_run(pd.concat([rows[rows["op"] == "attention"], later])) == "thesis-new"
    # of equals, the newest
    again = gemm[gemm["run_id"] == "thesis-new"].assign(run_id="thesis-z", timestamp="2026-12-10")
    assert fullest_run(pd.concat([gemm, again])) == "thesis-z"
    assert fullest_run(rows[rows["status"] != "ok"]) is None


def test_one_figure_per_gpu_names_its_run_and_what_it_skipped(tmp_path):
    df = pd.concat(
        [
            _rows(),
            pd.DataFrame([_row("t2", "2026-12-02", "cublas", 256, 5.0, device="H200")]),
            # another sweep's rows are not the study's
            pd.DataFrame([_row("x", "2026-12-09", "cublas", 256, 5.0)]).assign(sweep="gemm"),
        ]
    )
    with styled():
        figures = thesis_figures(df, tmp_path)
    assert [f.stem for f in figures] == ["thesis-h100", "thesis-h200"]
    h100 = figures[0]
    assert h100.png.is_file() and h100.svg.is_file()
    assert "run thesis-new" in h100.caption and "thesis-old" not in h100.caption
    assert "Not drawn: hipblaslt (runs on amd, not nvidia)." in h100.caption
    assert "counted once" in h100.caption and "15 ok rows" in h100.caption
    assert "fp32 reference" in h100.caption and "CK's own" not in h100.caption
    svg = h100.svg.read_text()
    assert "own-triton-no-tensor-cores" in svg and "own-cutlass" not in svg  # the old run's


def test_no_thesis_rows_no_figure(tmp_path):
    with styled():
        assert thesis_figures(_rows().assign(sweep="gemm_square"), tmp_path) == []
