"""scripts/gemm_ncu_compare.py: the config spelling its command line takes (the launches need a
GPU; the names must mean the configs the tuner records)."""

from __future__ import annotations

import pytest
from script_module import load_script

ncu = load_script("gemm_ncu_compare")


def test_config_names_parse_to_the_tuners_configs():
    from harness_kernels.triton.gemm_configs import GemmConfig

    assert ncu.parse_config("32x128x128s5k2") == GemmConfig(
        32, 128, 128, num_warps=4, num_stages=5, split_k=2, programs_per_sm=1
    )
    assert ncu.parse_config("16x64x128s5p2") == GemmConfig(
        16, 64, 128, num_stages=5, programs_per_sm=2
    )
    assert ncu.parse_config("128x128x64s4w8").num_warps == 8
    apart = ncu.parse_config("128x256x64s4k7w8a")
    assert apart.reduce_apart and apart.split_k == 7 and apart.num_warps == 8
    assert not ncu.parse_config("128x256x64s4k7w8").reduce_apart


@pytest.mark.parametrize("text", ["32x64s9", "32x64x128", "32x64x128s9q2", "a"])
def test_bad_config_names_are_refused(text):
    with pytest.raises(ValueError, match="bad config"):
        ncu.parse_config(text)


def test_gluon_names_resolve_to_the_gluon_tuners_candidates():
    """gl:<name> is the Gluon candidate the tuner records by that name at the shape, the split
    twins and their in-place twins among them; an unknown name is refused with the list."""
    from harness_kernels.triton.gemm_gluon import config_name

    for name in ("64x144s6ppk2", "128x144s6k4", "64x144s6ppk2i", "128x128s6"):
        cfg = ncu.gluon_config(f"gl:{name}", 256, 2304, 16384, 132)
        assert config_name(cfg) == name
    assert ncu.gluon_config("gl:64x144s6ppk2i", 256, 2304, 16384, 132)["SUM_IN_PLACE"]
    with pytest.raises(ValueError, match="no Gluon candidate"):
        ncu.gluon_config("gl:64x144s6ppk9", 256, 2304, 16384, 132)


def test_cutlass_names_carry_their_run_options():
    from harness_kernels.cutlass.gemm import CONFIGS, RunOptions

    config, options = ncu.cutlass_spec("cl:sm90-streamk-128x144-c2x1:split-kx4/sw1/nondet")
    assert config is CONFIGS["sm90-streamk-128x144-c2x1"]
    assert options == RunOptions("split-k", 4, reduction="nondeterministic")
    assert ncu.cutlass_spec("cl:sm90-pingpong-128x128")[1] == RunOptions()
    with pytest.raises(ValueError, match="no own CUTLASS config"):
        ncu.cutlass_spec("cl:sm90-coop-999x999:heuristic/sw1")


def test_fp8_vendor_rows_are_the_two_cublaslt_providers():
    """--fp8 launches `_scaled_mm` as cublaslt-fp8 and cublaslt-fp8-fastaccum call it (per-tensor
    scales, bf16 out): both give the dequantised product; bf16 launches cuBLAS's matmul alone."""
    import torch

    from harness.problems.gemm import quantize_fp8

    gen = torch.Generator().manual_seed(0)
    a, w = torch.randn(32, 64, generator=gen), torch.randn(48, 64, generator=gen)
    (qa, sa), (qw, sb) = quantize_fp8(a), quantize_fp8(w)
    ref = (qa.float() * sa) @ (qw.float() * sb).t()
    rows = ncu.vendor_launches(qa, qw, sa, sb)
    assert [label for label, _ in rows] == ["cublaslt-fp8", "cublaslt-fp8-fastaccum"]
    for _, launch in rows:
        out = launch()
        assert out.dtype == torch.bfloat16
        assert ((out.float() - ref).norm() / ref.norm()).item() < 1e-2
    bf16 = ncu.vendor_launches(a.bfloat16(), w.bfloat16(), None, None)
    assert [label for label, _ in bf16] == ["cublas"]


def test_gluon_names_resolve_at_fp8_widths():
    """An fp8 Gluon tile (128-byte K rows: BK 128) is named as the fp8 tuner records it."""
    from harness_kernels.triton.gemm_gluon import config_name

    cfg = ncu.gluon_config("gl:256x128s4h", 4096, 6144, 4096, 132, in_bytes=1)
    assert config_name(cfg) == "256x128s4h" and cfg["BK"] == 128 and cfg["C_HALVES"]
    assert ncu.gluon_config("gl:128x192s4", 4096, 6144, 4096, 132)["BK"] == 64  # bf16


def test_a_gluon_tile_the_tuner_does_not_time_is_pinned_from_every_legal_tile():
    """prepare_gluon_matmul takes a pinned tile only from the list its `per_schedule` makes: the
    tuner's few where it times the tile, else every legal one (fp8 128x192s4 at
    4096x8192x8192 is legal there but not timed: session 85's first ncu call refused it)."""
    from harness_kernels.triton.gemm_gluon import MAX_CANDIDATES, gluon_gemm_configs

    shape = (4096, 8192, 8192, 132)
    untimed = ncu.gluon_config("gl:128x192s4", *shape, in_bytes=1)
    assert ncu.tuner_per_schedule(untimed, *shape, in_bytes=1) is None
    assert untimed in gluon_gemm_configs(4096, 8192, 8192, 1, 2, 132, per_schedule=None)
    timed = ncu.gluon_config("gl:128x128s6", *shape, in_bytes=1)
    assert ncu.tuner_per_schedule(timed, *shape, in_bytes=1) == MAX_CANDIDATES
