"""What the attention host code needs to know about the device it plans for: the backend and
arch that pick a config space, the SM count that sizes a split-KV grid, and the device model that
keys the tune cache. The CPU interpreter (TRITON_INTERPRET=1) is a target of its own.
"""

from __future__ import annotations

import os
from typing import Any

import torch


def interpreting() -> bool:
    """True under TRITON_INTERPRET=1 (CPU interpreter): no tuning, tiny configs, UPCAST on."""
    return os.environ.get("TRITON_INTERPRET") == "1"


def target_of(device: torch.device) -> tuple[str, Any]:
    """("interpret", None) | ("cuda", capability as int, e.g. 90) | ("hip", "gfx942")."""
    if interpreting() or device.type != "cuda":
        return ("interpret", None)
    if torch.version.hip is not None:
        arch = torch.cuda.get_device_properties(device).gcnArchName.split(":")[0]
        return ("hip", arch)
    major, minor = torch.cuda.get_device_capability(device)
    return ("cuda", major * 10 + minor)


def num_sms(device: torch.device) -> int:
    """Streaming multiprocessors (CUs on AMD); a nominal 8 under the interpreter."""
    if interpreting() or device.type != "cuda":
        return 8
    return torch.cuda.get_device_properties(device).multi_processor_count


def device_key(device: torch.device) -> str:
    """Tune-cache component naming the device model, so two different GPUs never share an entry."""
    if interpreting() or device.type != "cuda":
        return "interpret"
    return torch.cuda.get_device_name(device)
