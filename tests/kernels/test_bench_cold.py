"""The tuners' cold timer (kernels/bench_cold.py) on a fake CUDA clock: which samples it keeps
when a stream hold expires, and how long it warms up."""

import harness_kernels.bench_cold as bench
import numpy as np
import pytest
import torch


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
    got = bench._held_samples(lambda: None, lambda: None, hold, 4)
    assert got == [1.0, 1.0, 1.0, 1.0]  # 9.0 gone, one more sample timed in its place
    assert hold.armed == 5


def test_a_batch_mostly_expired_is_kept_whole_so_the_tuner_still_gets_samples(fake_cuda):
    fake_cuda([5.0, 6.0, 7.0, 1.0])
    hold = _ScriptedHold([[True, True, False, True]])
    got = bench._held_samples(lambda: None, lambda: None, hold, 4)
    assert got == [5.0, 6.0, 7.0, 1.0] and hold.armed == 4


def test_warm_up_count_comes_from_the_call_alone_not_the_flush(fake_cuda, monkeypatch):
    """The estimate's five cycles take 1.0 ms each (flush and call), the call alone 0.1 ms: a
    150 ms warm-up is 1,500 calls, not 150."""
    calls = []
    # elapsed_time order: the whole cycle first, then the five calls alone, then the samples
    fake_cuda([5.0] + [0.1] * 5 + [0.1] * 200)
    monkeypatch.setattr(bench, "_device_state", lambda d: (lambda: None, _ScriptedHold([])))
    monkeypatch.setattr(torch.cuda, "device", lambda d: _Nothing())
    bench.bench_cold(lambda: calls.append(1), torch.device("cpu"), warmup_ms=150, rep_ms=100)
    # 1 first call + 5 estimate calls + 1,500 warm-up calls + 100 samples (100 ms / 1.0 ms)
    assert len(calls) == 1 + 5 + 1500 + 100


class _Nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False
