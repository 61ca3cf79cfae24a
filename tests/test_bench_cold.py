"""The tuners' cold timer: every timed launch is flushed, held until queued, and bracketed by its
own events, as the harness timer's samples are (tests/test_stream_hold.py checks that order)."""

import contextlib

import torch
from harness_kernels import bench_cold
from timing_fakes import LoggingHold


class _Event:
    def __init__(self, log, enable_timing=True):
        self.log = log
        self.t = float(len(log))

    def record(self):
        self.t = float(len(self.log))
        self.log.append("record")

    def elapsed_time(self, other):
        return other.t - self.t


def _install(monkeypatch, log, batch):
    monkeypatch.setattr(torch.cuda, "Event", lambda enable_timing=True: _Event(log))
    monkeypatch.setattr(torch.cuda, "synchronize", lambda *a: log.append("sync"))
    monkeypatch.setattr(torch.cuda, "device", lambda d: contextlib.nullcontext())
    flush = lambda: log.append("flush")  # noqa: E731
    monkeypatch.setattr(bench_cold, "_device_state", lambda device: (flush, LoggingHold(log)))
    monkeypatch.setattr(bench_cold, "_BATCH", batch)
    monkeypatch.setattr(bench_cold, "_WARMUP_MS", 0)


def test_each_timed_launch_is_flushed_then_held_until_queued(monkeypatch):
    log: list[str] = []
    _install(monkeypatch, log, batch=2)
    # The 5-call estimate spans 11 log steps (2.2 "ms" a call): 7 "ms" of samples is 3 of them.
    monkeypatch.setattr(bench_cold, "_REP_MS", 7)
    monkeypatch.setattr(bench_cold, "_MIN_SAMPLES", 1)
    ms = bench_cold.bench_cold(lambda: log.append("call"), torch.device("cpu"))
    timed = log[log.index("sync", log.index("record") + 1) + 1 :]
    timed = timed[timed.index("flush", timed.index("call") + 1) :]  # after the warm-up call

    def sample(i):
        return ["flush", f"arm{i}", "record", "call", "record", f"release{i}"]

    assert timed == sample(0) + sample(1) + ["sync"] + sample(0) + ["sync"]  # batches of 2, 1
    assert ms == 2.0  # each sample's events bracket exactly its one call


def test_a_long_kernel_still_gets_the_minimum_samples(monkeypatch):
    log: list[str] = []
    _install(monkeypatch, log, batch=64)
    # 25 "ms" of samples at 2.2 "ms" a call would be 11; a 1 "ms" window would be none
    monkeypatch.setattr(bench_cold, "_REP_MS", 1)
    bench_cold.bench_cold(lambda: log.append("call"), torch.device("cpu"))
    timed = log[log.index("sync", log.index("record") + 1) + 1 :]
    timed = timed[timed.index("flush", timed.index("call") + 1) :]  # after the warm-up call
    assert timed.count("call") == bench_cold._MIN_SAMPLES == 10


def test_alternating_medians_time_every_launch_once_per_round(monkeypatch):
    """The probes' A/B: round after round each launch once, in turn, with the probes' short
    windows; each launch's median over its rounds."""
    order = []
    fake_ms = {"a": iter([3.0, 1.0, 2.0]), "b": iter([5.0, 4.0, 9.0])}

    def fake(fn, device, warmup_ms=None, rep_ms=None):
        assert (warmup_ms, rep_ms) == (50, 200)
        order.append(fn())
        return next(fake_ms[order[-1]])

    monkeypatch.setattr(bench_cold, "bench_cold", fake)
    medians = bench_cold.alternating_medians(
        {"a": lambda: "a", "b": lambda: "b"}, torch.device("cpu"), 3
    )
    assert order == ["a", "b"] * 3
    assert medians == {"a": 2.0, "b": 5.0}
