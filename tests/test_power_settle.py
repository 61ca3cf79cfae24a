"""The power settle before a point's warm-up (point.settle_power) and the telemetry reading that
ends it (Telemetry.power_unsettled), with the GPU and NVML faked. No timing is asserted."""

from __future__ import annotations

from harness.measure import point, telemetry
from harness.measure.protocol import Protocol


class FakeTelemetry:
    """Reports the limiter unsettled for the first `unsettled` checks."""

    available = True

    def __init__(self, unsettled: int):
        self.left, self.checks = unsettled, 0

    def power_unsettled(self) -> bool:
        self.checks += 1
        self.left -= 1
        return self.left >= 0


def _settle(tel, protocol: Protocol | None = None):
    protocol = protocol or Protocol()
    calls: list[str] = []
    spent = point.settle_power(
        lambda: calls.append("run"), lambda: calls.append("flush"), protocol, tel, lambda: None
    )
    return spent, calls


def test_settle_runs_slices_until_the_limiter_settles():
    tel = FakeTelemetry(unsettled=2)
    spent, calls = _settle(tel)
    assert tel.checks == 3 and spent is not None and spent > 0
    assert calls[:2] == ["flush", "run"] and calls.count("flush") == calls.count("run")


def test_the_settle_waits_for_its_calls_every_few_launches():
    """Launches return at once: the slice must sync as it goes, or a slice of host time queues
    seconds of a long kernel."""
    events: list[str] = []
    point.settle_power(
        lambda: events.append("run"),
        None,
        Protocol(),
        FakeTelemetry(0),
        lambda: events.append("sync"),
    )
    runs_between = [len(chunk) for chunk in "".join(e[0] for e in events).split("s") if chunk]
    assert runs_between and max(runs_between) <= point._SETTLE_CALLS_PER_SYNC


def test_a_light_kernel_costs_one_slice_and_the_limit_bounds_a_heavy_one():
    light = FakeTelemetry(unsettled=0)
    assert _settle(light)[0] is not None and light.checks == 1
    never = FakeTelemetry(unsettled=10**9)
    spent, _ = _settle(never, Protocol(power_settle_ms=1.0))
    assert never.checks == 0 and spent is not None  # past the limit after the first slice


def test_no_telemetry_or_turned_off_runs_nothing():
    assert _settle(None) == (None, [])
    assert _settle(FakeTelemetry(5), Protocol(power_settle_ms=0)) == (None, [])


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


def test_unsettled_means_capped_while_the_averaged_power_is_still_below_the_limit():
    assert _tel(FakeReader(620.0, 0x4)).power_unsettled()  # on the idle spell's budget
    assert not _tel(FakeReader(697.0, 0x4)).power_unsettled()  # at the cap: settled
    assert not _tel(FakeReader(400.0, 0x0)).power_unsettled()  # a light kernel: no limiter
    assert not _tel(FakeReader(400.0, 0x4, limit=None)).power_unsettled()  # no limit to read
    assert not _tel(None).power_unsettled()
