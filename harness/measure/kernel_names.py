"""Which GPU kernels one call of a vendor closure launches: name, grid and block.

A vendor library is a black box whose row otherwise says only which API was called; the kernel
it picked answers most of "why is it faster here". cuBLAS's nvjet names carry the tile, the K
step and stages, and the cluster (`nvjet_sm90_tst_168x128_64x5_1x2_h_bz_TNN` at 256x10240x8192
on the H200: 168 x 128 tiles, K 64 in 5 stages, 1x2 clusters), so `harness gaps` can set the
reference's kernel beside the own kernel's config. Recorded once per point, after the check and
before timing (torch.profiler's CUPTI pass never touches a timed call).
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable
from pathlib import Path

MAX_KERNELS = 4  # a vendor call launches 1-3 kernels (a GEMM and its split-K reduce, ...)


def kernels_from_trace(events: list[dict], limit: int = MAX_KERNELS) -> list[dict]:
    """The kernel events of a Chrome trace (torch.profiler's export), in launch order:
    [{"name", "grid", "block"}], grid and block as "XxYxZ"."""
    kernels = sorted(
        (e for e in events if e.get("cat") == "kernel" and e.get("ph") == "X"),
        key=lambda e: e.get("ts", 0),
    )
    out = []
    for e in kernels[:limit]:
        args = e.get("args", {})
        out.append(
            {
                "name": str(e.get("name", "")),
                "grid": "x".join(map(str, args.get("grid", []))),
                "block": "x".join(map(str, args.get("block", []))),
            }
        )
    return out


def launched_kernels(run: Callable[[], object]) -> list[dict]:
    """Call `run` once under torch.profiler (CUDA activity) and return its kernels."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        run()
        torch.cuda.synchronize()
    with tempfile.TemporaryDirectory() as tmp:
        trace = Path(tmp) / "trace.json"
        prof.export_chrome_trace(str(trace))
        events = json.loads(trace.read_text()).get("traceEvents", [])
    return kernels_from_trace(events)
