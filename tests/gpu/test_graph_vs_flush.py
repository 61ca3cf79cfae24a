"""On a GPU: cold L2 by rotating input sets under graph replay agrees with cold L2 by flushing.

The kernel: a decode-shaped GEMM (M=128) whose 50 MB of inputs fit a 60 MB L2, so hot and cold
differ and the two ways of making it cold can be compared. Prints all three medians.
"""

import pytest

from harness.device import get_device
from harness.measure.point import measure_point
from harness.measure.protocol import Protocol
from harness.problems import GemmProblem
from harness.providers import load_all

pytestmark = pytest.mark.gpu


def test_graph_rotation_matches_flush_on_one_kernel():
    dev = get_device("cuda")
    prov = load_all().get("gemm", "cublas")
    problem = GemmProblem(128, 6144, 4096, "bf16", "nt")
    base = dict(min_samples=50, max_time_s=2.0, rse_target=0.005, warmup_ms=200)
    flush = measure_point(problem, prov, dev, Protocol(timer="cuda-events", l2="cold", **base))
    graph = measure_point(problem, prov, dev, Protocol(timer="cuda-graph", l2="cold", **base))
    hot = measure_point(problem, prov, dev, Protocol(timer="cuda-events", l2="hot", **base))
    for r in (flush, graph, hot):
        assert r["status"] == "ok", r["reason"]
    print(
        f"\nflush-cold {flush['latency_ms_median'] * 1e3:.2f} us, graph-rotation-cold "
        f"{graph['latency_ms_median'] * 1e3:.2f} us ({graph['rotation_sets']} sets), "
        f"hot {hot['latency_ms_median'] * 1e3:.2f} us"
    )
    assert graph["l2"] == "cold" and graph["rotation_sets"] >= 2
    assert graph["latency_ms_median"] == pytest.approx(flush["latency_ms_median"], rel=0.10)
