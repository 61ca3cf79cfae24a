"""harness/report/gemm_by_m_figure.py: issue 20.1's speedups by M, one figure per GPU."""

from __future__ import annotations

import pandas as pd
import pytest

from harness.report.figures import styled
from harness.report.gemm_by_m_figure import gemm_by_m_figures, latest_ratios, run_ratios


def _row(run, when, provider, ms, m=16, uuid="GPU-a", device="H200", sweep="gemm_llama"):
    return dict(
        op="gemm",
        dtype="bf16",
        status="ok",
        sweep=sweep,
        run_id=run,
        timestamp=when,
        device_name=device,
        device_uuid=uuid,
        provider=provider,
        family="vendor" if provider.startswith("cublas") else "own",
        m=m,
        n=4096,
        k=4096,
        layout="nt",
        latency_ms_median=ms,
    )


def test_the_fastest_vendor_of_one_card_is_the_reference():
    rows = pd.DataFrame(
        [
            _row("r", "t1", "cublas", 0.12),
            _row("r", "t1", "cublaslt", 0.10),  # the faster vendor row is the reference
            _row("r", "t1", "own-triton", 0.08),
            _row("r", "t1", "own-cutlass", 0.125),
            _row("r", "t1", "own-triton-no-tma", 0.2),  # a rung: not drawn
            _row("r", "t1", "cublas", 0.10, m=64),
            _row("r", "t1", "own-triton", 0.10, m=64, uuid="GPU-b"),  # another card: no ratio
        ]
    )
    ratios = run_ratios(rows).set_index("own")
    assert set(ratios.index) == {"own-triton", "own-cutlass"}  # M 64 has no like-for-like pair
    assert ratios.loc["own-triton", "speedup"] == pytest.approx(1.25)
    assert ratios.loc["own-cutlass", "speedup"] == pytest.approx(0.8)
    assert set(ratios["reference"]) == {"cublaslt"}


def test_each_shape_comes_from_its_latest_run_and_each_gpu_gets_a_figure(tmp_path):
    df = pd.DataFrame(
        [
            _row("old", "2026-11-27", "cublas", 0.10),
            _row("old", "2026-11-27", "own-triton", 0.125),
            _row("old", "2026-11-27", "cublas", 0.10, m=256),
            _row("old", "2026-11-27", "own-triton", 0.10, m=256),
            _row("new", "2026-11-28", "cublas", 0.10),
            _row("new", "2026-11-28", "own-triton", 0.095),
            _row("x", "2026-11-28", "cublas", 0.1, sweep="gemm_square"),  # another sweep
            _row("x", "2026-11-28", "own-triton", 0.05, sweep="gemm_square"),
            _row("h", "2026-11-28", "cublas", 0.1, device="H100"),
            _row("h", "2026-11-28", "own-cutlass", 0.1, device="H100"),
        ]
    )
    latest = latest_ratios(df[(df["device_name"] == "H200") & (df["sweep"] == "gemm_llama")])
    by_m = latest.set_index("m")
    assert by_m.loc[16, "run"] == "new" and by_m.loc[16, "speedup"] == pytest.approx(0.10 / 0.095)
    assert by_m.loc[256, "run"] == "old"
    with styled():
        figures = gemm_by_m_figures(df, tmp_path)
    assert [f.stem for f in figures] == ["gemm-by-m-h100", "gemm-by-m-h200"]
    assert all(f.png.is_file() and f.svg.is_file() for f in figures)
    assert figures[1].caption.endswith("card: new, old.")  # not the gemm_square run


def test_only_gemm_llamas_own_shapes_are_drawn(tmp_path):
    """`sweep=gemm_llama` with a router's N 8 writes rows named gemm_llama: not the grid."""
    from harness.report.gemm_by_m_figure import preset_shapes

    shapes = preset_shapes()
    assert len(shapes) == 120 and (16, 4096, 4096) in shapes and (16, 8, 4096) not in shapes
    router = [
        {**_row("r", "t1", p, ms), "n": 8} for p, ms in (("cublas", 0.1), ("own-triton", 0.2))
    ]
    df = pd.DataFrame([_row("g", "t1", "cublas", 0.1), _row("g", "t1", "own-triton", 0.1), *router])
    with styled():
        (figure,) = gemm_by_m_figures(df, tmp_path)
    assert "card: g." in figure.caption and "r" not in figure.caption.split("card: ")[1]
