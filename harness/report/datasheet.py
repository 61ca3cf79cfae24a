"""Vendor datasheet peaks, dense (no structured sparsity), for the measured ceilings to be read
against. Every entry names its source; numbers are per package as the vendor states them.

Tensor columns are the matrix-unit (Tensor Core / Matrix Core / XMX) peaks; fp32 is the
non-matrix FMA peak (CUDA cores / vector ALUs). None where the part has no such mode.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass


@dataclass(frozen=True)
class GpuSpec:
    """Datasheet peaks of one GPU model."""

    name: str
    match: str  # regex over the device name torch reports
    vendor: str
    bf16_tflops: float | None
    fp16_tflops: float | None
    fp8_tflops: float | None
    tf32_tflops: float | None
    fp32_tflops: float  # non-tensor FMA peak
    hbm_tbps: float  # memory bandwidth, TB/s (1e12 B/s)
    l2_mib: float
    sm_count: int  # SMs / CUs / Xe cores
    devices_per_package: int = 1  # dies torch shows as separate devices (MI250X GCDs, PVC stacks)
    note: str = ""

    def per_device(self) -> GpuSpec:
        """The share of one torch device when a package shows up as several."""
        d = self.devices_per_package
        if d == 1:
            return self
        scale = lambda v: None if v is None else v / d
        return dataclasses.replace(
            self,
            name=f"{self.name} (1 of {d})",
            bf16_tflops=scale(self.bf16_tflops),
            fp16_tflops=scale(self.fp16_tflops),
            fp8_tflops=scale(self.fp8_tflops),
            tf32_tflops=scale(self.tf32_tflops),
            fp32_tflops=self.fp32_tflops / d,
            hbm_tbps=self.hbm_tbps / d,
            l2_mib=self.l2_mib / d,
            sm_count=self.sm_count // d,
            devices_per_package=1,
        )


# Listed most specific first: the first whose `match` finds the device name wins.
DATASHEET: tuple[GpuSpec, ...] = (
    # NVIDIA H200 NVL (600 W PCIe card): lower clocks than the SXM part.
    # https://www.nvidia.com/en-us/data-center/h200/ (sparse figures halved)
    GpuSpec("H200 NVL", r"H200 NVL", "nvidia", 835.5, 835.5, 1670.5, 417.5, 60.0, 4.8, 60.0, 132),
    # NVIDIA H200 SXM 141 GB: https://www.nvidia.com/en-us/data-center/h200/ (sparse halved:
    # BF16/FP16 1,979 -> 989.4, FP8 3,958 -> 1,978.9, TF32 989 -> 494.7; FP32 67; 4.8 TB/s).
    # L2 is not on the page; 60 MiB is what the CUDA driver reports on an H200 SXM.
    GpuSpec("H200 SXM", r"H200", "nvidia", 989.4, 989.4, 1978.9, 494.7, 66.9, 4.8, 60.0, 132),
    # NVIDIA H100 SXM5 80 GB: H100 datasheet,
    # https://resources.nvidia.com/en-us-tensor-core/nvidia-tensor-core-gpu-datasheet and the
    # Hopper whitepaper (132 SMs, 50 MB L2); HBM3 3.35 TB/s.
    GpuSpec(
        "H100 SXM",
        r"H100.*(SXM|HBM3)",
        "nvidia",
        989.4,
        989.4,
        1978.9,
        494.7,
        66.9,
        3.35,
        50.0,
        132,
    ),
    # NVIDIA A100 SXM4: https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/a100/pdf/nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf
    # (BF16/FP16 312, TF32 156, FP32 19.5; 2,039 GB/s for 80 GB, 1,555 GB/s for 40 GB; 40 MB L2).
    GpuSpec(
        "A100 SXM4 80GB",
        r"A100-SXM4-80GB",
        "nvidia",
        312.0,
        312.0,
        None,
        156.0,
        19.5,
        2.039,
        40.0,
        108,
    ),
    GpuSpec(
        "A100 SXM4 40GB",
        r"A100-SXM4-40GB",
        "nvidia",
        312.0,
        312.0,
        None,
        156.0,
        19.5,
        1.555,
        40.0,
        108,
    ),
    # NVIDIA L40S: https://resources.nvidia.com/en-us-l40s/l40s-datasheet-28413 (sparse halved:
    # BF16/FP16 733 -> 362.05, FP8 1,466 -> 733, TF32 366 -> 183; FP32 91.6; GDDR6 864 GB/s;
    # 96 MB L2 and 142 SMs from the Ada Lovelace whitepaper).
    GpuSpec("L40S", r"L40S", "nvidia", 362.05, 362.05, 733.0, 183.0, 91.6, 0.864, 96.0, 142),
    # AMD Instinct MI300X: https://www.amd.com/en/products/accelerators/instinct/mi300/mi300x.html
    # (FP16/BF16 1,307.4, FP8 2,614.9, TF32 653.7, FP32 vector 163.4; HBM3 5.3 TB/s; 304 CUs)
    # and the CDNA 3 whitepaper (4 MB L2 per XCD x 8, plus a 256 MB Infinity Cache).
    GpuSpec(
        "MI300X",
        r"MI300X",
        "amd",
        1307.4,
        1307.4,
        2614.9,
        653.7,
        163.4,
        5.3,
        32.0,
        304,
        note="FP32 vector peak needs packed FP32; 256 MB Infinity Cache behind the L2",
    ),
    # AMD Instinct MI250X: https://www.amd.com/en/products/accelerators/instinct/mi200/mi250x.html
    # (FP16/BF16 383, FP32 vector 47.9 (packed 95.7), HBM2e 3.2768 TB/s, 220 CUs) and the CDNA 2
    # whitepaper (8 MB L2 per GCD). Two GCDs, each its own device to ROCm.
    GpuSpec("MI250X", r"MI250X", "amd", 383.0, 383.0, None, None, 47.9, 3.2768, 16.0, 220, 2),
    # Intel Data Center GPU Max 1550: https://www.intel.com/content/www/us/en/products/sku/232873/intel-data-center-gpu-max-1550/specifications.html
    # and the Max Series technical overview (128 Xe cores, 1.6 GHz, 408 MB L2, HBM2e 3.2768 TB/s):
    # XMX 4096 BF16/FP16 FLOP/clk/core -> 838.9, TF32 419.4; vector FP32 256 FLOP/clk/core -> 52.4.
    # Two stacks, each its own device in the default (FLAT) hierarchy.
    GpuSpec(
        "Max 1550", r"Max 1550", "intel", 838.9, 838.9, None, 419.4, 52.4, 3.2768, 408.0, 128, 2
    ),
)

# Ceiling metric -> (datasheet field, factor to the metric's unit).
_METRIC_FIELD = {
    "hbm_read_gbps": ("hbm_tbps", 1000.0),
    "hbm_write_gbps": ("hbm_tbps", 1000.0),
    "hbm_copy_gbps": ("hbm_tbps", 1000.0),
    "tensor_bf16_tflops": ("bf16_tflops", 1.0),
    "tensor_fp16_tflops": ("fp16_tflops", 1.0),
    "tensor_fp8_tflops": ("fp8_tflops", 1.0),
    "tensor_tf32_tflops": ("tf32_tflops", 1.0),
    "fp32_fma_tflops": ("fp32_tflops", 1.0),
}


def lookup(device_name: str | None, sm_count: int | None = None) -> GpuSpec | None:
    """The datasheet entry for a device name; scaled to one die when `sm_count` shows the device
    is one GCD / stack of a multi-die package."""
    if not device_name:
        return None
    for spec in DATASHEET:
        if re.search(spec.match, device_name):
            if spec.devices_per_package > 1 and sm_count and sm_count <= spec.sm_count // 2:
                return spec.per_device()
            return spec
    return None


def datasheet_value(spec: GpuSpec | None, metric: str) -> float | None:
    """The datasheet number for a ceiling metric, in the metric's unit (None if not stated)."""
    if spec is None or metric not in _METRIC_FIELD:
        return None
    field_name, factor = _METRIC_FIELD[metric]
    value = getattr(spec, field_name)
    return None if value is None else value * factor
