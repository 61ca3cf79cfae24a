"""Timers: per-call device events (CUDA/HIP, or Intel XPU), CUDA-graph replay, host clock.
They only ever call closures."""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

import torch
from harness_kernels.stream_hold import StreamHold

from harness.measure.protocol import FLUSH_MODES, Protocol
from harness.measure.stats import rse_of_median

Closure = Callable[[], object]
_BATCH_TARGET_MS = 50.0  # enqueue this much work between host syncs while sampling
_MAX_BATCH = 100  # samples queued between syncs (each with its own hold slot)
_GRAPH_REPLAY_TARGET_MS = 1.0  # hot graph replays hold this much work, so launch cost vanishes


@dataclass
class Timing:
    """Raw samples of one point and how they were obtained."""

    samples_ms: list[float]
    timer: str
    l2: str  # cold | hot | cold-partial (rotation capped below the target footprint)
    stop_reason: str  # converged | time_cap | max_samples
    calls_per_sample: int
    warmup_calls: int
    rotation_sets: int = 1
    stream_hold: str = (
        "none"  # flag: a blocking kernel held the stream until each launch was queued
    )
    hold_expired: int = 0  # samples whose hold timed out before the launch was queued


_holds: dict[int, StreamHold] = {}


def stream_hold(p: Protocol, api) -> StreamHold | None:
    """The blocking kernel of this device (made once per process), or None where the protocol
    turns it off or the API has none (Intel XPU: no Triton backend in our dependencies)."""
    if not p.stream_hold or api is not torch.cuda:
        return None
    index = torch.cuda.current_device()
    if index not in _holds:
        _holds[index] = StreamHold(torch.device("cuda", index))
    return _holds[index]


class StopRule:
    """Adaptive stop: noise of the median under target, else a time cap or a sample cap."""

    def __init__(self, p: Protocol) -> None:
        self.p = p
        self.t0 = time.perf_counter()

    def reason(self, samples: Sequence[float]) -> str | None:
        n = len(samples)
        if n >= self.p.max_samples:
            return "max_samples"
        long_enough = time.perf_counter() - self.t0 >= min(self.p.min_time_s, self.p.max_time_s)
        if n >= self.p.min_samples and long_enough and rse_of_median(samples) <= self.p.rse_target:
            return "converged"
        if time.perf_counter() - self.t0 >= self.p.max_time_s and n >= min(3, self.p.min_samples):
            return "time_cap"
        return None


def _warm_up(call: Closure, p: Protocol, sync: Callable[[], None]) -> int:
    """Run until warmup_ms of wall time has passed (at least once): clocks ramp, caches fill."""
    t0, calls = time.perf_counter(), 0
    while calls == 0 or (time.perf_counter() - t0) * 1e3 < p.warmup_ms:
        call()
        sync()
        calls += 1
    return calls


def time_host(
    fn: Closure,
    p: Protocol,
    on_start: Callable[[], None] = lambda: None,
    sync: Callable[[], None] | None = None,
    flush: Closure | None = None,
) -> Timing:
    """perf_counter around each call; for CPU devices, whose calls return when done. With
    `sync` (a device without timing events), each call is followed by a device sync inside the
    window ("host-sync": launch and sync overhead included), and `flush` runs before it."""
    warm = _warm_up(lambda: (flush and flush(), fn()), p, sync or (lambda: None))
    on_start()
    rule = StopRule(p)
    samples: list[float] = []
    while (why := rule.reason(samples)) is None:
        if flush is not None:
            flush()
            if sync is not None:
                sync()
        t = time.perf_counter_ns()
        fn()
        if sync is not None:
            sync()
        samples.append((time.perf_counter_ns() - t) / 1e6)
    if sync is None:
        return Timing(samples, "host", "n/a", why, 1, warm)
    return Timing(samples, "host-sync", "cold" if flush else "hot", why, 1, warm)


def time_xpu(fn: Closure, p: Protocol, flush: Closure | None, on_start=lambda: None) -> Timing:
    """Intel GPUs: XPU events when this torch has them, else the host clock around call + sync."""
    xpu = torch.xpu
    if hasattr(xpu, "Event"):
        return time_cuda_events(fn, p, flush, on_start, api=xpu, name="xpu-events")
    return time_host(fn, p, on_start, sync=xpu.synchronize, flush=flush)


