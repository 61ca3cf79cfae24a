"""Providers of the microbenchmark problems.

memory:  triton-stream (own read / write / copy kernels over a virtual stream that re-reads
         small working sets), torch-stream (torch's own sum / fill_ / copy_ kernels, one pass)
latency: triton-chase (one single-warp program following the chain)
fma:     triton-fma (independent FMA chains, unrolled)
On the CPU the Triton kernels run under the interpreter (TRITON_INTERPRET=1 before import).
"""

from __future__ import annotations

import os

import torch

from harness.device import DeviceInfo
from harness.problems.microbench import FMA_UNROLL, FmaProblem, LatencyProblem, MemoryProblem
from harness.providers.registry import Prepared, Unsupported, register

TRITON_VENDORS = ("nvidia", "amd", "cpu")
# Resident programs per SM / CU for the stream kernels: 4 x 8 warps keep ~64 KiB of loads in
# flight per SM, above the ~25 KiB Little's law asks of HBM3e (4.8 TB/s x ~0.7 us / 132 SMs).
PROGRAMS_PER_SM = 4
CPU_PROGRAMS = 4  # the interpreter runs programs one after another: keep the CPU path small


def _require_interpreter_on_cpu(device: DeviceInfo) -> None:
    if device.type == "cpu" and os.environ.get("TRITON_INTERPRET") != "1":
        raise Unsupported("CPU runs need TRITON_INTERPRET=1 before the kernels are imported")


def _programs(device: DeviceInfo) -> int:
    return CPU_PROGRAMS if device.type == "cpu" else PROGRAMS_PER_SM * max(device.sm_count, 1)


def _read_output(partial: torch.Tensor) -> torch.Tensor:
    return partial.double().sum().reshape(1)


@register("triton-stream", "memory", "own", TRITON_VENDORS)
def triton_stream(problem: MemoryProblem, inputs: dict, device: DeviceInfo) -> Prepared:
    """Own Triton stream kernels: read (per-program checksums), write, copy; re-reads small sets."""
    _require_interpreter_on_cpu(device)
    from harness_kernels.triton import microbench as K

    stream_elems = problem.traffic_bytes // problem.elem_bytes
    programs = _programs(device)
    if problem.metric == "read":
        launch = K.stream_read(inputs["x"], stream_elems, programs)
        return Prepared(launch.run, launch.config, _read_output)
    if problem.metric == "write":
        launch = K.stream_write(inputs["dst"], inputs["value"], stream_elems, programs)
    else:
        launch = K.stream_copy(inputs["src"], inputs["dst"], stream_elems, programs)
    return Prepared(launch.run, launch.config)


def _one_pass(problem: MemoryProblem, device: DeviceInfo) -> str | None:
    if problem.passes != 1:
        return "torch kernels read the working set once; re-reads (traffic > working set) need triton-stream"
    return None


@register("torch-stream", "memory", "vendor", ("nvidia", "amd", "intel", "cpu"), supports=_one_pass)
def torch_stream(problem: MemoryProblem, inputs: dict, device: DeviceInfo) -> Prepared:
    """torch's own kernels: sum (read), fill_ (write), copy_ (copy), one pass over the set."""
    if problem.metric == "read":
        x = inputs["x"]
        out = torch.empty((), dtype=torch.float32, device=x.device)
        run = lambda: torch.sum(x, 0, dtype=torch.float32, out=out)
        return Prepared(run, {"op": "torch.sum"}, lambda t: t.double().reshape(1))
    if problem.metric == "write":
        dst, value = inputs["dst"], inputs["value"]
        return Prepared(lambda: dst.fill_(value), {"op": "Tensor.fill_"})
    src, dst = inputs["src"], inputs["dst"]
    return Prepared(lambda: dst.copy_(src), {"op": "Tensor.copy_"})


@register("triton-chase", "latency", "own", TRITON_VENDORS)
def triton_chase(problem: LatencyProblem, inputs: dict, device: DeviceInfo) -> Prepared:
    """Own Triton pointer chase: one single-warp program, one dependent load per hop."""
    _require_interpreter_on_cpu(device)
    from harness_kernels.triton import microbench as K

    launch = K.pointer_chase(inputs["chase"], inputs["start"], problem.hops)
    return Prepared(launch.run, launch.config, lambda out: out.long())


@register("triton-fma", "fma", "own", TRITON_VENDORS)
def triton_fma(problem: FmaProblem, inputs: dict, device: DeviceInfo) -> Prepared:
    """Own Triton FP32 FMA chains (8 independent chains per thread, 16-step unrolled body)."""
    _require_interpreter_on_cpu(device)
    from harness_kernels.triton import microbench as K

    launch = K.fma_chains(inputs["x"], inputs["a"], inputs["b"], problem.iterations, FMA_UNROLL)
    return Prepared(launch.run, launch.config)
