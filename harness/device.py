"""The device under test: vendor, identity, caches and versions, recorded with every row."""

from __future__ import annotations

import os
import platform
import re
from dataclasses import asdict, dataclass
from functools import cache

import torch


@dataclass(frozen=True)
class DeviceInfo:
    """Identity and capabilities of one device (a GPU, or the host CPU)."""

    type: str  # torch device type: cuda (also ROCm and its HIP), xpu, cpu
    index: int
    vendor: str  # nvidia | amd | intel | cpu
    name: str
    uuid: str | None
    arch: str  # sm_90, gfx942, x86_64 ...
    compute_capability: tuple[int, int] | None  # NVIDIA (major, minor); None elsewhere
    sm_count: int  # SMs / CUs / CPU cores
    l2_bytes: int | None
    memory_bytes: int | None
    driver_version: str | None
    runtime_version: str | None  # CUDA, HIP or SYCL runtime torch was built with
    # Last-level cache a cold-L2 protocol must defeat: the L2 on NVIDIA and CDNA2, the 256 MiB
    # Infinity Cache (MALL) behind CDNA3's 4 MiB-per-XCD L2; None when unknown.
    llc_bytes: int | None = None

    @property
    def torch_device(self) -> torch.device:
        return torch.device(self.type, self.index) if self.type != "cpu" else torch.device("cpu")

    @property
    def is_gpu(self) -> bool:
        return self.type != "cpu"

    @property
    def flush_bytes(self) -> int | None:
        """Cache bytes the L2 flush and input rotation must cover (LLC, else L2, else None)."""
        return self.llc_bytes or self.l2_bytes

    def cc_at_least(self, cc: tuple[int, int] | None) -> bool:
        if cc is None:
            return True
        return self.compute_capability is not None and self.compute_capability >= cc

    def as_row(self) -> dict:
        d = asdict(self)
        cc = d.pop("compute_capability")
        d["compute_capability"] = f"{cc[0]}.{cc[1]}" if cc else None
        return {f"device_{k}": v for k, v in d.items()}


def xpu_available() -> bool:
    """True when this torch has an Intel GPU backend (torch.xpu) and sees a device."""
    xpu = getattr(torch, "xpu", None)
    try:
        return bool(xpu is not None and xpu.is_available())
    except Exception:  # a half-installed SYCL runtime raises instead of answering
        return False


def parse_device(spec: str) -> tuple[str, int]:
    """'auto' | 'cpu' | 'cuda[:N]' | 'xpu[:N]' -> (type, index); raises ValueError naming allowed
    values. auto: a CUDA/ROCm GPU, else an Intel GPU, else the CPU."""
    if spec == "auto":
        if torch.cuda.is_available():
            return ("cuda", 0)
        return ("xpu", 0) if xpu_available() else ("cpu", 0)
    kind, _, idx = spec.partition(":")
    if kind not in ("cpu", "cuda", "xpu") or (idx and not idx.isdigit()):
        raise ValueError(f"device: unknown '{spec}'; allowed: auto, cpu, cuda, cuda:N, xpu:N")
    if kind == "cuda" and not torch.cuda.is_available():
        raise ValueError("device: 'cuda' asked for but torch sees no GPU; allowed: auto, cpu")
    if kind == "xpu" and not xpu_available():
        raise ValueError("device: 'xpu' asked for but torch sees no Intel GPU; allowed: auto, cpu")
    return kind, int(idx or 0)


# AMD last-level cache by gfx arch. CDNA2 (MI210/MI250X, gfx90a): 8 MiB L2 per GCD, nothing
# behind it. CDNA3 (MI300X/MI325X gfx942, MI300A gfx940/941) and CDNA4 (gfx950): 4 MiB of L2
# per XCD, backed by a 256 MiB Infinity Cache that a 2x-L2 flush would not touch.
AMD_LLC_BYTES = {
    "gfx90a": 8 << 20,
    "gfx940": 256 << 20,
    "gfx941": 256 << 20,
    "gfx942": 256 << 20,
    "gfx950": 256 << 20,
}
# Intel Data Center GPU Max: L2 per stack (each stack is one device in the FLAT hierarchy).
INTEL_L2_BYTES = ((r"Max 1550", 204 << 20), (r"Max 1100", 108 << 20))


