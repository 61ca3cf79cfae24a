"""Fixtures: the synthetic dataset of report_fixtures.py (two GPUs, ceilings, a ladder, rows
that are not ok, smoke and CPU rows) and the report built from it once per session."""

import pytest
from report_fixtures import (
    LADDER,
    ceiling_row,
    smoke_rows,
    speed_row,
    workload_rows,
    write_run,
)

from harness.workloads import get_workload


@pytest.fixture(scope="session")
def dataset(tmp_path_factory):
    """Root folder holding the synthetic runs."""
    root = tmp_path_factory.mktemp("results")
    w = get_workload("llama3_8b_decode")
    h200 = workload_rows("h200", "h200-decode", w.batches, wrong_at=512)
    h200 += [
        speed_row("h200", "gemm", LADDER, p, "h200-decode")
        for p in ("cublas", "own-triton", "own-triton-no-tma", "own-triton-no-pipeline")
    ]
    h200.append(
        speed_row(
            "h200",
            "gemm",
            {**LADDER, "dtype": "fp8_e4m3", "layout": "nt"},
            "hipblaslt",
            "h200-decode",
            status="skipped",
            reason="runs on amd, not nvidia",
        )
    )
    h200.append(
        speed_row(
            "h200",
            "gemm",
            {**LADDER, "m": 4096},
            "own-triton",
            "h200-decode",
            status="error",
            reason="CUDA out of memory",
        )
    )
    ceilings = [
        ceiling_row("h200", m, v, "h200-ceilings")
        for m, v in (
            ("hbm_read_gbps", 4300.0),
            ("hbm_copy_gbps", 4100.0),
            ("l2_read_gbps", 11000.0),
            ("tensor_bf16_tflops", 760.0),
            ("tensor_fp8_tflops", 1350.0),
        )
    ]
    write_run(root, "h200-decode", h200)
    write_run(root, "h200-ceilings", ceilings)
    write_run(root, "h100-decode", workload_rows("h100", "h100-decode", (1, 2, 4, 8, 16)))
    # Rows no headline may show: a smoke sweep on the H200 (run.json says so), the CPU path, and
    # a tiny point of a run that records no sweep.
    write_run(root, "h200-smoke", smoke_rows("h200", "h200-smoke"), sweep="smoke")
    write_run(root, "cpu-smoke", smoke_rows("cpu", "cpu-smoke", ("fp32",)), sweep="gemm_llama")
    write_run(root, "h200-adhoc", smoke_rows("h200", "h200-adhoc", ("bf16",)))
    return root


@pytest.fixture(scope="session")
def built(dataset, tmp_path_factory):
    """The report of the synthetic dataset (built once per session)."""
    from harness.report import build_report

    return build_report([dataset], tmp_path_factory.mktemp("report"))


@pytest.fixture(scope="session")
def frame(dataset):
    """The synthetic rows as one frame (read once)."""
    from harness.report.data import load

    return load([dataset])
