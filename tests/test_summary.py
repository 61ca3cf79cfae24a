"""The terminal table of a run: rates with an SI unit per row, never scientific notation."""

import pandas as pd

from harness.summary import fixed, run_table, si


def test_si_picks_the_prefix_per_value():
    assert si(1.173e-6, "FLOP/s", 1e12) == "1.173 MFLOP/s"
    assert si(697.2, "FLOP/s", 1e12) == "697.2 TFLOP/s"
    assert si(1412, "FLOP/s", 1e12) == "1412 TFLOP/s"  # no P: peaks read as datasheets write them
    assert si(4650, "B/s", 1e9) == "4.650 TB/s"
    assert si(0.02643, "B/s", 1e9) == "26.43 MB/s"
    assert si(999.96e6, "FLOP/s") == "1.000 GFLOP/s"  # rounded up into the next prefix
    assert si(0.0, "B/s") == "0 B/s"
    assert si(float("nan"), "B/s") == "" and si(None, "B/s") == ""


def test_fixed_is_positional():
    assert (
        fixed(0.0001234) == "0.0001234" and fixed(12.34567) == "12.35" and fixed(4321.9) == "4322"
    )


def test_run_table_shows_units_and_keeps_the_reason():
    rows = pd.DataFrame(
        {
            "op": ["gemm", "gemm", "gemm"],
            "problem": ["gemm 1x64x64 fp32 nn", "gemm 8192x8192x8192 bf16 nn", "gemm 1x64x64"],
            "provider": ["torch-cpu", "cublas", "cublas"],
            "status": ["ok", "ok", "skipped"],
            "latency_ms_median": [0.003731, 1.577, float("nan")],
            "tflops": [2.196e-6, 697.2, float("nan")],
            "gbps": [4.529, 255.3, float("nan")],
            "rel_err": [0.0, 1.2e-3, float("nan")],
            "reason": [None, None, "runs on nvidia, not cpu"],
        }
    )
    text = run_table(rows)
    assert "2.196 MFLOP/s" in text and "697.2 TFLOP/s" in text
    assert "4.529 GB/s" in text and "255.3 GB/s" in text and "0.003731" in text
    assert "runs on nvidia, not cpu" in text and "e-06" not in text
