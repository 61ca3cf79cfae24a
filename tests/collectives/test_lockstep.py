"""Collectives are measured by the common point engine (measure_point with Lockstep peers): here
one gloo rank in this process, so each step's agreement and its row run without spawning."""

import socket
from datetime import timedelta

import pytest
import torch.distributed as dist

from harness.device import get_device
from harness.measure.lockstep import Lockstep
from harness.measure.point import measure_point
from harness.measure.protocol import Protocol
from harness.problems import CollectiveProblem
from harness.providers import Prepared, Provider, Unsupported
from harness.providers.collectives import _launch

CPU = get_device("cpu")
QUICK = Protocol(
    l2="hot", stream_hold=False, min_samples=3, max_samples=20, max_time_s=0.2, warmup_ms=0
)
PROBLEM = CollectiveProblem("all_reduce", 4096, world_size=1)  # one rank: this process


@pytest.fixture
def group():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    dist.init_process_group(
        "gloo",
        init_method=f"tcp://127.0.0.1:{port}",
        rank=0,
        world_size=1,
        timeout=timedelta(seconds=30),
    )
    try:
        yield Lockstep(CPU)
    finally:
        dist.destroy_process_group()


def provider(prepare) -> Provider:
    return Provider("test-gloo", "collective", "vendor", ("cpu",), prepare)


def test_an_ok_point_is_the_engines_row(group):
    row = measure_point(PROBLEM, provider(lambda p, x, d: _launch(p, x)), CPU, QUICK, peers=group)
    assert row["status"] == "ok" and row["reason"] is None and row["rel_err"] == 0
    assert row["timer"] == "host" and row["n_samples"] >= 3 and row["gbps"] > 0
    assert row["timing_attempts"] == 1 and '"backend": "gloo"' in row["provider_config"]


def test_a_failed_step_is_agreed_and_names_its_rank(group):
    def raises(problem, inputs, device):
        raise RuntimeError("injected\nsecond line")

    def refuses(problem, inputs, device):
        raise Unsupported("not this size")

    row = measure_point(PROBLEM, provider(raises), CPU, QUICK, peers=group)
    assert (row["status"], row["reason"]) == ("error", "rank 0: RuntimeError: injected")
    row = measure_point(PROBLEM, provider(refuses), CPU, QUICK, peers=group)
    assert (row["status"], row["reason"]) == ("skipped", "rank 0: not this size")


def test_a_wrong_rank_makes_the_point_wrong_and_untimed(group):
    def writes_nothing(problem, inputs, device):
        return Prepared(lambda: None, {}, lambda _: inputs["out"])  # 'out' stays NaN

    row = measure_point(PROBLEM, provider(writes_nothing), CPU, QUICK, peers=group)
    assert row["status"] == "wrong" and row["reason"].startswith("rank 0: 2048 of 2048 elements")
    assert "latency_ms_median" not in row


def test_a_failure_inside_a_collective_stops_the_ranks(group):
    """Outside a step the peers may be waiting in a collective: no row, the rank raises (its
    parent, harness.collectives, writes the point's error row)."""

    def run_fails(problem, inputs, device):
        return Prepared(lambda: 1 / 0, {}, lambda _: inputs["out"])

    with pytest.raises(ZeroDivisionError):
        measure_point(PROBLEM, provider(run_fails), CPU, QUICK, peers=group)
