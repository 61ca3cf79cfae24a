"""What the own Triton GEMM's host code needs to know about the device it plans for.

A few facts (backend, arch, SM count, shared memory per program) decide which configs can run
and how large a persistent wave is; the CPU interpreter gets a small pretend device so that test
shapes still exercise the persistent loop and split-K.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass

import torch


def interpreting() -> bool:
    """True when triton.jit functions run in the CPU interpreter (TRITON_INTERPRET=1)."""
    return os.environ.get("TRITON_INTERPRET") == "1"


@dataclass(frozen=True)
class KernelTarget:
    """What the config search needs to know about one device.

    Not the harness's DeviceInfo (a measured device's identity and clocks, recorded per row):
    kernels import nothing from the harness, and this holds only what planning a launch reads.
    aot.TARGETS pairs one with each named Triton GPUTarget (what the compiler targets)."""

    backend: str  # "cuda" | "hip" | "interpreter"
    arch: str  # "sm_90", "gfx942", "interpreter"
    capability: int  # major*10+minor on cuda; 0 elsewhere (the interpreter pretends 90)
    name: str
    num_sms: int  # SMs (cuda) or CUs (hip): the width of one persistent wave
    max_shared_mem: int  # bytes of shared memory (LDS) one program may opt in to


@functools.cache
def kernel_target(device: torch.device | None) -> KernelTarget:
    """Describe `device`; CPU tensors under the interpreter get a small Hopper-like pretend device."""
    if device is None or device.type == "cpu":
        # Four pretend SMs: small test shapes then exercise both the persistent loop (more tiles
        # than programs) and split-K (fewer tiles than SMs). TMA paths run through the interpreter.
        return KernelTarget("interpreter", "interpreter", 90, "triton-interpreter", 4, 1 << 20)
    import triton  # noqa: PLC0415 - the driver only exists once a GPU is present

    index = device.index if device.index is not None else torch.cuda.current_device()
    props = torch.cuda.get_device_properties(index)
    drv = triton.runtime.driver.active.utils.get_device_properties(index)
    if torch.version.hip is not None:
        arch = props.gcnArchName.split(":")[0]
        return KernelTarget(
            "hip", arch, 0, props.name, props.multi_processor_count, drv["max_shared_mem"]
        )
    cap = props.major * 10 + props.minor
    return KernelTarget(
        "cuda", f"sm_{cap}", cap, props.name, props.multi_processor_count, drv["max_shared_mem"]
    )
