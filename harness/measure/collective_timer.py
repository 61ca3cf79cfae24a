"""Timing a collective on every rank in lockstep (the distributed form of timer.time_cuda_events).

Every rank must issue exactly the same calls, or one waits forever for a peer that has moved on:
so rank 0 alone decides when warm-up ends and when sampling stops (its StopRule, on the samples
every rank shares) and broadcasts the decision after each batch. A sample is the time of one call
as the slowest rank saw it (MAX over ranks of each call's time, as nccl-tests reports the slowest
rank): a collective is done when its last rank is.

time_collective_graph is the form a tensor-parallel step replayed as a CUDA graph sees: the
calls captured back to back in one graph on every rank, a sample being one replay's time over
its calls (the slowest rank's). Eager per-call timing carries each call's host launch and the
ranks' host skew (the ranks line up on the host, then each records its start event; the
collective waits on the GPU for the last rank to arrive): every NCCL all-reduce up to
4 MB timed 35-72 us that way on an H200 pair, up to 16 MiB 77-88 us on an H100 pair, where
graph replay gives 9-11 us up to 256 KiB (results/h200x2, results/h100x2).
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
_GRAPH_REPLAY_TARGET_MS = 1.0  # work per replay, so the replay's own launch is amortised
_MAX_GRAPH_CALLS = 64


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


def _sample(fn: Closure, p: Protocol, device: DeviceInfo, calls: int = 1):
    """Sample fn (which holds `calls` collective calls) until rank 0's StopRule says stop:
    (per-call samples, the slowest rank's, and why sampling stopped)."""
    is_root = dist.get_rank() == 0
    rule, batch = StopRule(p), 1
    samples: list[float] = []
    while True:
        code = _STOPS.index(rule.reason(samples)) if is_root else 0
        why = _STOPS[decide(code, device)]
        if why is not None:
            return samples, why
        n = min(batch, p.max_samples - len(samples))
        new = [t / calls for t in _max_over_ranks(_batch_times(fn, n, device), device)]
        samples.extend(new)
        per = max(sorted(new)[len(new) // 2] * calls, 1e-3)  # the same on every rank
        batch = 1 if p.sync_every_sample else int(min(_MAX_BATCH, max(1, _BATCH_TARGET_MS / per)))


def time_collective(
    fn: Closure, p: Protocol, device: DeviceInfo, on_start: Callable[[], None] = lambda: None
) -> Timing:
    """Warm up, then sample per call on every rank until rank 0's StopRule says stop; each
    sample is the slowest rank's time for that call (sync_every_sample: one call per batch, the
    ranks lined up after each). The L2 is hot (buffers are reused, as in nccl-tests): a flush
    between calls would also let ranks drift apart (measure.lockstep.check_protocol refuses
    the protocol values this cannot honour)."""
    warm = _warm_up(fn, p, device)
    on_start()
    samples, why = _sample(fn, p, device)
    timer = "cuda-events" if device.type == "cuda" else "host"
    return Timing(samples, timer, "hot" if device.is_gpu else "n/a", why, 1, warm)


def _calls_per_replay(fn: Closure, device: DeviceInfo) -> int:
    """Rank 0's choice, on every rank: enough calls for about _GRAPH_REPLAY_TARGET_MS per
    replay, from five eager calls (an over-estimate of the graph's per-call time, so at most
    the target)."""
    times = _max_over_ranks(_batch_times(fn, 5, device), device)
    per = max(sorted(times)[len(times) // 2], 1e-3)
    return decide(int(min(_MAX_GRAPH_CALLS, max(1, _GRAPH_REPLAY_TARGET_MS // per))), device)


def _capture(fn: Closure, calls: int, device: DeviceInfo) -> torch.cuda.CUDAGraph:
    """`calls` calls of fn captured back to back into one graph (the collective is already
    warm: the check and _calls_per_replay ran it, so its communicator exists)."""
    _sync(device)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(calls):
            fn()
    _sync(device)
    return graph


def time_collective_graph(
    fn: Closure, p: Protocol, device: DeviceInfo, on_start: Callable[[], None] = lambda: None
) -> Timing:
    """Capture calls of fn into one CUDA graph on every rank, warm up by replays, then sample
    replays until rank 0's StopRule says stop; a sample is the slowest rank's replay time over
    the calls it holds (L2 hot, buffers reused, as time_collective)."""
    if device.type != "cuda":
        raise ValueError(f"collectives are captured in CUDA graphs on NVIDIA GPUs, not {device}")
    calls = _calls_per_replay(fn, device)
    graph = _capture(fn, calls, device)
    warm = _warm_up(graph.replay, p, device)
    on_start()
    samples, why = _sample(graph.replay, p, device, calls)
    return Timing(samples, "cuda-graph", "hot", why, calls, warm * calls)
