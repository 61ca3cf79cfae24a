"""RunOptions: the names tuned choices are stored under, and the swizzle argument that carries
the raster order to sm90_gemm.cu (whose unpacking is GPU-tested in test_gpu_cutlass.py)."""

import pytest
from harness_kernels.cutlass.gemm import RASTERS, RunOptions


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
    for bad in (dict(swizzle=0), dict(swizzle=256), dict(raster="diagonal")):
        with pytest.raises(ValueError):
            RunOptions(**bad)