def time_cuda_events(
    fn: Closure,
    p: Protocol,
    flush: Closure | None,
    on_start: Callable[[], None] = lambda: None,
    api=None,
    name: str = "cuda-events",
    hold: StreamHold | None | Literal["auto"] = "auto",
) -> Timing:
    """One event pair per call; with `flush`, the L2 is overwritten before each (untimed) call.

    `api` is the torch device module with Event and synchronize: torch.cuda (CUDA, and HIP on
    ROCm builds) by default, torch.xpu on Intel GPUs (with name "xpu-events"). `hold` is the
    stream-holding kernel ("auto": this device's, where the protocol and the API allow)."""
    api = api or torch.cuda
    sync = api.synchronize
    if hold == "auto":
        hold = stream_hold(p, api)
    warm = _warm_up(lambda: (flush and flush(), fn()), p, sync)
    on_start()
    rule, batch, expired = StopRule(p), 1, 0
    samples: list[float] = []
    while (why := rule.reason(samples)) is None:
        n = min(batch, p.max_samples - len(samples))
        starts = [api.Event(enable_timing=True) for _ in range(n)]
        ends = [api.Event(enable_timing=True) for _ in range(n)]
        for i, (s, e) in enumerate(zip(starts, ends, strict=True)):
            if flush is not None:
                flush()  # before the start event: the flush is never inside the window
            if hold is not None:
                hold.arm(i)  # the GPU waits here until release(i): the launch below is queued
            s.record()
            fn()
            e.record()
            if hold is not None:
                hold.release(i)
        ends[-1].synchronize()
        if hold is not None:
            expired += hold.expired(n)
        new = [s.elapsed_time(e) for s, e in zip(starts, ends, strict=True)]
        samples.extend(new)
        per = max(sorted(new)[len(new) // 2], 1e-3)
        batch = 1 if p.sync_every_sample else int(min(_MAX_BATCH, max(1, _BATCH_TARGET_MS / per)))
    held = "flag" if hold is not None else "none"
    return Timing(samples, name, "cold" if flush else "hot", why, 1, warm, 1, held, expired)


def time_cuda_graph(
    fns: Sequence[Closure],
    p: Protocol,
    cold: bool,
    cold_complete: bool,
    on_start: Callable[[], None] = lambda: None,
) -> Timing:
    """Capture calls into one CUDA graph and time replays; a sample is replay time / calls.

    Cold: one call per input set, the sets together larger than the L2, so each call finds its
    inputs evicted by the others. Hot: the first closure repeated to fill ~1 ms per replay.
    """
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # capture needs the closures warmed outside the capture stream
        for f in fns:
            f()
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    if cold:
        calls = list(fns)
    else:
        calls = [fns[0]] * _hot_repeats(fns[0])
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for f in calls:
            f()
    # the hold before the warm-up, as the events timer makes it: its first use compiles and
    # synchronises, which after the warm-up would idle the GPU just before the first sample
    hold = stream_hold(p, torch.cuda)
    warm = _warm_up(graph.replay, p, torch.cuda.synchronize) * len(calls)  # calls, not replays
    on_start()
    rule, expired = StopRule(p), 0
    samples: list[float] = []
    while (why := rule.reason(samples)) is None:
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        if hold is not None:  # the GPU is idle here (synchronised per sample): hold it
            hold.arm(0)
        s.record()
        graph.replay()
        e.record()
        if hold is not None:
            hold.release(0)
        e.synchronize()
        if hold is not None:
            expired += hold.expired(1)
        samples.append(s.elapsed_time(e) / len(calls))
    l2 = ("cold" if cold_complete else "cold-partial") if cold else "hot"
    held = "flag" if hold is not None else "none"
    sets = len(fns) if cold else 1
    return Timing(samples, "cuda-graph", l2, why, len(calls), warm, sets, held, expired)


def _hot_repeats(fn: Closure) -> int:
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record()
    for _ in range(3):
        fn()
    e.record()
    e.synchronize()
    per = max(s.elapsed_time(e) / 3, 1e-3)
    return int(min(100, max(1, math.ceil(_GRAPH_REPLAY_TARGET_MS / per))))


class L2Flusher:
    """Evicts the last-level cache before a call by streaming a buffer of `factor` (default 2)
    times its size.

    The flush READS (a reduction into one value): flushing by writing, as zero_() does, leaves
    the cache full of dirty lines, and the next memory-bound kernel then pays their write-back
    to HBM inside its own timed window (on the H200 a 50 MB decode GEMM timed 2x slower after a
    zero_() flush than under graph replay with rotated inputs). mode="write" keeps the old
    behaviour for comparison.

    Size it by the last-level cache (DeviceInfo.flush_bytes): on CDNA3 that is the 256 MiB
    Infinity Cache behind a 4 MiB-per-XCD L2, so 2x the L2 alone would leave inputs resident.
    """

    def __init__(
        self, device: torch.device, cache_bytes: int | None, mode: str = "read", factor: float = 2.0
    ) -> None:
        if mode not in FLUSH_MODES:
            raise ValueError(
                f"protocol.l2_flush: unknown '{mode}'; allowed: {', '.join(FLUSH_MODES)}"
            )
        # Unknown cache size: assume 128 MiB. Whole float32 elements (the buffer's unit).
        nbytes = int(factor * (cache_bytes or (128 << 20))) // 4 * 4
        self.nbytes = nbytes
        self.mode = mode
        self.buf = torch.ones(nbytes // 4, dtype=torch.float32, device=device)
        self.sink = torch.empty((), dtype=torch.float32, device=device)

    def __call__(self) -> None:
        if self.mode == "write":
            self.buf.zero_()
        else:
            torch.sum(self.buf, dim=0, out=self.sink)


def rotation_sets(
    set_bytes: int, cache_bytes: int | None, p: Protocol, free_bytes: int
) -> tuple[int, bool]:
    """Input sets needed so they total >= factor x cache; (sets, whether the target was met)."""
    cache = cache_bytes or (128 << 20)
    target = p.l2_rotation_factor * cache
    want = max(1, math.ceil(target / max(set_bytes, 1)))
    limit = max(1, min(p.max_rotation_sets, int(0.25 * free_bytes // max(set_bytes, 1))))
    sets = min(want, limit)
    return sets, sets * set_bytes >= target
