"""Microbenchmark problems: traffic and work by hand, validation, the chase's single cycle,
references and the exact checks of written / copied buffers."""

import dataclasses
import math

import pytest
import torch

from harness import store
from harness.problems import PROBLEM_TYPES
from harness.problems.microbench import FmaProblem, LatencyProblem, MemoryProblem

CPU = torch.device("cpu")


def test_memory_traffic_by_hand():
    read = MemoryProblem("read", 4096, 4 * 4096)
    assert (read.passes, read.elements, read.min_bytes(), read.flops()) == (4, 1024, 16384, 0)
    assert MemoryProblem("write", 8192).min_bytes() == 8192
    copy = MemoryProblem("copy", 8192, 16384, "bf16")
    assert copy.min_bytes() == 2 * 16384 and copy.elements == 4096
    # traffic 0 means one pass and is stored as the effective value
    assert MemoryProblem("read", 4096).traffic_bytes == 4096
    assert MemoryProblem("read", 4096) == MemoryProblem("read", 4096, 4096)
    assert read.label() == "memory read 4KiB x4 fp32"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (dict(metric="scan", working_set_bytes=4096), "metric: unknown 'scan'; allowed: read"),
        (dict(metric="read", working_set_bytes=6000), "working_set_bytes: 6000 is not a multiple"),
        (dict(metric="read", working_set_bytes=8192, traffic_bytes=12288), "traffic_bytes: 12288"),
        (dict(metric="read", working_set_bytes=4096, dtype="fp8_e4m3"), "dtype: unknown"),
        (dict(metric="read", working_set_bytes=-4096), "working_set_bytes: must be a positive"),
    ],
)
def test_memory_validation_names_the_field(kwargs, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(")):
        MemoryProblem(**kwargs).validate()


def test_read_reference_is_the_sum_over_every_pass():
    p = MemoryProblem("read", 4096, 3 * 4096)
    x = p.make_inputs(0, "randn", CPU)["x"]
    assert bool((x >= 0).all())  # positive data: the checksum cannot cancel
    want = 3 * sum(float(v) for v in x.double())
    assert float(p.reference({"x": x})[0]) == pytest.approx(want, rel=1e-12)
    assert p.check(p.reference({"x": x}).float(), p.reference({"x": x})).ok
    short = p.reference({"x": x}) * (1 - 1 / 3072)  # one element of one pass missing, roughly
    assert not p.check(short, p.reference({"x": x})).ok


def test_write_and_copy_checks_are_exact_and_catch_unwritten_elements():
    w = MemoryProblem("write", 4096, dtype="bf16")
    inputs = w.make_inputs(1, "randn", CPU)
    assert bool(torch.isnan(inputs["dst"]).all())  # starts unwritten
    ref = w.reference(inputs)
    assert w.check(inputs["dst"].fill_(inputs["value"]), ref).ok
    inputs["dst"][7] = math.nan
    bad = w.check(inputs["dst"], ref)
    assert not bad.ok and "1 of 2048" in bad.reason
    c = MemoryProblem("copy", 4096)
    inputs = c.make_inputs(2, "randn", CPU)
    assert not c.check(inputs["dst"], c.reference(inputs)).ok
    assert c.check(inputs["dst"].copy_(inputs["src"]), c.reference(inputs)).ok


@pytest.mark.parametrize(("ws", "stride"), [(4096, 128), (65536, 64), (12288, 4096), (1024, 4)])
def test_chase_is_one_cycle_through_every_slot(ws, stride):
    p = LatencyProblem(ws, stride, hops=10)
    p.validate()
    inputs = p.make_inputs(3, "zeros", CPU)  # the fill does not apply to a chain
    chase, se = inputs["chase"].tolist(), p.stride_elems
    idx, seen = inputs["start"], []
    for _ in range(p.slots):
        assert idx % se == 0  # every pointer lands on a slot's first word
        seen.append(idx // se)
        idx = chase[idx]
    assert idx == inputs["start"]  # back at the start after exactly one lap ...
    assert sorted(seen) == list(range(p.slots))  # ... having visited every slot once
    off_chain = [v for i, v in enumerate(chase) if i % se]
    assert not any(off_chain)
    if p.slots > 8:  # random order: consecutive hops do not walk neighbouring slots
        steps = [abs(b - a) for a, b in zip(seen, seen[1:], strict=False)]
        assert sum(s == 1 for s in steps) < len(steps) / 2


def test_chase_reference_and_exact_check():
    p = LatencyProblem(8192, 128, hops=1000)
    inputs = p.make_inputs(4, "randn", CPU)
    idx = inputs["start"]
    for _ in range(p.hops):
        idx = int(inputs["chase"][idx])
    ref = p.reference(inputs)
    assert int(ref[0]) == idx
    assert p.check(torch.tensor([idx]), ref).ok
    assert not p.check(torch.tensor([idx + 32]), ref).ok


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (dict(working_set_bytes=4096, stride_bytes=6), "stride_bytes: 6 is not a multiple"),
        (dict(working_set_bytes=4000, stride_bytes=128), "working_set_bytes: 4000 is not a"),
        (dict(working_set_bytes=128, stride_bytes=128), "allowed: at least 2 slots"),
        (dict(working_set_bytes=16 << 30), "exceeds int32 indexing"),
        (dict(working_set_bytes=4096, hops=0), "hops: must be a positive integer"),
    ],
)
def test_latency_validation(kwargs, message):
    with pytest.raises(ValueError, match=message):
        LatencyProblem(**kwargs).validate()


def test_latency_derived_columns():
    p = LatencyProblem(4096, 128, hops=1 << 20)
    d = p.derived({"latency_ms_median": 21.0, "sm_clock_mhz": 1980.0})
    assert d["latency_ns"] == pytest.approx(21.0e6 / (1 << 20))  # ~20 ns per hop
    assert d["latency_cycles"] == pytest.approx(d["latency_ns"] * 1.98)
    assert p.derived({"latency_ms_median": 1.0, "sm_clock_mhz": None})["latency_cycles"] is None
    assert p.derived({}) == {}


def test_fma_work_and_closed_form_reference():
    p = FmaProblem(8192, 64)
    assert p.flops() == 2 * 2048 * 64 and p.min_bytes() == 8 * 2048
    inputs = p.make_inputs(5, "randn", CPU)
    a, b = inputs["a"], inputs["b"]
    x = inputs["x"].double()
    for _ in range(p.iterations):
        x = x * a + b
    ref = p.reference(inputs)
    assert torch.allclose(ref, x, rtol=1e-12, atol=1e-12)
    # an fp32 chain (two roundings per step, worse than one FMA) stays inside the tolerance
    x32 = inputs["x"].clone()
    for _ in range(p.iterations):
        x32 = x32 * a + b
    assert p.check(x32, ref).ok
    assert not p.check(inputs["x"], ref).ok  # an unrun chain fails


def test_fma_validation():
    with pytest.raises(ValueError, match="iterations: 100 is not a multiple of 16"):
        FmaProblem(4096, 100).validate()
    with pytest.raises(ValueError, match="dtype: unknown 'bf16'"):
        FmaProblem(4096, 64, "bf16").validate()


@pytest.mark.parametrize("op", ["memory", "latency", "fma"])
def test_axes_are_store_columns_and_registered(op):
    cls = PROBLEM_TYPES[op]
    names = [f.name for f in dataclasses.fields(cls)]
    assert set(names) <= set(store.COLUMNS), set(names) - set(store.COLUMNS)
