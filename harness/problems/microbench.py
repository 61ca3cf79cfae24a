"""Microbenchmark problems: memory streams (read / write / copy), pointer chase, FMA chains.

They go through the same sweep, check and timing path as GEMM and attention: each knows its
exact traffic or work, makes seeded inputs and checks the provider's result (a checksum, the
written or copied buffer, the index a chase ends on, the value an FMA chain reaches).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

import torch

from harness.problems.base import (
    Check,
    Problem,
    fill_tensor,
    generator,
    require_choice,
    require_positive,
)
from harness.problems.dtypes import get_dtype
from harness.units import fmt_bytes

MEMORY_METRICS = ("read", "write", "copy")
MEMORY_DTYPES = ("fp32", "fp16", "bf16")
GRANULE_BYTES = 4096  # working sets are whole 4 KiB pages, so kernels tile them without tails
FMA_UNROLL = 16  # the FMA kernel issues this many dependent steps per loop trip
MAX_CHASE_BYTES = 8 << 30  # int32 element indices address at most 2^31 words


def _require_multiple(name: str, value: int, of: int, what: str) -> None:
    if value % of:
        raise ValueError(f"{name}: {value} is not a multiple of {what}; allowed: multiples of {of}")


def _exact_check(bad: int, total: int) -> Check:
    """Bitwise comparison outcome: rel_err is the fraction of wrong elements."""
    ok = bad == 0
    reason = None if ok else f"{bad} of {total} elements differ from the reference"
    return Check(bad / max(total, 1), 0.0 if ok else math.nan, 0.0, ok, reason)


@dataclass(frozen=True)
class MemoryProblem(Problem):
    """Stream a working set: read it (checksum), write it (fill) or copy it.

    working_set_bytes: the buffer read (read, copy) or written (write); copy writes a second
    buffer of the same size. traffic_bytes (0 = one pass; else a multiple of the working set):
    each call walks a virtual stream of that many bytes laid onto the working set modulo its
    size, so a small working set is re-read from whichever cache level holds it and a large one
    streams from memory once.
    """

    op: ClassVar[str] = "memory"
    metric: str
    working_set_bytes: int
    traffic_bytes: int = 0
    dtype: str = "fp32"

    def __post_init__(self) -> None:
        if self.traffic_bytes == 0:  # one pass: store the effective value so rows are explicit
            object.__setattr__(self, "traffic_bytes", self.working_set_bytes)

    @property
    def elem_bytes(self) -> int:
        return get_dtype(self.dtype).bytes

    @property
    def elements(self) -> int:
        return self.working_set_bytes // self.elem_bytes

    @property
    def passes(self) -> int:
        return self.traffic_bytes // self.working_set_bytes

    def validate(self) -> None:
        require_choice("metric", self.metric, MEMORY_METRICS)
        require_choice("dtype", self.dtype, MEMORY_DTYPES)
        require_positive(working_set_bytes=self.working_set_bytes, traffic_bytes=self.traffic_bytes)
        _require_multiple("working_set_bytes", self.working_set_bytes, GRANULE_BYTES, "4 KiB")
        _require_multiple(
            "traffic_bytes", self.traffic_bytes, self.working_set_bytes, "working_set_bytes"
        )

    def flops(self) -> int:
        return 0

    def min_bytes(self) -> int:
        """Bytes moved per call: the traffic read or written; a copy reads and writes it."""
        return (2 if self.metric == "copy" else 1) * self.traffic_bytes

    def tolerance(self) -> float:
        # The read checksum sums zeros and ones: exact in fp32 while a program's share holds
        # fewer than 2^24 elements (a 4 GiB stream over 132 programs holds ~8e6).
        return 1e-7 if self.metric == "read" else 0.0

    def label(self) -> str:
        passes = f" x{self.passes}" if self.passes > 1 else ""
        return f"memory {self.metric} {fmt_bytes(self.working_set_bytes)}{passes} {self.dtype}"

    def make_inputs(self, seed: int, fill: str, device: torch.device) -> dict[str, Any]:
        """read: {'x'}; write: {'dst', 'value'}; copy: {'src', 'dst'}; outputs start as NaN."""
        dt = get_dtype(self.dtype).torch_dtype
        gen = generator(seed, device)
        shape = (self.elements,)
        if self.metric == "write":
            value = 1.0 + float(torch.rand((), generator=gen, device=device))
            value = float(torch.tensor(value, dtype=dt))  # representable in the buffer's type
            return {"dst": torch.full(shape, math.nan, dtype=dt, device=device), "value": value}
        data = fill_tensor(shape, torch.float32, fill, gen, device)
        if self.metric == "read":
            # Zeros and ones: every partial sum is an integer below 2^24, so the fp32 checksum is
            # exact whatever the pass count (random reals lost ~1% over 2^18 passes of a 12 KiB
            # set), and it cannot cancel to ~0.
            return {"x": data if fill == "zeros" else (data > 0).to(dt)}
        data = data.abs_().to(dt)
        return {"src": data, "dst": torch.full(shape, math.nan, dtype=dt, device=device)}

    def reference(self, inputs: dict[str, Any]) -> torch.Tensor:
        """read: [1] float64 sum over the virtual stream; write/copy: the expected buffer."""
        if self.metric == "read":
            total = torch.sum(inputs["x"], dtype=torch.float64) * self.passes
            return total.reshape(1)
        if self.metric == "write":
            dt = get_dtype(self.dtype).torch_dtype
            value = torch.tensor(inputs["value"], dtype=dt, device=inputs["dst"].device)
            return value.expand(self.elements)  # a view: no second 4 GiB buffer
        return inputs["src"]

    def check(self, out: torch.Tensor, ref: torch.Tensor) -> Check:
        if self.metric == "read":
            return super().check(out, ref)
        if tuple(out.shape) != tuple(ref.shape):
            return Check(
                math.nan, math.nan, 0.0, False, f"shape {tuple(out.shape)} != {tuple(ref.shape)}"
            )
        # Written and copied bytes must be exact; NaN (never written) compares unequal.
        return _exact_check(int((out != ref).sum()), out.numel())


@dataclass(frozen=True)
class LatencyProblem(Problem):
    """A dependent-load chain (pointer chase) through a working set: `hops` loads, each address
    the value the previous load returned.

    The working set is cut into slots of stride_bytes; the first int32 word of every slot holds
    the element index of the next slot of one random cycle through all slots (so every slot is
    visited once per lap, in an order no prefetcher can predict). Latency per hop in ns is the
    call time / hops; in cycles, that times the SM clock measured during the timed window.
    """

    op: ClassVar[str] = "latency"
    working_set_bytes: int
    stride_bytes: int = 128
    hops: int = 1 << 20

    @property
    def slots(self) -> int:
        return self.working_set_bytes // self.stride_bytes

    @property
    def stride_elems(self) -> int:
        return self.stride_bytes // 4

    def validate(self) -> None:
        require_positive(
            working_set_bytes=self.working_set_bytes, stride_bytes=self.stride_bytes, hops=self.hops
        )
        _require_multiple("stride_bytes", self.stride_bytes, 4, "4 bytes (one int32 index)")
        _require_multiple(
            "working_set_bytes", self.working_set_bytes, self.stride_bytes, "stride_bytes"
        )
        if self.slots < 2:
            raise ValueError(
                f"working_set_bytes: {self.working_set_bytes} holds {self.slots} slot(s) of "
                f"{self.stride_bytes} B; allowed: at least 2 slots"
            )
        if self.working_set_bytes > MAX_CHASE_BYTES:
            raise ValueError(
                f"working_set_bytes: {self.working_set_bytes} exceeds int32 indexing; "
                f"allowed: <= {MAX_CHASE_BYTES}"
            )

    def flops(self) -> int:
        return 0

    def min_bytes(self) -> int:
        return 4 * self.hops  # one int32 index per hop

    def tolerance(self) -> float:
        return 0.0

    def label(self) -> str:
        return (
            f"latency {fmt_bytes(self.working_set_bytes)} stride {self.stride_bytes}B "
            f"hops {self.hops}"
        )

    def make_inputs(self, seed: int, fill: str, device: torch.device) -> dict[str, Any]:
        """{'chase': [ws/4] int32 chain, 'order': [slots] the cycle's slot order, 'start'}.

        `fill` does not apply: the contents are the chain itself (words off the chain are 0)."""
        gen = generator(seed, device)
        order = torch.randperm(self.slots, generator=gen, device=device)  # visiting order
        se = self.stride_elems
        chase = torch.zeros(self.working_set_bytes // 4, dtype=torch.int32, device=device)
        # slot order[i] points to slot order[i + 1]; the last closes the cycle to order[0].
        chase[order * se] = (order.roll(-1) * se).to(torch.int32)
        return {"chase": chase, "order": order, "start": int(order[0]) * se}

    def reference(self, inputs: dict[str, Any]) -> torch.Tensor:
        """[1] int64: the element index reached after `hops` hops from the start."""
        final = int(inputs["order"][self.hops % self.slots]) * self.stride_elems
        return torch.tensor([final], dtype=torch.int64)

    def check(self, out: torch.Tensor, ref: torch.Tensor) -> Check:
        got = [int(v) for v in out.reshape(-1).tolist()]
        want = int(ref.reshape(-1)[0])
        ok = got == [want]
        return Check(
            0.0 if ok else 1.0,
            0.0 if ok else math.nan,
            0.0,
            ok,
            None if ok else f"chase ended at {got}, expected [{want}]",
        )

    def derived(self, row: dict) -> dict:
        """latency_ns per hop from the median call time; latency_cycles at the measured clock."""
        ms = row.get("latency_ms_median")
        if ms is None:
            return {}
        ns = ms * 1e6 / self.hops
        clock_mhz = row.get("sm_clock_mhz")
        return {"latency_ns": ns, "latency_cycles": ns * clock_mhz / 1e3 if clock_mhz else None}


@dataclass(frozen=True)
class FmaProblem(Problem):
    """FP32 FMA throughput: every element runs a chain x <- a * x + b of `iterations` FMAs.

    a = 1 - 1/iterations and b = 1/iterations keep x finite and still dependent on its start
    (x_n = a^n x_0 + (1 - a^n) b / (1 - a), a^n ~ 1/e), so the result checks the whole chain.
    """

    op: ClassVar[str] = "fma"
    working_set_bytes: int  # the fp32 vector: one independent chain per element
    iterations: int = 1024
    dtype: str = "fp32"

    @property
    def elements(self) -> int:
        return self.working_set_bytes // 4

    def coefficients(self) -> tuple[float, float]:
        """(a, b) as the fp32 values the kernel uses."""
        a = float(torch.tensor(1.0 - 1.0 / self.iterations, dtype=torch.float32))
        b = float(torch.tensor(1.0 / self.iterations, dtype=torch.float32))
        return a, b

    def validate(self) -> None:
        require_positive(working_set_bytes=self.working_set_bytes, iterations=self.iterations)
        require_choice("dtype", self.dtype, ("fp32",))
        _require_multiple("working_set_bytes", self.working_set_bytes, GRANULE_BYTES, "4 KiB")
        _require_multiple("iterations", self.iterations, FMA_UNROLL, f"{FMA_UNROLL}")

    def flops(self) -> int:
        return 2 * self.elements * self.iterations

    def min_bytes(self) -> int:
        return 2 * 4 * self.elements  # x read once, the result written once

    def tolerance(self) -> float:
        # Each FMA rounds once (2^-24); over n steps damped by a ~ 1 - 1/n the error is
        # ~sqrt(n) x 6e-8 typical, n x 6e-8 worst (1.2e-4 at n = 2048 only if all align).
        return 1e-4

    def label(self) -> str:
        return f"fma {self.elements} chains x {self.iterations} {self.dtype}"

    def make_inputs(self, seed: int, fill: str, device: torch.device) -> dict[str, Any]:
        gen = generator(seed, device)
        a, b = self.coefficients()
        x = fill_tensor((self.elements,), torch.float32, fill, gen, device)
        return {"x": x, "a": a, "b": b}

    def reference(self, inputs: dict[str, Any]) -> torch.Tensor:
        """Closed form of the chain in float64 with the kernel's fp32 coefficients."""
        a, b = inputs["a"], inputs["b"]
        an = a**self.iterations
        return inputs["x"].double() * an + b * (1.0 - an) / (1.0 - a)


MICROBENCH_PROBLEMS = {"memory": MemoryProblem, "latency": LatencyProblem, "fma": FmaProblem}
