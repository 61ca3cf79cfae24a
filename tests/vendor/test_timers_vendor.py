"""Device timers on the CPU: the event timer driven through a fake device module (what torch.xpu
provides on an Intel GPU), and the host-sync fallback for a torch without XPU events."""

from __future__ import annotations

import time
import types

import torch

from harness.measure import timer as timers
from harness.measure.protocol import Protocol

QUICK = Protocol(min_samples=3, max_samples=12, max_time_s=0.2, warmup_ms=0, rse_target=1e-9)


class _FakeEvent:
    """An event whose timestamp is the host clock at record() (calls here are synchronous)."""

    def __init__(self, enable_timing: bool = False) -> None:
        self.t = None

    def record(self) -> None:
        self.t = time.perf_counter()

    def synchronize(self) -> None:
        pass

    def elapsed_time(self, end: _FakeEvent) -> float:
        return (end.t - self.t) * 1e3


def _fake_device_module(with_events: bool) -> types.SimpleNamespace:
    calls = {"sync": 0}
    api = types.SimpleNamespace(
        synchronize=lambda *a: calls.__setitem__("sync", calls["sync"] + 1), calls=calls
    )
    if with_events:
        api.Event = _FakeEvent
    return api


def test_xpu_events_timer(monkeypatch):
    monkeypatch.setattr(torch, "xpu", _fake_device_module(with_events=True))
    flushes = []
    t = timers.time_xpu(lambda: time.sleep(0.001), QUICK, flush=lambda: flushes.append(1))
    assert t.timer == "xpu-events" and t.l2 == "cold" and t.stop_reason == "max_samples"
    assert len(t.samples_ms) == 12 and min(t.samples_ms) >= 0.9
    assert len(flushes) == 12 + t.warmup_calls  # one flush before every call, outside windows


def test_xpu_without_events_falls_back_to_host_sync(monkeypatch):
    api = _fake_device_module(with_events=False)
    monkeypatch.setattr(torch, "xpu", api)
    t = timers.time_xpu(lambda: None, QUICK, flush=None)
    assert t.timer == "host-sync" and t.l2 == "hot" and len(t.samples_ms) == 12
    assert api.calls["sync"] >= 12  # each sample waits for the device inside its window


def test_host_timer_unchanged_without_sync():
    t = timers.time_host(lambda: None, QUICK)
    assert t.timer == "host" and t.l2 == "n/a"
