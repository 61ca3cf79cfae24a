"""harness.report.figures: series colours that mean the same provider in every figure."""


def test_a_headline_provider_keeps_its_colour_in_every_figure():
    """own-triton is blue and cuBLAS green whatever else a figure draws; a name whose colour
    another took (two vendor rows of fp8) gets a free one, and no two series share one."""
    from harness.report.figures import SERIES_COLORS, series_colors

    a = series_colors(["own-cutlass", "own-triton", "cublas"])
    b = series_colors(["cublas", "own-triton", "sdpa-flash", "zeta"])
    assert a["own-triton"] == b["own-triton"] == SERIES_COLORS[0]
    assert a["cublas"] == b["cublas"] == SERIES_COLORS[2]
    fp8 = series_colors(["cublaslt-fp8", "cublas", "own-triton", "x", "y", "z", "w", "v"])
    assert len(set(fp8.values())) == 8 and fp8["cublaslt-fp8"] == SERIES_COLORS[2]
