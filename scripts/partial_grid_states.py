"""Does a partial-grid decode GEMM's time depend on what ran before it? (issue 20, H200: the own
CUTLASS swapped 128x16 kernel at 1x10240x8192 runs one CTA per 128-wide tile, 80 CTAs on 132
SMs, and timed 48-51 us in the tuner but 60-63 us in the harness; the full-grid kernels agreed.)

Each launch below is timed as both timers time it (read flush, stream hold, CUDA events around
the call alone), in rounds that alternate the flush in front of it: the harness's (2x L2) and the
tuners' (256 MB), i.e. a different reduction kernel, and so a different grid, just before.
Candidates: the 80/64-CTA data-parallel kernel, the same tile with stream-K forced (one CTA per
SM) and the 64-row ping-pong kernel (N/64 CTAs, persistent).

    python3 scripts/partial_grid_states.py OUT.csv      (an NVIDIA sm_90 GPU, own CUTLASS built)
"""

from __future__ import annotations

import statistics
import sys

import pandas as pd
import torch
from harness_kernels.cutlass.gemm import CONFIGS, RunOptions, prepare_gemm
from harness_kernels.stream_hold import StreamHold

from harness.device import get_device
from harness.measure.telemetry import _NvmlReader
from harness.measure.timer import L2Flusher

SHAPES = [(1, 10240, 8192), (4, 8192, 8192), (1, 4096, 14336)]
CANDIDATES = [
    ("swapab-128x16 data-parallel", "sm90-swapab-128x16", RunOptions("data-parallel")),
    ("swapab-128x16 stream-k", "sm90-swapab-128x16", RunOptions("stream-k")),
    ("swapab-pingpong-64x16", "sm90-swapab-pingpong-64x16", RunOptions()),
]
SAMPLES, ROUNDS = 100, 6


def time_us(fn, flush, hold: StreamHold) -> list[float]:
    events = [
        (torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
        for _ in range(SAMPLES)
    ]
    for i, (begin, end) in enumerate(events):
        flush()
        hold.arm(i)
        begin.record()
        fn()
        end.record()
        hold.release(i)
    torch.cuda.synchronize()
    return [b.elapsed_time(e) * 1e3 for b, e in events]


def main(out: str) -> None:
    device = get_device("cuda")
    gpu = device.torch_device
    flushes = {
        "harness 2xL2": L2Flusher(gpu, device.flush_bytes),
        "tuner 256MB": L2Flusher(gpu, 128 << 20),
    }
    hold = StreamHold(gpu, capacity=SAMPLES)
    nvml = _NvmlReader(gpu.index or 0)
    rows = []
    for m, n, k in SHAPES:
        torch.manual_seed(0)
        a = torch.randn(m, k, device=gpu, dtype=torch.bfloat16)
        w = torch.randn(n, k, device=gpu, dtype=torch.bfloat16)
        launches = {
            name: prepare_gemm(a, w.t(), CONFIGS[config], options=options)
            for name, config, options in CANDIDATES
        }
        for rnd in range(ROUNDS):
            for flush_name, flush in flushes.items():
                for name, fn in launches.items():
                    for _ in range(20):  # warm
                        fn()
                    us = time_us(fn, flush, hold)
                    state = nvml.read()
                    q = statistics.quantiles(us, n=10)
                    rows.append(
                        dict(
                            shape=f"{m}x{n}x{k}",
                            candidate=name,
                            flush=flush_name,
                            round=rnd,
                            median_us=statistics.median(us),
                            p10_us=q[0],
                            p90_us=q[-1],
                            sm_mhz=state.get("sm"),
                            power_w=state.get("power"),
                        )
                    )
    df = pd.DataFrame(rows)
    df.to_csv(out, index=False)
    table = df.pivot_table(
        index=["shape", "candidate"], columns="flush", values="median_us", aggfunc=["min", "max"]
    )
    print(table.round(1).to_string())


if __name__ == "__main__":
    main(sys.argv[1])
