"""Cold-L2 timing for the own kernels' tuners (Triton GEMM and attention, CUTLASS GEMM) and for
the FlashInfer provider's plan choice.

Every launch is preceded by *reading* 256 MB, which evicts the L2 cleanly, as the harness's
cold-L2 protocol does (harness/measure/timer.py, L2Flusher), so candidates are ranked under the
conditions they are reported under. triton.testing.do_bench flushes with zero_(), which leaves
the L2 full of dirty lines whose write-back lands inside the next kernel's window and taxes
HBM-bound candidates (decode attention, small-M GEMMs) more than others: it compresses or flips
exactly the rankings these tuners exist to get right.

Each sample is also held (stream_hold.py) until its launch is queued, as the harness timer's
samples are: a launch with host work in front of it (a CUTLASS plan, a split-K workspace clear)
otherwise lets the GPU reach the start event first and idle there. The CUTLASS tuner timed that
way before (H100, gemm_llama-r3): its candidates timed 24-49 us for kernels the harness then
measured at 17-23 us, and the noise picked a 22 us kernel over a 17 us one at 8x4096x4096.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from typing import Any

import torch

from .stream_hold import StreamHold

# Short timing windows: candidates differ by >>1%, and a Llama sweep tunes hundreds of shapes.
_WARMUP_MS = 5
_REP_MS = 25
# ...but never fewer samples than this: a 7 ms FMHA (D 128, 16k tokens) got three in 25 ms, and
# on an H100 two configs 10% apart swapped ranks between two runs (results/h100/README.md).
_MIN_SAMPLES = 10
_FLUSH_BYTES = 256 << 20  # as do_bench: > 4x the H200's 60 MB L2 (= MI300X's Infinity Cache)
_BATCH = 64  # samples queued between synchronisations, each behind its own hold slot
_FLUSH: dict[torch.device, tuple[torch.Tensor, torch.Tensor]] = {}
_HOLD: dict[torch.device, StreamHold] = {}


def _device_state(device: torch.device) -> tuple[Callable[[], None], StreamHold]:
    """The read flush and the stream hold of this device, made once per process."""
    if device not in _FLUSH:
        buf = torch.ones(_FLUSH_BYTES // 4, dtype=torch.float32, device=device)
        _FLUSH[device] = (buf, torch.empty((), dtype=torch.float32, device=device))
        _HOLD[device] = StreamHold(device, capacity=_BATCH)
    buf, sink = _FLUSH[device]

    def flush() -> None:
        torch.sum(buf, dim=0, out=sink)

    return flush, _HOLD[device]


# At the power cap (bench_capped): long enough a warm-up for the limiter to settle on this
# kernel's power, with the GPU already hot from the candidate before it, as in a sweep.
CAPPED_WARMUP_MS = 150
CAPPED_REP_MS = 100


def bench_cold(
    fn: Callable[[], Any],
    device: torch.device,
    warmup_ms: float | None = None,
    rep_ms: float | None = None,
) -> float:
    """Median ms of fn() over ~rep_ms of launches (at least _MIN_SAMPLES), each after reading
    _FLUSH_BYTES (clean eviction of the L2) and behind a stream hold (a sample whose hold
    expired is timed again: _held_samples); otherwise do_bench's schedule (5-call estimate,
    warmup_ms of calls, CUDA events around each call alone).
    Without windows given, the tuners' burst: _WARMUP_MS and _REP_MS."""
    # the burst windows are read here, not bound as defaults, so tests can shrink them
    warmup_ms = _WARMUP_MS if warmup_ms is None else warmup_ms
    rep_ms = _REP_MS if rep_ms is None else rep_ms
    with torch.cuda.device(device):
        flush, hold = _device_state(device)
        fn()
        torch.cuda.synchronize()
        # Five flushed calls, each call timed alone too: the samples' count comes from the whole
        # cycle (flush and call, as the samples run), the warm-up's from the call alone, since
        # the warm-up runs no flush (with the flush counted, a 0.1 ms GEMM behind a 256 MB read
        # got a "150 ms" warm-up of 80-110 ms).
        cycle = [torch.cuda.Event(enable_timing=True) for _ in range(2)]
        alone = [
            (torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
            for _ in range(5)
        ]
        cycle[0].record()
        for begin, finish in alone:
            flush()
            begin.record()
            fn()
            finish.record()
        cycle[1].record()
        torch.cuda.synchronize()
        cycle_ms = max(cycle[0].elapsed_time(cycle[1]) / 5, 1e-3)
        call_ms = max(statistics.median(b.elapsed_time(f) for b, f in alone), 1e-3)
        for _ in range(max(1, int(warmup_ms / call_ms))):
            fn()
        samples = _held_samples(fn, flush, hold, max(_MIN_SAMPLES, int(rep_ms / cycle_ms)))
    return statistics.median(samples)


def _held_samples(
    fn: Callable[[], Any], flush: Callable[[], None], hold: StreamHold, wanted: int
) -> list[float]:
    """`wanted` samples of fn() alone, each after a flush and behind its own hold. A sample whose
    hold expired may hold host launch latency (the GPU reached its start event before fn() was
    queued): it is dropped and timed again, as long as fewer than half of a batch expire; a
    batch with more is kept whole (a hold that cannot be released in time is a machine fault
    that retrying will not mend), so a tuner always gets its samples."""
    samples: list[float] = []
    while len(samples) < wanted:
        events = [
            (torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
            for _ in range(min(_BATCH, wanted - len(samples)))
        ]
        for i, (begin, finish) in enumerate(events):
            flush()
            hold.arm(i)  # the GPU waits here until fn() below is queued
            begin.record()
            fn()
            finish.record()
            hold.release(i)
        torch.cuda.synchronize()
        expired = hold.expired_mask(len(events))
        batch = [begin.elapsed_time(finish) for begin, finish in events]
        if 2 * int(expired.sum()) < len(events):
            batch = [t for t, gone in zip(batch, expired, strict=True) if not gone]
        samples += batch
    return samples


def alternating_medians(
    launches: dict[str, Callable[[], Any]], device: torch.device, rounds: int
) -> dict[str, float]:
    """Each launch's median ms over `rounds` rounds that time every launch once in turn
    (bench_cold, 50 ms warm-up, 200 ms window): the probes' A/B, where a drift of the machine
    over the rounds lands on every launch alike rather than on whichever ran last."""
    times: dict[str, list[float]] = {name: [] for name in launches}
    for _ in range(rounds):
        for name, launch in launches.items():
            times[name].append(bench_cold(launch, device, warmup_ms=50, rep_ms=200))
    return {name: statistics.median(t) for name, t in times.items()}


def bench_capped(fn: Callable[[], Any], device: torch.device) -> float:
    """bench_cold with a warm-up and a window long enough for the power limiter: a heavy GEMM's
    25 ms burst runs at the top clock before the limiter engages, while the sweep times it over
    >= 0.5 s at the cap, where the ranking of candidates can flip (capped_retime.py)."""
    return bench_cold(fn, device, CAPPED_WARMUP_MS, CAPPED_REP_MS)
