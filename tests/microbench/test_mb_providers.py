"""Microbenchmark providers through measure_point on the CPU (Triton interpreter, torch CPU):
every metric checks out, and a kernel that skips work is caught as wrong."""

import pytest
import torch
from harness_kernels.triton import microbench as K

from harness.device import get_device
from harness.measure.point import measure_point
from harness.measure.protocol import Protocol
from harness.problems.microbench import FmaProblem, LatencyProblem, MemoryProblem
from harness.providers import Prepared, Provider, load_all

CPU = get_device("cpu")
QUICK = Protocol(min_samples=3, max_samples=5, max_time_s=0.2, min_time_s=0.0, warmup_ms=0)
REGISTRY = load_all()


def measure(problem, provider):
    problem.validate()
    return measure_point(problem, REGISTRY.get(problem.op, provider), CPU, QUICK)


@pytest.mark.parametrize(
    "problem",
    [
        MemoryProblem("read", 16384, 4 * 16384),  # re-read four times (the cache-level mapping)
        MemoryProblem("read", 8192, dtype="bf16"),
        MemoryProblem("read", 4096, 8 * 4096),  # smaller than a block: read 4x per trip
        MemoryProblem("write", 8192, 3 * 8192, "fp16"),
        MemoryProblem("copy", 8192, 2 * 8192),
    ],
    ids=lambda p: p.label(),
)
def test_triton_stream_ok(problem):
    row = measure(problem, "triton-stream")
    assert row["status"] == "ok", row["reason"]
    assert row["gbps"] > 0 and row["device_type"] == "cpu"
    assert row["traffic_bytes"] == problem.traffic_bytes and row["metric"] == problem.metric


@pytest.mark.parametrize("metric", ["read", "write", "copy"])
def test_torch_stream_ok_and_refuses_rereads(metric):
    assert measure(MemoryProblem(metric, 8192), "torch-stream")["status"] == "ok"
    row = measure(MemoryProblem(metric, 8192, 16384), "torch-stream")
    assert row["status"] == "skipped" and "triton-stream" in row["reason"]


def test_chase_ok_with_latency_columns():
    row = measure(LatencyProblem(4096, 128, hops=200), "triton-chase")
    assert row["status"] == "ok", row["reason"]
    assert row["latency_ns"] == pytest.approx(row["latency_ms_median"] * 1e6 / 200)
    assert row["latency_cycles"] is None  # no SM clock on the CPU
    assert row["hops"] == 200 and row["stride_bytes"] == 128


def test_fma_ok():
    row = measure(FmaProblem(4096, 32), "triton-fma")
    assert row["status"] == "ok", row["reason"]
    assert row["tflops"] > 0 and row["iterations"] == 32


@pytest.mark.parametrize(
    ("blocks", "passes", "programs", "grid"),
    [(6, 3, 3, 3), (5, 3, 3, 1), (12, 2, 8, 6), (2, 8, 4, 4), (3, 6, 5, 3)],
)
def test_read_stream_reads_every_block_exactly_passes_times(blocks, passes, programs, grid):
    # The grid divides the set (or, for a set smaller than the grid, the pass count), so the
    # staggered shares tile the stream: the checksum is exactly passes x the set's sum.
    x = torch.arange(1, 4096 * blocks + 1, dtype=torch.float32)
    launch = K.stream_read(x, stream_elems=passes * blocks * 4096, programs=programs)
    assert launch.config["programs"] == grid and launch.config["BLOCK"] == 4096
    total = float(launch.run().double().sum())
    assert total == pytest.approx(passes * float(x.double().sum()), rel=1e-9)


def test_one_pass_read_of_a_small_set_narrows_its_blocks_to_fill_the_programs():
    # 4 blocks of 16 KiB, read once by up to 16 programs: 16 blocks of 4 KiB, one per program
    # (the 16 KiB blocks gave one program the whole set).
    x = torch.arange(1, 4 * 4096 + 1, dtype=torch.float32)
    launch = K.stream_read(x, stream_elems=x.numel(), programs=16)
    assert launch.config["BLOCK"] == 1024 and launch.config["programs"] == 16
    assert float(launch.run().double().sum()) == pytest.approx(float(x.double().sum()), rel=1e-9)
    # never below 4 KiB: 2 blocks of 4 KiB for 16 programs -> 2 programs
    small = torch.arange(1, 2 * 1024 + 1, dtype=torch.float32)
    launch = K.stream_read(small, stream_elems=small.numel(), programs=16)
    assert launch.config["BLOCK"] == 1024 and launch.config["programs"] == 2
    assert float(launch.run().double().sum()) == pytest.approx(float(small.double().sum()))
    # re-reads keep 16 KiB blocks (the L2 probe's shared lines are recorded, not narrowed)
    launch = K.stream_read(x, stream_elems=4 * x.numel(), programs=16)
    assert launch.config["BLOCK"] == 4096 and launch.config["readers_per_block"] == 1


def test_read_stream_must_be_whole_passes():
    x = torch.arange(1, 4096 * 5 + 1, dtype=torch.float32)
    with pytest.raises(ValueError, match="whole passes"):
        K.stream_read(x, stream_elems=7 * 4096, programs=3)


def test_set_smaller_than_a_block_is_read_several_times_per_trip():
    x = torch.arange(1024, dtype=torch.float32)  # 4 KiB: a quarter of a 16 KiB block
    launch = K.stream_read(x, stream_elems=8 * 1024, programs=4)
    assert launch.config["WRAP"] == 1024 and launch.config["BLOCK"] == 4096
    assert launch.config["programs"] == 2  # two trips of 4096 elements cover the stream
    assert float(launch.run().double().sum()) == pytest.approx(8 * float(x.double().sum()))
    dst = torch.full((1024,), float("nan"))
    K.stream_write(dst, 2.5, 8 * 1024, 4).run()
    assert bool((dst == 2.5).all())


def _provider(op, prepare):
    return Provider("broken", op, "own", ("cpu",), prepare)


def test_skipped_work_is_caught_as_wrong():
    def half_read(problem, inputs, device):  # reads only the first half of the working set
        x = inputs["x"]
        launch = K.stream_read(x[: x.numel() // 2], problem.elements // 2 * problem.passes, 4)
        return Prepared(launch.run, {}, lambda p: p.double().sum().reshape(1))

    p = MemoryProblem("read", 8192, 16384)
    assert measure_point(p, _provider("memory", half_read), CPU, QUICK)["status"] == "wrong"

    def short_chase(problem, inputs, device):  # one hop short
        launch = K.pointer_chase(inputs["chase"], inputs["start"], problem.hops - 1)
        return Prepared(launch.run, {}, lambda out: out.long())

    q = LatencyProblem(4096, 128, hops=50)
    assert measure_point(q, _provider("latency", short_chase), CPU, QUICK)["status"] == "wrong"

    def partial_copy(problem, inputs, device):  # copies all but the last element
        src, dst = inputs["src"], inputs["dst"]
        return Prepared(lambda: (dst[:-1].copy_(src[:-1]), dst)[1])

    c = MemoryProblem("copy", 4096)
    row = measure_point(c, _provider("memory", partial_copy), CPU, QUICK)
    assert row["status"] == "wrong" and "1 of 1024" in row["reason"]
