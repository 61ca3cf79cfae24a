"""The harness side of one crosscheck point: check and time it under the default protocol
(measure_point, so the check-then-time rules are the sweep's own), then time the very closure
measure_point timed under the protocol matched to nvbench's cold mode.

measure_point prepares its closures itself; a copy of the provider whose prepare keeps what it
returns hands us the last one, the closure measure_point timed (one input set: the cuda-events
timer never rotates). The same closure then goes to nvbench.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

from harness.crosscheck import nvbench
from harness.device import DeviceInfo
from harness.measure import spread_guard
from harness.measure import timer as timers
from harness.measure.point import measure_point
from harness.measure.protocol import Protocol
from harness.measure.telemetry import Telemetry
from harness.measure.timing_columns import timing_columns
from harness.problems import Problem
from harness.providers import Provider
from harness.providers.registry import Prepared

# The matched protocol may need many samples to hold nvbench's 0.5 s of GPU time (250k for a
# 2 us kernel); its time cap, nvbench's timeout, bounds them first.
_MAX_SAMPLES = 1_000_000


def matched_protocol(default: Protocol, median_ms: float, timeout_s: float) -> Protocol:
    """The harness protocol nearest to nvbench's cold mode, for a kernel of `median_ms`.

    Same as nvbench: a write flush (sized 1x L2 by the caller's flusher), one warm-up call, the
    stream held while each sample is queued, at least 10 samples, a 0.5% noise target, its
    timeout as the time cap, no second attempt. Not expressible here: nvbench's min-time is 0.5 s
    of summed GPU time, ours a wall time, so the minimum sample count asks for as many samples as
    0.5 s of this kernel holds; its noise is the relative stdev of the samples, ours the relative
    standard error of the median.
    """
    need = math.ceil(nvbench.MIN_GPU_TIME_S * 1e3 / max(median_ms, 1e-6))
    min_samples = min(max(nvbench.MIN_SAMPLES, need), _MAX_SAMPLES)
    return dataclasses.replace(
        default,
        timer="cuda-events",
        l2="cold",
        l2_flush="write",
        warmup_ms=0.0,  # _warm_up calls once at least: nvbench's cold_warmup_runs=1
        stream_hold=True,
        min_samples=min_samples,
        max_samples=_MAX_SAMPLES,
        min_time_s=0.0,
        rse_target=nvbench.MAX_NOISE,
        max_time_s=timeout_s,
        max_attempts=1,
        sync_every_sample=True,  # nvbench synchronises after every cold sample
    )


@dataclass
class HarnessPart:
    """measure_point's row (default protocol), the matched protocol's timing columns, and the
    checked closure both timed (None, with the row's status and reason, unless ok)."""

    row: dict
    matched: dict | None = None
    closure: object | None = None
    skip: str | None = None  # why an ok point has no closure for nvbench

    def why_not(self) -> str | None:
        """Why nvbench cannot time this point, or None."""
        if self.closure is not None:
            return None
        return self.skip or f"harness {self.row.get('status')}: {self.row.get('reason')}"


def _keeping(provider: Provider, kept: list[Prepared]) -> Provider:
    """`provider` whose prepare remembers its latest result in `kept`."""

    def prepare(problem, inputs, device):
        prepared = provider.prepare(problem, inputs, device)
        kept[:] = [prepared]  # the check's closure is dropped once the timing one exists
        return prepared

    return dataclasses.replace(provider, prepare=prepare)


def time_point(
    problem: Problem,
    provider: Provider,
    device: DeviceInfo,
    default: Protocol,
    *,
    telemetry: Telemetry | None,
    default_flusher: timers.L2Flusher,
    matched_flusher: timers.L2Flusher,
    timeout_s: float | None,
    nvbench_timeout_s: float,
) -> HarnessPart:
    """(a) check and time under `default`, then (b) the same closure under the matched protocol."""
    kept: list[Prepared] = []
    row = measure_point(
        problem,
        _keeping(provider, kept),
        device,
        default,
        telemetry=telemetry,
        flusher=default_flusher,
        timeout_s=timeout_s,
    )
    if row["status"] != "ok":
        return HarnessPart(row)
    if not kept or kept[-1].external is not None:
        return HarnessPart(row, skip="the provider times itself (an external program)")
    closure = kept[-1].run
    matched = matched_protocol(default, row["latency_ms_median"], nvbench_timeout_s)
    timing = timers.time_cuda_events(
        closure,
        matched,
        matched_flusher,
        on_start=telemetry.start if telemetry else (lambda: None),
    )
    tel = telemetry.stop() if telemetry else None
    unstable = spread_guard.judge(timing.samples_ms, timing.hold_expired, matched)
    cols = timing_columns(problem, timing, tel, unstable)
    cols.pop("samples_ms")  # up to a million; the table keeps the statistics
    cols["min_samples"] = matched.min_samples
    return HarnessPart(row, cols, closure)