@cache
def get_device(spec: str = "auto") -> DeviceInfo:
    kind, index = parse_device(spec)
    if kind == "cuda":
        return _cuda_device(index)
    if kind == "xpu":
        return _xpu_device(index)
    return _cpu_device()


def _cuda_device(index: int) -> DeviceInfo:
    props = torch.cuda.get_device_properties(index)
    is_hip = torch.version.hip is not None
    if is_hip:  # ROCm builds of torch expose HIP through the cuda API
        arch = getattr(props, "gcnArchName", "gfx").split(":")[0]
        cc = None
    else:
        arch = f"sm_{props.major}{props.minor}"
        cc = (props.major, props.minor)
    uuid = getattr(props, "uuid", None)
    uuid_s = None if uuid is None else (str(uuid) if is_hip else f"GPU-{uuid}")
    l2 = int(getattr(props, "L2_cache_size", 0)) or None
    return DeviceInfo(
        type="cuda",
        index=index,
        vendor="amd" if is_hip else "nvidia",
        name=props.name,
        uuid=uuid_s,
        arch=arch,
        compute_capability=cc,
        sm_count=props.multi_processor_count,  # CUs on AMD
        l2_bytes=l2,
        memory_bytes=int(props.total_memory),
        driver_version=_amd_driver_version(index) if is_hip else _driver_version(False),
        runtime_version=torch.version.hip if is_hip else torch.version.cuda,
        llc_bytes=AMD_LLC_BYTES.get(arch, l2) if is_hip else l2,
    )


def _xpu_device(index: int) -> DeviceInfo:
    props = torch.xpu.get_device_properties(index)
    l2 = next((b for pat, b in INTEL_L2_BYTES if re.search(pat, props.name)), None)
    return DeviceInfo(
        type="xpu",
        index=index,
        vendor="intel",
        name=props.name,
        uuid=None,
        arch=getattr(props, "platform_name", "xpu"),
        compute_capability=None,
        sm_count=getattr(props, "gpu_subslice_count", 0) or getattr(props, "max_compute_units", 0),
        l2_bytes=l2,
        memory_bytes=int(props.total_memory),
        driver_version=getattr(props, "driver_version", None),
        runtime_version=getattr(torch.version, "xpu", None),
        llc_bytes=l2,
    )


def _cpu_device() -> DeviceInfo:
    return DeviceInfo(
        type="cpu",
        index=0,
        vendor="cpu",
        name=_cpu_name(),
        uuid=None,
        arch=platform.machine(),
        compute_capability=None,
        sm_count=os.cpu_count() or 1,
        l2_bytes=None,
        memory_bytes=None,
        driver_version=None,
        runtime_version=None,
    )


def _cpu_name() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "cpu"


def _amd_driver_version(index: int) -> str | None:
    """amdgpu driver version through amdsmi (ROCm 6+); None where amdsmi is absent."""
    try:
        import amdsmi

        amdsmi.amdsmi_init()
        handle = amdsmi.amdsmi_get_processor_handles()[index]
        return str(amdsmi.amdsmi_get_gpu_driver_info(handle)["driver_version"]) or None
    except Exception:  # no amdsmi, no permission, or fewer handles than HIP devices
        return None


def _driver_version(is_hip: bool) -> str | None:
    if is_hip:
        return None
    try:
        import pynvml

        pynvml.nvmlInit()
        v = pynvml.nvmlSystemGetDriverVersion()
        return v.decode() if isinstance(v, bytes) else v
    except Exception:  # no NVML on this machine: the field stays null
        return None
