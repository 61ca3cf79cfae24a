"""Hold the GPU stream until a sample's launch is queued, so host launch latency never lands
inside the timed window (nvbench's "blocking kernel").

Without it, the timer enqueues the L2 flush, records the start event and then launches the
kernel from Python: when the flush drains before the host has queued the kernel, the GPU idles
between the start event and the kernel, and that idle time is counted as kernel time. On an
H200 this made own-triton 1x4096x4096 time 39 us against nvbench's 19.5 us, and two identical
runs disagree by 46%.

Per sample the timer queues: flush, hold(i), start event, call, end event, then sets flag i
from the host. The hold kernel spins on flag i, which lives in pinned host memory that the GPU
reads over the bus; so the start event cannot be reached before the whole sample is queued.
The spin has a timeout so a sweep can never hang on it; a hold that timed out did not outlast
the enqueue, and its sample may hold host latency: the kernel writes that outcome per sample
(RELEASED or EXPIRED) and the timer counts the expired ones.

Never launch a kernel's first call behind a spinning hold: the first launch of a kernel in a
process loads its module lazily (CUDA_MODULE_LOADING=LAZY, the default), which waits for the
spinning kernel, and the spin waits for the host: the host blocks until the timeout ends the hold
(H100, session 93, scripts/hold_variants.py --cold: 64 holds took 2,003 ms, slot 0 expired; 2.0
ms once the call had run first). The timers' warm-up runs every kernel of a sample before the
first hold for this reason.
"""

from __future__ import annotations

import numpy as np
import torch
import triton
import triton.language as tl

RELEASED = tl.constexpr(1)  # the host set the flag while the kernel spun, or before it started
EXPIRED = tl.constexpr(2)  # the spin timed out first: host latency may be inside this sample

_TIMEOUT_NS = 2_000_000_000  # 2 s: far beyond any launch, far below a point's deadline
# A second bound that needs no clock (the HIP path and the interpreter have none here): each
# spin is an uncached read across the host bus, about a microsecond, so this is ~seconds.
_MAX_SPINS = 4_000_000


@triton.jit
def _now_ns():
    return tl.inline_asm_elementwise(
        "mov.u64 $0, %globaltimer;", "=l", [], dtype=tl.int64, is_pure=False, pack=1
    )


@triton.jit
def _read_flag(flag_ptr, ON_AMD: tl.constexpr):
    # NVIDIA: a volatile load (ld.volatile.global; ptxas refuses volatile with .cv). AMD: also
    # ".cv", or Triton made the volatile load one scalar load and optimised the spin loop away;
    # with it the read is a system-coherent global load (sc0 sc1) in the loop (AOT-checked).
    if ON_AMD:
        return tl.load(flag_ptr, volatile=True, cache_modifier=".cv")
    else:
        return tl.load(flag_ptr, volatile=True)


# The slot is a plain runtime int and the pointers are the arrays' bases: Triton specialises a
# pointer on its 16-byte alignment and an int on being 1 or a multiple of 16, so passing
# flags[i:] (or an unguarded i) compiled a second variant of this kernel at the first
# multi-sample batch of a process, between two holds of a warm-up.
@triton.jit(do_not_specialize=["slot"])
def _hold_kernel(
    # pointers
    flags_ptr,  # int32[capacity] in pinned host memory; the host writes 1 to release a slot
    outcomes_ptr,  # int32[capacity] on the device; RELEASED or EXPIRED per slot
    # sizes
    slot,  # which sample's flag and outcome
    timeout_ns,
    max_spins,
    # meta-parameters
    USE_CLOCK: tl.constexpr,  # %globaltimer exists on NVIDIA only
    ON_AMD: tl.constexpr,
):
    flag_ptr = flags_ptr + slot
    if USE_CLOCK:
        start = _now_ns()
    flag = _read_flag(flag_ptr, ON_AMD)
    spins = 0
    waited = tl.zeros((), dtype=tl.int64)
    while (flag == 0) & (spins < max_spins) & (waited < timeout_ns):
        flag = _read_flag(flag_ptr, ON_AMD)
        spins += 1
        if USE_CLOCK:
            waited = _now_ns() - start
    tl.store(outcomes_ptr + slot, tl.where(flag != 0, RELEASED, EXPIRED))


class StreamHold:
    """Per-sample hold slots for one batch of up to `capacity` samples on `device`.

    arm(i) resets flag i and queues the hold kernel; release(i) sets flag i from the host;
    expired(n) reads the outcomes of the last n samples once the batch has been synchronised.
    """

    def __init__(
        self,
        device: torch.device,
        capacity: int = 128,
        timeout_ns: int = _TIMEOUT_NS,
        max_spins: int = _MAX_SPINS,
        use_clock: bool | None = None,
    ) -> None:
        self.device = device
        self.capacity = capacity
        self.timeout_ns = timeout_ns
        self.max_spins = max_spins
        on_gpu = device.type == "cuda"
        self.on_amd = on_gpu and torch.version.hip is not None
        self.use_clock = (on_gpu and not self.on_amd) if use_clock is None else use_clock
        # Pinned (page-locked) host memory is mapped into the GPU's address space under UVA, so
        # the kernel reads the host's writes without a copy; a CPU device just uses plain memory.
        self.flags = torch.zeros(capacity, dtype=torch.int32, pin_memory=on_gpu)
        self._flags_np = self.flags.numpy()
        self.outcomes = torch.zeros(capacity, dtype=torch.int32, device=device)
        # Compile now, released at once, so the JIT never runs inside a sweep's warm-up.
        self._flags_np[0] = 1
        self.arm(0, reset=False)
        if on_gpu:
            torch.cuda.synchronize(device)

    def arm(self, i: int, reset: bool = True) -> None:
        """Queue the hold for sample i on the current stream."""
        if reset:
            self._flags_np[i] = 0
        _hold_kernel[(1,)](
            self.flags,
            self.outcomes,
            i,
            self.timeout_ns,
            self.max_spins,
            USE_CLOCK=self.use_clock,
            ON_AMD=self.on_amd,
            num_warps=1,  # one spinning warp: the hold must not take SMs from anything else
        )

    def release(self, i: int) -> None:
        """Sample i is fully queued: let the GPU run it."""
        self._flags_np[i] = 1

    def expired(self, n: int) -> int:
        """How many of the first n holds timed out (call after the batch is synchronised)."""
        return int(np.count_nonzero(self.expired_mask(n)))

    def expired_mask(self, n: int) -> np.ndarray:
        """Which of the first n holds timed out, per sample (after the batch is synchronised)."""
        return self.outcomes[:n].cpu().numpy() == EXPIRED.value
