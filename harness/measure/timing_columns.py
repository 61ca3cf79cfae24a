"""A timed point's row columns: latency statistics, TFLOP/s and GB/s from the problem's own
work counts, the protocol facts the timer reports, the spread guard's verdict and telemetry."""

from __future__ import annotations

from dataclasses import asdict

from harness.measure import timer as timers
from harness.measure.spread_guard import p90_over_p10
from harness.measure.stats import summarize
from harness.problems import Problem


def timing_columns(
    problem: Problem,
    timing: timers.Timing,
    tel,
    unstable: str | None = None,
    attempts: int = 1,
) -> dict:
    """Status ok with latency statistics, TFLOP/s and GB/s (from the problem's own work
    counts, never a provider's), protocol facts, the spread guard's verdict and telemetry of
    one timed point."""
    s = summarize(timing.samples_ms)
    secs = s.median / 1e3
    out = dict(
        status="ok",
        reason=None,
        latency_ms_median=s.median,
        latency_ms_mean=s.mean,
        latency_ms_min=s.min,
        latency_ms_p10=s.p10,
        latency_ms_p90=s.p90,
        latency_ms_std=s.std,
        latency_rse=s.rse_median,
        latency_p90_over_p10=p90_over_p10(timing.samples_ms),
        unstable=unstable is not None,
        unstable_reason=unstable,
        timing_attempts=attempts,
        stream_hold=timing.stream_hold,
        hold_expired=timing.hold_expired,
        n_samples=s.n,
        samples_ms=[float(x) for x in timing.samples_ms],
        stop_reason=timing.stop_reason,
        tflops=problem.flops() / secs / 1e12,
        gbps=problem.min_bytes() / secs / 1e9,
        timer=timing.timer,
        l2=timing.l2,
        warmup_calls=timing.warmup_calls,
        calls_per_sample=timing.calls_per_sample,
        rotation_sets=timing.rotation_sets,
    )
    if tel is not None:
        t = asdict(tel)
        t.pop("source")
        out.update(t)
    if hasattr(problem, "derived"):  # problem-specific columns from the timing (latency per hop)
        out.update(problem.derived(out))
    return out
