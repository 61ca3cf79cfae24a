"""RunOptions: the names tuned choices are stored under, and the swizzle argument that carries
the raster order and the split-K reduction to sm90_gemm.cu (whose unpacking is GPU-tested in
test_gpu_cutlass.py)."""

import pytest
from harness_kernels.cutlass.gemm import RASTERS, REDUCTIONS, RunOptions


def test_names_without_a_raster_stay_as_they_were():
    assert str(RunOptions()) == "heuristic/sw1"
    assert str(RunOptions("split-k", 2, 4)) == "split-kx2/sw4"
    assert str(RunOptions(swizzle=8, raster="along-n")) == "heuristic/sw8/along-n"


def test_the_raster_rides_above_the_swizzle_byte():
    assert RunOptions(swizzle=8).packed_swizzle == 8
    for raster, code in RASTERS.items():
        packed = RunOptions(swizzle=4, raster=raster).packed_swizzle
        assert (packed & 0xFF, packed >> 8) == (4, code)


def test_options_outside_the_packing_are_refused():
    for bad in (
        dict(swizzle=0),
        dict(swizzle=256),
        dict(raster="diagonal"),
        dict(reduction="atomic"),
    ):
        with pytest.raises(ValueError):
            RunOptions(**bad)


def test_the_reduction_rides_in_the_third_byte_and_only_the_atomic_one_is_named():
    assert str(RunOptions("split-k", 4)) == "split-kx4/sw1"  # stored names unchanged
    nondet = RunOptions("split-k", 4, raster="along-m", reduction="nondeterministic")
    assert str(nondet) == "split-kx4/sw1/along-m/nondet"
    for reduction, code in REDUCTIONS.items():
        packed = RunOptions(swizzle=2, raster="along-n", reduction=reduction).packed_swizzle
        assert (packed & 0xFF, packed >> 8 & 0xFF, packed >> 16) == (2, RASTERS["along-n"], code)


def test_options_read_back_from_their_printed_form():
    for options in (
        RunOptions(),
        RunOptions("data-parallel", 1, 8),
        RunOptions("split-k", 4, 2),
        RunOptions(swizzle=4, raster="along-n"),
        RunOptions("split-k", 4, reduction="nondeterministic"),
        RunOptions("stream-k", 1, 8, "along-m", "nondeterministic"),
    ):
        assert RunOptions.parse(str(options)) == options
    with pytest.raises(ValueError, match="diagonal"):
        RunOptions.parse("heuristic/sw1/diagonal")
