"""scripts/gemm_decode_probe.py without a GPU: the shapes it takes and the grid it times."""

from __future__ import annotations

import pytest
from harness_kernels.triton.gemm_configs import GemmConfig, shared_mem_bytes
from script_module import load_script

probe = load_script("gemm_decode_probe")

H100 = dict(num_sms=132, max_smem=232448)


def test_shapes_are_m_by_n_by_k():
    assert probe.parse_shape("16x4096x4096") == (16, 4096, 4096)
    for bad in ("16x4096", "0x4096x4096", "16x4096x4096x2", "ax4096x4096"):
        with pytest.raises(SystemExit):
            probe.parse_shape(bad)


@pytest.mark.parametrize("in_bytes", [1, 2])
def test_grid_fills_the_gpu_within_shared_memory(in_bytes):
    m, n, k = 16, 4096, 4096
    cfgs = probe.grid(m, n, k, in_bytes, **H100)
    assert len(cfgs) == len(set(cfgs)) > 20
    for c in cfgs:
        units = -(-m // c.block_m) * -(-n // c.block_n) * c.split_k
        assert 66 <= units <= 132 * c.programs_per_sm, c
        assert shared_mem_bytes(c, in_bytes, 2) * c.programs_per_sm <= H100["max_smem"], c
        assert c.num_stages <= -(-k // c.block_k) // c.split_k + 1, c
    # the tuner's fp8 deep configs at this shape (whole K at one 16x32 tile per SM, and 16x128
    # in 4 splits, both at 4 stages) are in the grid, with deeper twins of the first
    if in_bytes == 1:
        assert GemmConfig(16, 32, 256, 4, 4, split_k=1, programs_per_sm=1) in cfgs
        assert GemmConfig(16, 128, 256, 4, 4, split_k=4, programs_per_sm=1) in cfgs
        assert GemmConfig(16, 32, 256, 4, 16, split_k=1, programs_per_sm=1) in cfgs


def test_grid_walks_best_filling_first():
    cfgs = probe.grid(1, 4096, 4096, 1, **H100)
    fills = [min(1.0, -(-4096 // c.block_n) * c.split_k / (132 * c.programs_per_sm)) for c in cfgs]
    assert fills == sorted(fills, reverse=True)


def test_min_units_admits_cublaslts_64_cta_decode_grid():
    # The swapped grid at 4x4096x4096 (C^T: N=4096 rows of 64-row weight tiles, 4 tokens):
    # split 1 is 64 units, under half a wave, so only --min-units puts it in the grid.
    args = (4096, 4, 4096, 1, H100["num_sms"], H100["max_smem"], (64,), (16, 32))
    one_split = GemmConfig(64, 16, 256, 4, 4, split_k=1, programs_per_sm=1)
    assert one_split not in probe.grid(*args)
    cfgs = probe.grid(*args, min_units=32)
    assert one_split in cfgs
    assert all(-(-4096 // c.block_m) * c.split_k >= 32 for c in cfgs)


def test_max_rounds_admits_more_tiles_than_one_round_of_the_grid():
    # N 28672 swapped: 448 tiles of 64 weight rows, 224 of 128 (cuBLASLt's nvjet 128x8 tiles
    # there); one round of one program per SM holds neither
    args = (28672, 4, 4096, 1, H100["num_sms"], H100["max_smem"], (64, 128), (16, 32))
    assert not any(c.programs_per_sm == 1 for c in probe.grid(*args, min_units=32))
    cfgs = probe.grid(*args, min_units=32, max_rounds=4)
    assert {(64, 1), (128, 1)} <= {(c.block_m, c.split_k) for c in cfgs}
    assert all(-(-28672 // c.block_m) * c.split_k <= 4 * 132 * c.programs_per_sm for c in cfgs)


def test_a_contender_line_names_its_median_clock_when_nvml_read_one():
    assert probe.clock_note([1980, None, 1755, 1980]) == "1980 MHz"
    assert probe.clock_note([None, None]) == ""
    assert probe.sm_clock_mhz() is None or probe.sm_clock_mhz() > 0  # no GPU here: None
