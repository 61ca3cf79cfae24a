"""The tuners' cold timer: every timed launch is flushed, held until queued, and bracketed by its
own events, as the harness timer's samples are (tests/test_stream_hold.py checks that order)."""

import contextlib

import numpy as np
import pytest
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
    # The 5-cycle estimate spans 21 log steps (4.2 "ms" a cycle of flush, events and call):
    # 13 "ms" of samples is 3 of them.
    monkeypatch.setattr(bench_cold, "_REP_MS", 13)
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
    # 25 "ms" of samples at 4.2 "ms" a cycle would be 5; a 1 "ms" window would be none
    monkeypatch.setattr(bench_cold, "_REP_MS", 1)
    bench_cold.bench_cold(lambda: log.append("call"), torch.device("cpu"))
    timed = log[log.index("sync", log.index("record") + 1) + 1 :]
    timed = timed[timed.index("flush", timed.index("call") + 1) :]  # after the warm-up call
    # 10 samples: the fake hold reports the batch's last one expired, so it is timed again
    assert bench_cold._MIN_SAMPLES == 10
    assert timed.count("call") == 11 and timed.count("sync") == 2


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


class _FakeCuda:
    """torch.cuda's events and synchronize: each recorded pair reads the next scripted time."""

    def __init__(self, times_ms):
        self.times = list(times_ms)
        self.log: list[str] = []
        fake = self

        class Event:
            def __init__(self, enable_timing=True):
                self.t = None

            def record(self):
                fake.log.append("record")

            def elapsed_time(self, other):
                return fake.times.pop(0) if fake.times else 1.0

        self.Event = Event

    def synchronize(self, device=None):
        pass


class _ScriptedHold:
    """A hold whose outcomes per batch are scripted: True where the hold expired."""

    def __init__(self, batches):
        self.batches = list(batches)
        self.armed = 0

    def arm(self, i):
        self.armed += 1

    def release(self, i):
        pass

    def expired_mask(self, n):
        got = self.batches.pop(0) if self.batches else [False] * n
        return np.array(got[:n], dtype=bool)


@pytest.fixture
def fake_cuda(monkeypatch):
    def install(times):
        fake = _FakeCuda(times)
        monkeypatch.setattr(torch.cuda, "Event", fake.Event)
        monkeypatch.setattr(torch.cuda, "synchronize", fake.synchronize)
        return fake

    return install


def test_a_sample_whose_hold_expired_is_dropped_and_timed_again(fake_cuda):
    fake_cuda([1.0, 9.0, 1.0, 1.0, 1.0])  # the second sample waited on the host
    hold = _ScriptedHold([[False, True, False, False], [False]])
    got = bench_cold._held_samples(lambda: None, lambda: None, hold, 4)
    assert got == [1.0, 1.0, 1.0, 1.0]  # 9.0 gone, one more sample timed in its place
    assert hold.armed == 5


def test_a_batch_mostly_expired_is_kept_whole_so_the_tuner_still_gets_samples(fake_cuda):
    fake_cuda([5.0, 6.0, 7.0, 1.0])
    hold = _ScriptedHold([[True, True, False, True]])
    got = bench_cold._held_samples(lambda: None, lambda: None, hold, 4)
    assert got == [5.0, 6.0, 7.0, 1.0] and hold.armed == 4


def test_warm_up_count_comes_from_the_call_alone_not_the_flush(fake_cuda, monkeypatch):
    """The estimate's five cycles take 1.0 ms each (flush and call), the call alone 0.1 ms: a
    150 ms warm-up is 1,500 calls, not 150."""
    calls = []
    # elapsed_time order: the whole cycle first, then the five calls alone, then the samples
    fake_cuda([5.0] + [0.1] * 5 + [0.1] * 200)
    monkeypatch.setattr(bench_cold, "_device_state", lambda d: (lambda: None, _ScriptedHold([])))
    monkeypatch.setattr(torch.cuda, "device", lambda d: _Nothing())
    bench_cold.bench_cold(lambda: calls.append(1), torch.device("cpu"), warmup_ms=150, rep_ms=100)
    # 1 first call + 5 estimate calls + 1,500 warm-up calls + 100 samples (100 ms / 1.0 ms)
    assert len(calls) == 1 + 5 + 1500 + 100


class _Nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False
