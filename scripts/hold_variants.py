"""How many variants of the stream-hold kernel a process compiles over one batch of holds (the
GPU check of the unspecialised slot: 1 expected), and how many of the holds expired."""

import torch
from harness_kernels import stream_hold

hold = stream_hold.StreamHold(torch.device("cuda"), capacity=64)
for i in range(64):
    hold.arm(i)
    torch.cuda._sleep(1000)  # a little GPU work behind each hold, as a sample's call
    hold.release(i)
torch.cuda.synchronize()
caches = getattr(stream_hold._hold_kernel, "device_caches", {})
variants = sum(len(c[0]) for c in caches.values()) if caches else "unknown"
print(f"hold kernel variants compiled: {variants}; holds expired: {hold.expired(64)} of 64")
