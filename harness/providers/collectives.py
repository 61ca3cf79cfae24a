"""Collective providers: torch.distributed over NCCL (NVIDIA), RCCL (AMD) and gloo (CPU).

They run only inside harness.collectives, which starts one process per rank and initialises the
process group with BACKENDS[provider]; prepare hands back a closure that calls the collective on
buffers allocated beforehand (the timer never allocates).
"""

from __future__ import annotations

import torch
import torch.distributed as dist

from harness.device import DeviceInfo
from harness.problems.collective import CollectiveProblem
from harness.providers.registry import Prepared, Provider, register

# torch.distributed backend each provider runs on (ROCm builds of torch name RCCL "nccl").
BACKENDS = {"nccl": "nccl", "rccl": "nccl", "gloo": "gloo"}


def backend_of(provider: Provider) -> str:
    """The process-group backend for `provider`: its entry in BACKENDS, else gloo for a CPU
    provider and nccl (NCCL or RCCL) for a GPU one (providers registered outside this file)."""
    if provider.name in BACKENDS:
        return BACKENDS[provider.name]
    return "gloo" if "cpu" in provider.vendors else "nccl"


# torch 2.13 renamed the tensor forms; older releases only have the *_tensor names.
_ALL_GATHER = getattr(dist, "all_gather_single", None) or dist.all_gather_into_tensor
_REDUCE_SCATTER = getattr(dist, "reduce_scatter_single", None) or dist.reduce_scatter_tensor


def _nccl_available() -> str | None:
    if not (dist.is_available() and dist.is_nccl_available()):
        return "this torch was built without NCCL"
    return "this torch is a ROCm build (its NCCL is rccl)" if torch.version.hip else None


def _rccl_available() -> str | None:
    if torch.version.hip is None:
        return "this torch is not a ROCm build"
    return None if dist.is_available() and dist.is_nccl_available() else "no RCCL in this torch"


def _gloo_available() -> str | None:
    ok = dist.is_available() and dist.is_gloo_available()
    return None if ok else "this torch was built without gloo"


def _enough_gpus(problem: CollectiveProblem, device: DeviceInfo) -> str | None:
    """One rank per GPU: world_size GPUs must be visible."""
    visible = torch.cuda.device_count()
    if problem.world_size > visible:
        return f"world_size {problem.world_size} needs {problem.world_size} GPUs; {visible} visible"
    return None


def _launch(problem: CollectiveProblem, inputs: dict) -> Prepared:
    """The closure for `problem` on this rank's preallocated 'x' (input) and 'out' (output)."""
    if not dist.is_initialized():
        raise RuntimeError(
            "collective providers run under harness.collectives (no process group initialised)"
        )
    if dist.get_world_size() != problem.world_size:
        raise RuntimeError(
            f"process group has {dist.get_world_size()} ranks, problem {problem.world_size}"
        )
    x, out = inputs["x"], inputs["out"]  # [in_elems], [out_elems]
    c = problem.collective
    if c == "all_reduce":
        # torch reduces in place: the buffer starts as the input (untimed). Repeated timed calls
        # keep summing into it; the values grow, the traffic does not change.
        out.copy_(x)
        run, call = (lambda: dist.all_reduce(out)), "all_reduce"
    elif c == "all_gather":
        run, call = (lambda: _ALL_GATHER(out, x)), _ALL_GATHER.__name__
    elif c == "reduce_scatter":
        run, call = (lambda: _REDUCE_SCATTER(out, x)), _REDUCE_SCATTER.__name__
    else:
        run, call = (lambda: dist.all_to_all_single(out, x)), "all_to_all_single"
    config = {"call": f"torch.distributed.{call}", "backend": dist.get_backend()}
    return Prepared(run, config, lambda _: out)


@register(
    "nccl", "collective", "vendor", ("nvidia",), available=_nccl_available, supports=_enough_gpus
)
def nccl(problem: CollectiveProblem, inputs: dict, device: DeviceInfo) -> Prepared:
    """NCCL through torch.distributed, one rank per GPU (NVLink multicast off)."""
    return _launch(problem, inputs)


@register(
    "rccl", "collective", "vendor", ("amd",), available=_rccl_available, supports=_enough_gpus
)
def rccl(problem: CollectiveProblem, inputs: dict, device: DeviceInfo) -> Prepared:
    """RCCL through torch.distributed (the nccl backend of ROCm torch), one rank per GPU."""
    return _launch(problem, inputs)


@register("gloo", "collective", "vendor", ("cpu",), available=_gloo_available)
def gloo(problem: CollectiveProblem, inputs: dict, device: DeviceInfo) -> Prepared:
    """gloo through torch.distributed, world_size processes on the CPU (the CPU path)."""
    return _launch(problem, inputs)
