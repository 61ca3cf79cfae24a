"""On a GPU: cold L2 by rotating input sets under graph replay agrees with cold L2 by a flush.

The kernel: a decode-shaped GEMM (M=128) whose ~50 MB of inputs fit a 60 MB L2, so hot and cold
differ and the ways of making it cold can be compared. The read flush (the default) must agree
with rotation; the write flush (zero_()) is printed beside them: it leaves dirty lines whose
write-back lands inside the next kernel's window.
"""

import pytest

from harness.device import get_device
from harness.measure.point import measure_point
from harness.measure.protocol import Protocol
from harness.measure.timer import L2Flusher
from harness.problems import GemmProblem
from harness.providers import load_all

pytestmark = pytest.mark.gpu


def test_graph_rotation_matches_read_flush_on_one_kernel():
    dev = get_device("cuda")
    prov = load_all().get("gemm", "cublas")
    problem = GemmProblem(128, 6144, 4096, "bf16", "nt")
    base = dict(min_samples=50, max_time_s=2.0, min_time_s=0.3, rse_target=0.005, warmup_ms=200)
    events, graph = (
        Protocol(timer="cuda-events", l2="cold", **base),
        Protocol(timer="cuda-graph", l2="cold", **base),
    )
    rows = {
        "read-flush": measure_point(
            problem, prov, dev, events, flusher=L2Flusher(dev.torch_device, dev.l2_bytes)
        ),
        "write-flush": measure_point(
            problem,
            prov,
            dev,
            events,
            flusher=L2Flusher(dev.torch_device, dev.l2_bytes, mode="write"),
        ),
        "graph-rotation": measure_point(problem, prov, dev, graph),
        "hot": measure_point(problem, prov, dev, Protocol(timer="cuda-events", l2="hot", **base)),
    }
    for name, r in rows.items():
        assert r["status"] == "ok", (name, r["reason"])
        print(
            f"\n{name:15s} {r['latency_ms_median'] * 1e3:7.2f} us  ({r['gbps']:.0f} GB/s, "
            f"{r['rotation_sets']} sets, l2={r['l2']})",
            end="",
        )
    print()
    graph_row, flush_row = rows["graph-rotation"], rows["read-flush"]
    assert graph_row["l2"] == "cold" and graph_row["rotation_sets"] >= 2
    assert graph_row["latency_ms_median"] == pytest.approx(flush_row["latency_ms_median"], rel=0.10)
