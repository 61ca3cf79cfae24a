"""On a GPU: the probes land in plausible ranges against the datasheet (run with
TRITON_INTERPRET unset: `TRITON_INTERPRET=0 pytest -m gpu tests/microbench`)."""

import pytest

from harness.device import get_device
from harness.measure.point import measure_point
from harness.measure.protocol import Protocol
from harness.problems.microbench import FmaProblem, LatencyProblem, MemoryProblem
from harness.providers import load_all
from harness.report.datasheet import lookup

pytestmark = pytest.mark.gpu
QUICK = Protocol(min_samples=5, max_samples=50, max_time_s=1.0, min_time_s=0.2, warmup_ms=100)


def measure(problem, provider, protocol=QUICK):
    dev = get_device("cuda")
    row = measure_point(problem, load_all().get(problem.op, provider), dev, protocol)
    assert row["status"] == "ok", row["reason"]
    return row, lookup(dev.name, dev.sm_count)


def test_hbm_read_within_datasheet():
    row, spec = measure(MemoryProblem("read", 1 << 30), "triton-stream")
    if spec:
        assert 0.5 * spec.hbm_tbps * 1e3 < row["gbps"] < 1.05 * spec.hbm_tbps * 1e3


def test_l2_reread_beats_hbm():
    hbm, _ = measure(MemoryProblem("read", 1 << 30), "triton-stream")
    l2, _ = measure(MemoryProblem("read", 8 << 20, 1 << 30), "triton-stream")
    assert l2["gbps"] > 1.3 * hbm["gbps"]


def test_chase_latency_orders_l1_l2_hbm():
    hot = Protocol(
        l2="hot", min_samples=3, max_samples=10, max_time_s=1.0, min_time_s=0.1, warmup_ms=50
    )
    ns = [
        measure(LatencyProblem(ws, 128, hops), "triton-chase", hot)[0]["latency_ns"]
        for ws, hops in ((16 << 10, 1 << 18), (4 << 20, 1 << 18), (1 << 30, 1 << 16))
    ]
    assert 5 < ns[0] < ns[1] < ns[2] < 5000, ns


def test_fma_peak_within_datasheet():
    row, spec = measure(FmaProblem(69206016, 1024), "triton-fma")
    if spec:
        assert 0.4 * spec.fp32_tflops < row["tflops"] < 1.05 * spec.fp32_tflops
