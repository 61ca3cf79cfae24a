"""Providers that kill the measuring process on one point (tests only).

Loaded the way any provider from outside the package is: HARNESS_EXTRA_PROVIDERS=fault_providers
with this folder on PYTHONPATH, so the child processes a sweep starts register them too (a
provider registered only in the test process would be unknown to them)."""

import ctypes
import os

from harness.providers.registry import Prepared, register


def _victim(problem) -> bool:
    return problem.m == 33 and problem.dtype == "fp32" and problem.layout == "nn"


def _matmul(inputs):
    return Prepared(lambda: inputs["a"].float() @ inputs["b"].float())


@register("segfaults", "gemm", "own", ("cpu",))
def segfaults(problem, inputs, device):
    """torch matmul, but reads address 0 on one shape, as a broken ctypes-loaded kernel would."""
    if _victim(problem):
        ctypes.string_at(0)
    return _matmul(inputs)


@register("exits", "gemm", "own", ("cpu",))
def exits(problem, inputs, device):
    """torch matmul, but calls os._exit(3) on one shape (no exception, no cleanup)."""
    if _victim(problem):
        os._exit(3)
    return _matmul(inputs)
