"""The power settle before a point's warm-up: the kernel run until the board's power limiter
has settled, so every provider of a point is timed from the state a sustained stream of it
reaches (protocol.power_settle_ms), whichever provider ran just before it."""

from __future__ import annotations

import time

from harness.measure.protocol import Protocol

# The settle runs the call in slices this long, then asks the limiter (an NVML read costs ~1 ms).
_SETTLE_SLICE_S = 0.1
_SETTLE_MAX_CALLS_PER_SYNC = 8
_SETTLE_SYNC_EVERY_S = 0.01  # launches return at once: wait for them about this often


def settle_power(run, flush, protocol: Protocol, telemetry, sync) -> float | None:
    """Run flush + call in slices until the power limiter has settled (telemetry.PowerState)
    or power_settle_ms has passed; the seconds spent, or None where telemetry cannot tell (no
    enforced power limit to read, or turned off), in which case nothing runs.

    The first slice always runs: an idle GPU reads as settled before the kernel has drawn any
    power. A light kernel costs one or two slices; a heavy one runs until the board's averaged
    power has reached the limit, so every provider of a point is timed from the state a
    sustained stream of it reaches, whichever ran just before it (protocol.power_settle_ms says
    what that changed). The calls are synchronised every ~10 ms of them: a slice of unsynchronised
    launches queued up to 7.7 s of a 22 ms GEMM (H100, session 41)."""
    limit_s = protocol.power_settle_ms / 1e3
    if telemetry is None or limit_s <= 0 or not telemetry.available:
        return None
    if (state := telemetry.power_state()) is None:
        return None
    t0 = time.perf_counter()
    if flush is not None:
        flush()
    run()
    sync()
    per_call = time.perf_counter() - t0
    batch = max(1, min(_SETTLE_MAX_CALLS_PER_SYNC, int(_SETTLE_SYNC_EVERY_S / max(per_call, 1e-6))))
    while True:
        t = time.perf_counter()
        while time.perf_counter() - t < _SETTLE_SLICE_S:
            for _ in range(batch):
                if flush is not None:
                    flush()
                run()
            sync()
        spent = time.perf_counter() - t0
        before, state = state, telemetry.power_state()
        if spent >= limit_s or state is None or not state.unsettled(before.power_w):
            return spent
