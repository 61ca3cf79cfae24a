"""On a GPU: a vendor row records the kernels its library launched (name, grid, block), and an
own row does not (its own config says what it ran). harness.measure.kernel_names. Written in
session 32 after that session's device time was spent: not yet run on a GPU."""

import json

import pytest

from harness.device import get_device
from harness.measure.point import measure_point
from harness.measure.protocol import Protocol
from harness.problems import GemmProblem
from harness.providers import load_all

pytestmark = pytest.mark.gpu

QUICK = Protocol(min_samples=5, max_samples=50, max_time_s=0.2, min_time_s=0.05, warmup_ms=20)


@pytest.mark.parametrize(("m", "n", "k"), [(256, 10240, 8192), (64, 4096, 14336)])
def test_cublas_row_names_its_kernels(m, n, k):
    registry, device = load_all(), get_device("cuda")
    problem = GemmProblem(m=m, n=n, k=k, dtype="bf16", layout="nt")
    row = measure_point(problem, registry.get("gemm", "cublas"), device, QUICK)
    assert row["status"] == "ok", row["reason"]
    kernels = json.loads(row["provider_config"])["kernels"]
    print(m, n, k, kernels)
    assert 1 <= len(kernels) <= 4
    assert all(kn["name"] and kn["grid"].count("x") == 2 for kn in kernels)
    # cuBLAS's GEMM kernels on Hopper: nvjet or sm90_xmma/cutlass names
    assert any(any(t in kn["name"] for t in ("nvjet", "gemm", "xmma")) for kn in kernels)


def test_own_row_records_no_vendor_kernels():
    registry, device = load_all(), get_device("cuda")
    problem = GemmProblem(m=128, n=4096, k=4096, dtype="bf16", layout="nt")
    row = measure_point(problem, registry.get("gemm", "own-triton"), device, QUICK)
    assert row["status"] == "ok", row["reason"]
    assert "kernels" not in json.loads(row["provider_config"])
