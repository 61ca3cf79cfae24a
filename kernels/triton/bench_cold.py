"""Cold-L2 timing for the own Triton kernels' tuners (GEMM and attention).

Every launch is preceded by *reading* 256 MB, which evicts the L2 cleanly, as the harness's
cold-L2 protocol does (harness/measure/timer.py, L2Flusher), so candidates are ranked under the
conditions they are reported under. triton.testing.do_bench flushes with zero_(), which leaves
the L2 full of dirty lines whose write-back lands inside the next kernel's window and taxes
HBM-bound candidates (decode attention, small-M GEMMs) more than others: it compresses or flips
exactly the rankings these tuners exist to get right.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from typing import Any

import torch

# Short timing windows: candidates differ by >>1%, and a Llama sweep tunes hundreds of shapes.
_WARMUP_MS = 5
_REP_MS = 25
_FLUSH_BYTES = 256 << 20  # as do_bench: > 4x the H200's 60 MB L2 (= MI300X's Infinity Cache)
_FLUSH: dict[torch.device, tuple[torch.Tensor, torch.Tensor]] = {}


def bench_cold(fn: Callable[[], Any], device: torch.device) -> float:
    """Median ms of fn() over ~_REP_MS of launches, each after reading _FLUSH_BYTES (clean
    eviction of the L2); otherwise do_bench's schedule (5-call estimate, warm-up, CUDA events
    around each call alone)."""
    if device not in _FLUSH:
        buf = torch.ones(_FLUSH_BYTES // 4, dtype=torch.float32, device=device)
        _FLUSH[device] = (buf, torch.empty((), dtype=torch.float32, device=device))
    buf, sink = _FLUSH[device]

    def flush() -> None:
        torch.sum(buf, dim=0, out=sink)

    with torch.cuda.device(device):
        fn()
        torch.cuda.synchronize()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(5):
            flush()
            fn()
        end.record()
        torch.cuda.synchronize()
        estimate_ms = max(start.elapsed_time(end) / 5, 1e-3)
        for _ in range(max(1, int(_WARMUP_MS / estimate_ms))):
            fn()
        events = [
            (torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
            for _ in range(max(1, int(_REP_MS / estimate_ms)))
        ]
        for begin, finish in events:
            flush()
            begin.record()
            fn()
            finish.record()
        torch.cuda.synchronize()
    return statistics.median(begin.elapsed_time(finish) for begin, finish in events)
