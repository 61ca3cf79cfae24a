"""The spread guard: spread or bimodal samples are re-timed, then flagged, never summarised
in silence."""

from harness.measure import point, spread_guard
from harness.measure.protocol import Protocol
from harness.measure.timer import Timing
from harness.measure.timing_columns import timing_columns

P = Protocol()
TIGHT = [0.0200 + 0.0001 * (i % 5) for i in range(100)]  # 20.0-20.4 us
BIMODAL = [0.0153] * 50 + [0.0279] * 30 + [0.0386] * 20  # the H200's 1x4096x4096 GEMM


def test_tight_samples_pass():
    assert spread_guard.judge(TIGHT, 0, P) is None
    assert spread_guard.p90_over_p10(TIGHT) < 1.03


def test_bimodal_samples_are_named_with_their_percentiles():
    why = spread_guard.judge(BIMODAL, 0, P)
    assert why is not None and "p90/p10 2.52 > 1.10" in why and "p10 15.3 us" in why


def test_a_spread_below_the_event_resolution_is_not_flagged():
    tiny = [0.0020] * 50 + [0.0026] * 50  # 2.0 vs 2.6 us: 1.3x, but 0.6 us apart
    assert spread_guard.p90_over_p10(tiny) > 1.2
    assert spread_guard.judge(tiny, 0, P) is None


def test_an_expired_hold_is_flagged_even_when_tight():
    why = spread_guard.judge(TIGHT, 3, P)
    assert why is not None and "stream hold expired in 3/100" in why


def _timing(samples, expired=0):
    return Timing(list(samples), "cuda-events", "cold", "converged", 1, 1, 1, "flag", expired)


def _guarded(monkeypatch, attempts, protocol=P):
    queue = list(attempts)
    monkeypatch.setattr(point, "_time_once", lambda *a, **k: queue.pop(0))
    return point._time_guarded([None], None, protocol, "cuda-events", True, None, None)


def test_a_spread_point_is_timed_again_and_the_stable_attempt_is_kept(monkeypatch):
    timing, why, attempts, _ = _guarded(monkeypatch, [_timing(BIMODAL), _timing(TIGHT)])
    assert attempts == 2 and why is None and timing.samples_ms == TIGHT


def test_a_point_spread_every_time_is_flagged_with_its_least_spread_attempt(monkeypatch):
    wider = [0.010] * 50 + [0.040] * 50
    timing, why, attempts, _ = _guarded(monkeypatch, [_timing(wider), _timing(BIMODAL)])
    assert attempts == 2 and timing.samples_ms == BIMODAL and why.startswith("p90/p10")


def test_the_reported_attempt_carries_its_own_telemetry(monkeypatch):
    """Attempt 1 was spread (say, throttled); attempt 2 is stable and reported: its clocks and
    throttle reasons are attempt 2's window's, not both windows' together."""
    from harness.measure.telemetry import TelemetrySummary

    class Windows:
        def __init__(self):
            self.opened = 0

        def start(self):
            self.opened += 1

        def stop(self):
            throttled = "sw_thermal_slowdown" if self.opened == 1 else ""
            return TelemetrySummary(sm_clock_mhz=1000.0 * self.opened, throttle_reasons=throttled)

    queue = [_timing(BIMODAL), _timing(TIGHT)]

    def once(closures, device, protocol, timer_name, complete, on_start, flusher):
        on_start()
        return queue.pop(0)

    monkeypatch.setattr(point, "_time_once", once)
    windows = Windows()
    timing, why, attempts, tel = point._time_guarded(
        [None], None, P, "cuda-events", True, windows, None
    )
    assert attempts == 2 and why is None and timing.samples_ms == TIGHT
    assert windows.opened == 2 and tel.sm_clock_mhz == 2000.0 and tel.throttle_reasons == ""


def test_host_timer_is_judged_but_not_repeated(monkeypatch):
    queue = [Timing(BIMODAL, "host", "n/a", "converged", 1, 1)]
    monkeypatch.setattr(point, "_time_once", lambda *a, **k: queue.pop(0))
    timing, why, attempts, _ = point._time_guarded([None], None, P, "host", True, None, None)
    assert attempts == 1 and why is not None


def test_timing_columns_carry_the_verdict():
    from harness.problems import GemmProblem

    problem = GemmProblem(m=64, n=64, k=64, dtype="fp32")
    cols = timing_columns(problem, _timing(BIMODAL), None, "p90/p10 2.52 > 1.10", 2)
    assert cols["unstable"] is True and cols["timing_attempts"] == 2
    assert cols["latency_p90_over_p10"] > 2.5 and cols["stream_hold"] == "flag"
    assert cols["unstable_reason"].startswith("p90/p10")
