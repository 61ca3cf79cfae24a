"""Timing a collective on every rank in lockstep (the distributed form of timer.time_cuda_events).

Every rank must issue exactly the same calls, or one waits forever for a peer that has moved on:
so rank 0 alone decides when warm-up ends and when sampling stops (its StopRule, on the samples
every rank shares) and broadcasts the decision after each batch. A sample is the time of one call
as the slowest rank saw it (MAX over ranks of each call's time, as nccl-tests reports the slowest
rank): a collective is done when its last rank is.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import torch
import torch.distributed as dist

from harness.device import DeviceInfo
from harness.measure.protocol import Protocol
from harness.measure.timer import StopRule, Timing

Closure = Callable[[], object]
_BATCH_TARGET_MS = 50.0  # calls between decisions, as in time_cuda_events
_MAX_BATCH = 100
_STOPS = (None, "converged", "time_cap", "max_samples")


def _sync(device: DeviceInfo) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device.index)


def decide(value: int, device: DeviceInfo) -> int:
    """Rank 0's `value`, on every rank (a broadcast; it also lines the ranks up on the host)."""
    t = torch.tensor([value], dtype=torch.int64, device=device.torch_device)
    dist.broadcast(t, src=0)
    return int(t.item())


def _max_over_ranks(samples: list[float], device: DeviceInfo) -> list[float]:
    t = torch.tensor(samples, dtype=torch.float64, device=device.torch_device)
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    return t.tolist()


def _warm_up(fn: Closure, p: Protocol, device: DeviceInfo) -> int:
    """Batches of doubling size until rank 0 has spent warmup_ms (at least one call)."""
    t0, calls, batch = time.perf_counter(), 0, 1
    while True:
        for _ in range(batch):
            fn()
        _sync(device)
        calls += batch
        done = (time.perf_counter() - t0) * 1e3 >= p.warmup_ms
        if decide(int(done), device):
            return calls
        batch = min(2 * batch, _MAX_BATCH)


def _batch_times(fn: Closure, n: int, device: DeviceInfo) -> list[float]:
    """Per-call times in ms on this rank: an event pair around each call on the current stream
    (the collective's stream waits for the start event and the current stream for its end), or
    the host clock where calls return when done (gloo on the CPU)."""
    if device.type != "cuda":
        out = []
        for _ in range(n):
            t = time.perf_counter_ns()
            fn()
            out.append((time.perf_counter_ns() - t) / 1e6)
        return out
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(n)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(n)]
    for s, e in zip(starts, ends, strict=True):
        s.record()
        fn()
        e.record()
    ends[-1].synchronize()
    return [s.elapsed_time(e) for s, e in zip(starts, ends, strict=True)]


def time_collective(
    fn: Closure, p: Protocol, device: DeviceInfo, on_start: Callable[[], None] = lambda: None
) -> Timing:
    """Warm up, then sample per call on every rank until rank 0's StopRule says stop; each
    sample is the slowest rank's time for that call (sync_every_sample: one call per batch, the
    ranks lined up after each). The L2 is hot (buffers are reused, as in nccl-tests): a flush
    between calls would also let ranks drift apart (measure.lockstep.check_protocol refuses
    the protocol values this cannot honour)."""
    is_root = dist.get_rank() == 0
    warm = _warm_up(fn, p, device)
    on_start()
    rule, batch = StopRule(p), 1
    samples: list[float] = []
    while True:
        code = _STOPS.index(rule.reason(samples)) if is_root else 0
        why = _STOPS[decide(code, device)]
        if why is not None:
            break
        n = min(batch, p.max_samples - len(samples))
        new = _max_over_ranks(_batch_times(fn, n, device), device)
        samples.extend(new)
        per = max(sorted(new)[len(new) // 2], 1e-3)  # the same on every rank
        batch = 1 if p.sync_every_sample else int(min(_MAX_BATCH, max(1, _BATCH_TARGET_MS / per)))
    timer = "cuda-events" if device.type == "cuda" else "host"
    return Timing(samples, timer, "hot" if device.is_gpu else "n/a", why, 1, warm)
