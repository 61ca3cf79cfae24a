"""measure_point with a self-timing provider (Prepared.external): the program's own check maps to
ok / wrong, its samples become the row's latency, and TFLOP/s and GB/s come from the problem's
flops() / min_bytes(), never from the program's printed numbers."""

from __future__ import annotations

import json

import pytest

from harness.device import get_device
from harness.measure.point import measure_point
from harness.measure.protocol import Protocol
from harness.problems import AttentionProblem
from harness.providers import Prepared, Provider, Unsupported
from harness.providers.registry import External, ExternalCheck

CPU = get_device("cpu")
QUICK = Protocol(min_samples=3, max_samples=20, max_time_s=0.2, warmup_ms=0)
PROBLEM = AttentionProblem(1, 4, 2, 64, 64, 128, causal=True, dtype="fp16")


def _provider(verdict: ExternalCheck, samples=(2.0, 2.2, 2.1), calls: list | None = None):
    calls = [] if calls is None else calls

    def check(protocol):
        calls.append("check")
        return verdict

    def time_it(protocol, stop):
        calls.append(("time", protocol.seed))
        timing = {
            "samples_ms": list(samples),
            "timer": "ck-internal",
            "l2": "hot",
            "stop_reason": "max_samples",
            "calls_per_sample": 20,
            "warmup_calls": 5,
        }
        return timing, {"reported_tflops": [99.0]}

    def prepare(problem, inputs, device):
        def never():
            raise AssertionError("run() of an external provider is never called")

        return Prepared(never, {"binary": "fake"}, external=External(check, time_it))

    return Provider("ext", "attention", "vendor", ("cpu",), prepare), calls


def test_external_ok_row_uses_own_flops_and_program_timer():
    provider, calls = _provider(ExternalCheck(True, None, {"check": "valid:y"}))
    row = measure_point(PROBLEM, provider, CPU, QUICK)
    assert row["status"] == "ok", row["reason"]
    assert calls == ["check", ("time", 0)]
    assert row["timer"] == "ck-internal" and row["l2"] == "hot"
    assert row["calls_per_sample"] == 20 and row["warmup_calls"] == 5 and row["n_samples"] == 3
    assert row["latency_ms_median"] == pytest.approx(2.1)
    assert row["tflops"] == pytest.approx(PROBLEM.flops() / 2.1e-3 / 1e12)
    assert row["gbps"] == pytest.approx(PROBLEM.min_bytes() / 2.1e-3 / 1e9)
    assert row.get("rel_err") is None  # outputs never leave the program
    config = json.loads(row["provider_config"])
    assert config == {"binary": "fake", "check": "valid:y", "reported_tflops": [99.0]}


def test_external_wrong_is_never_timed():
    provider, calls = _provider(ExternalCheck(False, "ck -v=1 validation: valid:n"))
    row = measure_point(PROBLEM, provider, CPU, QUICK)
    assert row["status"] == "wrong" and row["reason"] == "ck -v=1 validation: valid:n"
    assert calls == ["check"] and row.get("latency_ms_median") is None and row.get("tflops") is None


def test_external_refusal_is_skipped():
    def refuse(protocol):
        raise Unsupported("CK: not supported yet")

    provider, _ = _provider(ExternalCheck(True))
    prep = provider.prepare

    def prepare(problem, inputs, device):
        p = prep(problem, inputs, device)
        p.external.check = refuse
        return p

    row = measure_point(
        PROBLEM, Provider("ext", "attention", "vendor", ("cpu",), prepare), CPU, QUICK
    )
    assert row["status"] == "skipped" and row["reason"] == "CK: not supported yet"
