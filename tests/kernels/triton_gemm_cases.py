"""What the own Triton GEMM's CPU tests share: operands, the fp32 reference, tolerances per
dtype and pretend targets (conftest.py's `fresh_gemm_tune` seeds and clears the tuner's cache)."""

from __future__ import annotations

import os

os.environ.setdefault("TRITON_INTERPRET", "1")


import pytest  # noqa: E402
import torch  # noqa: E402
from harness_kernels.triton.gemm_candidates import (  # noqa: E402
    DEEP_CANDIDATES,
    DEEP_TWINS,
    MAX_CANDIDATES,
    REDUCE_APART_CANDIDATES,
    STREAM_K_CANDIDATES,
)
from harness_kernels.triton.gemm_target import KernelTarget  # noqa: E402

# stream-K twins and one-wave deep configs ride beyond the cap
MAX_LISTED = (
    MAX_CANDIDATES + STREAM_K_CANDIDATES + REDUCE_APART_CANDIDATES + DEEP_CANDIDATES + DEEP_TWINS
)

FP8 = torch.float8_e4m3fn
# Relative Frobenius error allowed per input dtype: output rounding (bf16 8 bits, fp16 11 bits),
# tf32's 10-bit mantissa, exact fp32 under "ieee".
TOL = {torch.float16: 2e-3, torch.bfloat16: 1e-2, "tf32": 3e-3, "ieee": 1e-5, FP8: 1e-2}
# K per dtype: not a multiple of the interpreter's BLOCK_K, but 16-byte aligned rows (TMA on).
K_FOR = {torch.float32: 52, torch.float16: 56, torch.bfloat16: 56, FP8: 80}


# Tests that launch kernels on CPU tensors need the interpreter (a GPU run of the suite with
# TRITON_INTERPRET=0 skips them; test_triton_gemm.py's GPU smoke test covers that case).
needs_interpreter = pytest.mark.skipif(
    os.environ.get("TRITON_INTERPRET") != "1", reason="runs kernels under TRITON_INTERPRET=1"
)


def _rel_err(out: torch.Tensor, ref: torch.Tensor) -> float:
    return (torch.linalg.vector_norm(out.float() - ref) / torch.linalg.vector_norm(ref)).item()


def _operands(m: int, n: int, k: int, dtype: torch.dtype, b_col: bool):
    """Fresh random a [M, K] and b [K, N] (b column-major when b_col), plus fp8 scales."""
    a = torch.randn(m, k).to(dtype)
    b = torch.randn(n, k).to(dtype).t() if b_col else torch.randn(k, n).to(dtype)
    scales = {}
    if dtype == FP8:
        scales = {"a_scale": torch.tensor(0.5), "b_scale": torch.tensor([1.25])}
    return a, b, scales


def _reference(a, b, scales) -> torch.Tensor:
    ref = a.float() @ b.float()
    if scales:
        ref = ref * (scales["a_scale"].item() * scales["b_scale"].item())
    return ref


def _run(launch) -> torch.Tensor:
    """Poison the preallocated output, launch, and return it (so skipped tiles show as NaN)."""
    launch.out.fill_(float("nan"))
    return launch()


DTYPE_CASES = [
    pytest.param(torch.float16, "tf32", id="fp16"),
    pytest.param(torch.bfloat16, "tf32", id="bf16"),
    pytest.param(torch.float32, "tf32", id="fp32-tf32"),
    pytest.param(torch.float32, "ieee", id="fp32-ieee"),
    pytest.param(FP8, "tf32", id="fp8e4m3"),
]


def _pretend(target: str):
    from harness_kernels.triton.aot import TARGETS

    return TARGETS[target][1]


# A pretend H200 for the config search: 132 SMs, 227 KB of opt-in shared memory per block.
H200 = KernelTarget("cuda", "sm_90", 90, "fake H200", 132, 232448)
