"""The power settle before a point's warm-up (power_settle.settle_power) and the limiter reading that
ends it (telemetry.PowerState), with the GPU and NVML faked. No timing is asserted."""

from __future__ import annotations

import time

from harness.measure import power_settle, telemetry
from harness.measure.protocol import Protocol
from harness.measure.telemetry import PowerState


class FakeTelemetry:
    """Replays limiter readings (the first is the idle reading before the settle runs)."""

    available = True

    def __init__(self, states: list[PowerState | None]):
        self.states, self.reads = list(states), 0

    def power_state(self) -> PowerState | None:
        self.reads += 1
        return self.states.pop(0) if len(self.states) > 1 else self.states[0]


IDLE, CREDIT, CAP = (
    PowerState(False, 90, 700),
    PowerState(True, 620, 700),
    PowerState(True, 697, 700),
)


def _settle(tel, protocol: Protocol | None = None, run=None):
    protocol = protocol or Protocol()
    events: list[str] = []
    spent = power_settle.settle_power(
        run or (lambda: events.append("run")),
        lambda: events.append("flush"),
        protocol,
        tel,
        lambda: events.append("sync"),
    )
    return spent, events


def test_a_heavy_kernel_runs_until_the_averaged_power_reaches_the_limit():
    tel = FakeTelemetry([IDLE, CREDIT, CREDIT, CAP])
    spent, events = _settle(tel)
    assert tel.reads == 4 and spent is not None and spent > 0  # idle, then three slices
    assert events[:3] == ["flush", "run", "sync"] and events.count("flush") == events.count("run")


def test_a_light_kernel_stops_once_its_power_stops_climbing():
    light, more = PowerState(False, 180, 700), PowerState(False, 185, 700)
    tel = FakeTelemetry([IDLE, light, more])
    _settle(tel)
    assert tel.reads == 3  # 90 -> 180 W is still climbing; 180 -> 185 W is not


def test_the_limit_bounds_the_settle_and_no_power_limit_runs_nothing():
    never = FakeTelemetry([IDLE, CREDIT])
    spent, _ = _settle(never, Protocol(power_settle_ms=1.0))
    assert never.reads == 2 and spent is not None  # past the limit after the first slice
    assert _settle(None) == (None, [])
    assert _settle(FakeTelemetry([None])) == (None, [])  # AMD, Intel, NVML without a limit
    assert _settle(FakeTelemetry([IDLE, CAP]), Protocol(power_settle_ms=0)) == (None, [])


def test_calls_are_waited_for_often_and_a_slow_call_is_not_batched():
    _, events = _settle(FakeTelemetry([IDLE, CAP]))
    runs_between = [len(c) for c in "".join(e[0] for e in events if e != "flush").split("s") if c]
    assert runs_between and max(runs_between) <= power_settle._SETTLE_MAX_CALLS_PER_SYNC
    slow: list[str] = []

    def slow_call() -> None:
        time.sleep(0.03)  # 30 ms a call: more than the ~10 ms between waits
        slow.append("run")

    _, events = _settle(FakeTelemetry([IDLE, CAP]), run=slow_call)
    assert events.count("sync") == len(slow)  # every call waited for


class FakeReader:
    source = "nvml"

    def __init__(self, power: float, throttle: int, limit: float | None = 700.0):
        self.reading = {"power": power, "throttle": throttle}
        if limit is not None:
            self.power_limit_w = lambda: limit

    def read(self) -> dict:
        return self.reading


def _tel(reader) -> telemetry.Telemetry:
    t = telemetry.Telemetry("none", 0)
    t._reader = reader
    return t


def test_the_reading_and_what_counts_as_unsettled():
    assert _tel(FakeReader(620.0, 0x4)).power_state() == CREDIT
    assert _tel(FakeReader(400.0, 0x4, limit=None)).power_state() is None
    assert _tel(None).power_state() is None
    assert CREDIT.unsettled(90) and not CAP.unsettled(620)  # capped: by the limit alone
    assert PowerState(False, 400, 700).unsettled(90)  # uncapped, still climbing
    assert not PowerState(False, 400, 700).unsettled(390) and not IDLE.unsettled(None)
