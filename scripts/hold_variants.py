"""How many variants of the stream-hold kernel a process compiles over one batch of holds (the
GPU check of the unspecialised slot: 1 expected), how many of the holds expired and how long the
batch took. The sample's stand-in call (torch.cuda._sleep) runs once before the first hold: a
module loaded lazily behind a spinning hold blocks the host until the hold expires (2 s; the
docstring of kernels/stream_hold.py). `--cold` skips that, to show it."""

import sys
import time

import torch
from harness_kernels import stream_hold

if "--cold" not in sys.argv:
    torch.cuda._sleep(1000)
    torch.cuda.synchronize()
hold = stream_hold.StreamHold(torch.device("cuda"), capacity=64)
start = time.perf_counter()
for i in range(64):
    hold.arm(i)
    torch.cuda._sleep(1000)  # a little GPU work behind each hold, as a sample's call
    hold.release(i)
torch.cuda.synchronize()
wall_ms = (time.perf_counter() - start) * 1e3
caches = getattr(stream_hold._hold_kernel, "device_caches", {})
variants = sum(len(c[0]) for c in caches.values()) if caches else "unknown"
expired = hold.expired_mask(64).nonzero()[0].tolist()
print(f"hold kernel variants compiled: {variants}; holds expired: {expired}; {wall_ms:.1f} ms")
