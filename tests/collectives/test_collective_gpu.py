"""NCCL / RCCL on two GPUs through `harness run` (needs 2 GPUs; TRITON_INTERPRET=0)."""

import pytest
import torch

from harness import store
from harness.cli import main
from harness.measure.point import deadline

pytestmark = pytest.mark.gpu


def _run(tmp_path, sweep: str, sizes: str, run_id: str):
    """`harness run` of a collectives preset on this host's GPUs, short sampling; its rows."""
    provider = "rccl" if torch.version.hip else "nccl"
    args = [
        "run",
        f"sweep={sweep}",
        f"providers=[{provider}]",
        "progress=false",
        f"sweep.groups.0.product.message_bytes={sizes}",
        "protocol.max_time_s=0.5",
        "protocol.min_time_s=0.1",
        "protocol.warmup_ms=50",
        f"results_dir={tmp_path}",
        f"run_id={run_id}",
    ]
    with deadline(300):
        assert main(args) == 0
    return store.read_rows(tmp_path / run_id)


@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs 2 GPUs")
def test_two_gpu_collectives_are_ok_rows_with_busbw(tmp_path):
    df = _run(tmp_path, "collectives", "[4096,16777216]", "gpu")
    assert len(df) == 8 and set(df.status) == {"ok"}, df[["problem", "status", "reason"]]
    assert (df.timer == "cuda-events").all() and (df.device_index == 0).all()
    big = df[df.message_bytes == 16777216]
    assert (big.busbw_gbps > 10).all()  # any GPU link moves 16 MiB at well over 10 GB/s


@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs 2 GPUs")
def test_graph_replayed_all_reduce_is_ok_and_says_how_many_calls_a_replay_held(tmp_path):
    df = _run(tmp_path, "collectives_graph", "[16384,16777216]", "graph")
    assert len(df) == 2 and set(df.status) == {"ok"}, df[["problem", "status", "reason"]]
    assert (df.timer == "cuda-graph").all() and (df.l2 == "hot").all()
    small = df[df.message_bytes == 16384].iloc[0]
    assert small.calls_per_sample > 1  # a small all-reduce: many calls per replay
    assert (df.latency_ms_median > 0).all()
