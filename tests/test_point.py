"""measure_point: every outcome is a row with a status; wrong results never carry a speed."""

import time

import pytest
import torch

from harness.device import get_device
from harness.measure.point import measure_point
from harness.measure.protocol import Protocol
from harness.problems import GemmProblem
from harness.providers import Prepared, Provider, Unsupported

CPU = get_device("cpu")
QUICK = Protocol(min_samples=3, max_samples=20, max_time_s=0.2, warmup_ms=0)
PROBLEM = GemmProblem(8, 8, 8, "fp32")


def provider(prepare, **kw):
    return Provider("test", "gemm", "own", ("cpu",), prepare, **kw)


def good(problem, x, device):
    return Prepared(lambda: x["a"] @ x["b"], {"tile": 8})


def test_ok_row_has_speed_and_correctness():
    row = measure_point(PROBLEM, provider(good), CPU, QUICK)
    assert row["status"] == "ok" and row["reason"] is None
    assert row["latency_ms_median"] > 0 and row["tflops"] > 0 and row["gbps"] > 0
    assert row["n_samples"] == len(row["samples_ms"]) >= 3
    assert row["rel_err"] < 1e-6 and row["provider_config"] == '{"tile": 8}'
    assert row["device_type"] == "cpu" and row["timer"] == "host"
    assert row["l2_flush_bytes"] is None  # no flush on the CPU


def test_wrong_result_is_never_timed():
    def wrong(problem, x, device):
        return Prepared(lambda: (x["a"] @ x["b"]) * 1.01)

    row = measure_point(PROBLEM, provider(wrong), CPU, QUICK)
    assert row["status"] == "wrong" and "rel_err" in row["reason"]
    assert row.get("latency_ms_median") is None and row.get("tflops") is None
    assert row["rel_err"] == pytest.approx(0.01, rel=1e-3)


def test_unwritten_output_is_caught_on_fresh_inputs():
    cache = {}

    def stale(problem, x, device):  # returns the first output it ever computed
        out = cache.setdefault("out", x["a"] @ x["b"] if not cache else None)
        return Prepared(lambda: out)

    measure_point(PROBLEM, provider(stale), CPU, QUICK)  # fills the cache on the check inputs
    row = measure_point(
        GemmProblem(8, 8, 8, "fp32"),
        provider(stale),
        CPU,
        Protocol(
            seed=5,
            **{
                k: getattr(QUICK, k)
                for k in ("min_samples", "max_samples", "max_time_s", "warmup_ms")
            },
        ),
    )
    assert row["status"] == "wrong"


def test_exception_in_prepare_or_run_is_an_error_row():
    def boom(problem, x, device):
        raise RuntimeError("compile failed\nlong trace")

    row = measure_point(PROBLEM, provider(boom), CPU, QUICK)
    assert row["status"] == "error" and row["reason"] == "RuntimeError: compile failed"

    def run_fails(problem, x, device):
        return Prepared(lambda: 1 / 0)

    assert measure_point(PROBLEM, provider(run_fails), CPU, QUICK)["status"] == "error"


def test_oom_is_an_error_row_with_oom_reason():
    def oom(problem, x, device):
        raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 80 GiB")

    row = measure_point(PROBLEM, provider(oom), CPU, QUICK)
    assert row["status"] == "error" and row["reason"].startswith("oom:")


def test_timeout_is_an_error_row():
    def slow(problem, x, device):
        time.sleep(5)

    t0 = time.perf_counter()
    row = measure_point(PROBLEM, provider(slow), CPU, QUICK, timeout_s=0.3)
    assert row["status"] == "error" and "timeout" in row["reason"]
    assert time.perf_counter() - t0 < 3


def test_unsupported_and_unavailable_are_skipped():
    def refuse(problem, x, device):
        raise Unsupported("backend says no")

    assert measure_point(PROBLEM, provider(refuse), CPU, QUICK)["reason"] == "backend says no"
    gpu_only = Provider("g", "gemm", "vendor", ("nvidia",), good)
    row = measure_point(PROBLEM, gpu_only, CPU, QUICK)
    assert row["status"] == "skipped" and "not cpu" in row["reason"]
    picky = provider(good, supports=lambda p, d: "no fp32 here")
    assert measure_point(PROBLEM, picky, CPU, QUICK)["reason"] == "no fp32 here"


def test_zeros_fill_still_checks_on_random_inputs():
    def zeros_out(problem, x, device):  # right only when the inputs are zeros
        return Prepared(lambda: torch.zeros(8, 8))

    row = measure_point(
        PROBLEM,
        provider(zeros_out),
        CPU,
        Protocol(
            fill="zeros",
            **{
                k: getattr(QUICK, k)
                for k in ("min_samples", "max_samples", "max_time_s", "warmup_ms")
            },
        ),
    )
    assert row["status"] == "wrong" and row["fill"] == "zeros"


def test_output_a_call_leaves_unwritten_is_caught_even_holding_the_right_answer():
    """The output buffer holds the right answer before the checked call (as memory a provider
    before it left can): a kernel that writes only its first rows still fails, since the
    buffer is poisoned with NaN between a first call and the checked one."""

    def half(problem, x, device):
        out = x["a"] @ x["b"]  # the right answer, already in the buffer

        def run():
            out[:4] = x["a"][:4] @ x["b"]  # rows 4-7 never written by a call
            return out

        return Prepared(run)

    row = measure_point(PROBLEM, provider(half), CPU, QUICK)
    assert row["status"] == "wrong" and row["reason"].startswith("output has NaN or Inf after")
    assert "part of the output is not written by a call" in row["reason"]


def test_an_output_sharing_memory_with_an_input_is_never_poisoned():
    """An in-place op returns (a view of) its input: poisoning it would corrupt what the checked
    call reads. Integer outputs and unwritable expanded views are left alone too."""
    from harness.measure.point import _poison

    inputs = {"x": torch.ones(4, 4), "cache": [torch.zeros(8)]}
    fresh, ints = torch.ones(4), torch.ones(4, dtype=torch.int32)
    expanded = torch.ones(1).expand(4)
    outputs = (inputs["x"][1:], inputs["cache"][0].view(2, 4), fresh, ints, expanded)
    assert _poison(outputs, inputs)
    assert bool(torch.isnan(fresh).all()) and not bool(torch.isnan(inputs["x"]).any())
    assert not bool(torch.isnan(inputs["cache"][0]).any()) and bool((ints == 1).all())
    assert not _poison((inputs["x"],), inputs)  # nothing to fill: no second call


def test_the_reference_is_full_fp32_whatever_a_closure_left_switched_on():
    """A tf32 GEMM's vendor closure turns torch's TF32 switch on for the process: the check's
    reference runs with it off, and the switch is as the closure left it after."""
    seen = []

    class Spy(GemmProblem):
        def reference(self, inputs):
            seen.append(torch.backends.cuda.matmul.allow_tf32)
            return super().reference(inputs)

    def tf32_on(problem, x, device):
        def run():
            torch.backends.cuda.matmul.allow_tf32 = True
            return x["a"] @ x["b"]

        return Prepared(run)

    before = torch.backends.cuda.matmul.allow_tf32
    try:
        row = measure_point(Spy(8, 8, 8, "fp32"), provider(tf32_on), CPU, QUICK)
        assert row["status"] == "ok" and seen == [False]
        assert torch.backends.cuda.matmul.allow_tf32 is True  # restored to what it was
    finally:
        torch.backends.cuda.matmul.allow_tf32 = before
