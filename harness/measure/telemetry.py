"""Clocks, power, temperature and throttle reasons sampled while a point is timed: through NVML
on NVIDIA, through amdsmi (ROCm 6+) on AMD.

A number measured at 1.1 GHz is not the number measured at 1.98 GHz: every row carries the
median SM (GFX) clock and the union of throttle reasons seen during its timed window, so a reader
can tell a slow kernel from a throttled card. Fields are null where the library is unavailable
(Intel GPUs: no sampler yet).
"""

from __future__ import annotations

import threading
import typing
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

# NVML clocks-event (throttle) reason bits, named as nvidia-smi names them.
_THROTTLE_BITS = {
    0x1: "gpu_idle",
    0x2: "applications_clocks",
    0x4: "sw_power_cap",
    0x8: "hw_slowdown",
    0x10: "sync_boost",
    0x20: "sw_thermal",
    0x40: "hw_thermal",
    0x80: "hw_power_brake",
    0x100: "display_clocks",
}


# "Idle" is not a slowdown: the GPU idles between sampling batches by design.
_IDLE_BIT = 0x1


def decode_throttle(mask: int) -> list[str]:
    return [name for bit, name in _THROTTLE_BITS.items() if mask & bit]


@dataclass
class TelemetrySummary:
    sm_clock_mhz: float | None = None
    mem_clock_mhz: float | None = None
    power_w: float | None = None
    temp_c: float | None = None
    throttle_reasons: str | None = None  # comma-joined union over the window; "" when none
    telemetry_samples: int = 0
    source: str = "none"


@dataclass
class _Series:
    sm: list[float] = field(default_factory=list)
    mem: list[float] = field(default_factory=list)
    power: list[float] = field(default_factory=list)
    temp: list[float] = field(default_factory=list)
    throttle: int = 0
    n: int = 0


class _NvmlReader:
    """One NVML reading: SM / memory clock (MHz), power (W), temperature (C), throttle bits."""

    source = "nvml"

    def __init__(self, index: int) -> None:
        import pynvml

        pynvml.nvmlInit()
        self.nv, self.h = pynvml, pynvml.nvmlDeviceGetHandleByIndex(index)

    def read(self) -> dict:
        nv, h = self.nv, self.h
        return _each(
            sm=lambda: nv.nvmlDeviceGetClockInfo(h, nv.NVML_CLOCK_SM),
            mem=lambda: nv.nvmlDeviceGetClockInfo(h, nv.NVML_CLOCK_MEM),
            power=lambda: nv.nvmlDeviceGetPowerUsage(h) / 1000.0,
            temp=lambda: nv.nvmlDeviceGetTemperature(h, nv.NVML_TEMPERATURE_GPU),
            throttle=lambda: nv.nvmlDeviceGetCurrentClocksEventReasons(h),
        )

    def power_limit_w(self) -> float:
        return self.nv.nvmlDeviceGetEnforcedPowerLimit(self.h) / 1000.0


def amdsmi_handle(amdsmi, index: int):
    """The amdsmi handle of HIP device `index`: matched by PCI bus id when torch reports one
    (amdsmi lists every GPU, HIP only the visible ones), else by position."""
    handles = amdsmi.amdsmi_get_processor_handles()
    try:
        import torch

        props = torch.cuda.get_device_properties(index)
        bus, dom = getattr(props, "pci_bus_id", None), getattr(props, "pci_domain_id", 0)
        if bus is not None:
            for h in handles:  # BDF "dddd:bb:dd.f"
                d, b = amdsmi.amdsmi_get_gpu_device_bdf(h).split(":")[:2]
                if int(b, 16) == bus and int(d, 16) == dom:
                    return h
    except Exception:  # no torch GPU in this process (tests) or an older amdsmi: by position
        pass
    return handles[index]


class _AmdSmiReader:
    """One amdsmi reading: GFX / memory clock (MHz), socket power (W), hotspot temperature (C),
    and the firmware's throttle flag (one bit: AMD reports no per-cause mask here)."""

    source = "amdsmi"

    def __init__(self, index: int) -> None:
        import amdsmi

        amdsmi.amdsmi_init()
        self.smi, self.h = amdsmi, amdsmi_handle(amdsmi, index)

    def _power(self) -> float:
        info = self.smi.amdsmi_get_power_info(self.h)
        # MI300 fills current_socket_power, MI200 only the average; unsupported reads "N/A".
        for key in ("current_socket_power", "average_socket_power"):
            if isinstance(info.get(key), int | float) and info[key] > 0:
                return float(info[key])
        raise ValueError("no socket power")

    def _temp(self) -> float:
        smi = self.smi
        for sensor in ("HOTSPOT", "EDGE"):  # MI300X has no edge sensor
            try:
                t = smi.amdsmi_get_temp_metric(
                    self.h,
                    getattr(smi.AmdSmiTemperatureType, sensor),
                    smi.AmdSmiTemperatureMetric.CURRENT,
                )
            except Exception:
                continue
            # amdsmi.h documents millidegrees; the library returns degrees on ROCm 6: accept both.
            return t / 1000.0 if t > 1000 else float(t)
        raise ValueError("no temperature sensor")

    def read(self) -> dict:
        smi, h = self.smi, self.h
        return _each(
            sm=lambda: smi.amdsmi_get_clock_info(h, smi.AmdSmiClkType.GFX)["clk"],
            mem=lambda: smi.amdsmi_get_clock_info(h, smi.AmdSmiClkType.MEM)["clk"],
            power=self._power,
            temp=self._temp,
            throttle=self._throttle,
        )

    def _throttle(self) -> int:
        status = self.smi.amdsmi_get_gpu_metrics_info(self.h).get("throttle_status")
        return _AMD_THROTTLED if status is True else 0


# Bit standing for "the SMU reported throttling" in the union mask (outside NVML's bits).
_AMD_THROTTLED = 0x10000
_THROTTLE_BITS[_AMD_THROTTLED] = "amd_throttle_status"


class _Reader(typing.Protocol):
    """What Telemetry asks of a vendor's reader (_NvmlReader, _AmdSmiReader)."""

    source: str

    def read(self) -> dict: ...


# The power limiter counts as settled once the board's reported power is within this share of
# the enforced limit (NVML reports an average over about a second: on an H100, cuBLAS rows timed
# right after an idle spell read 600-650 W under sw_power_cap while the same kernels ran at
# 697 W once the average caught up, and at 4-9% higher clocks than the rows timed after them).
SETTLED_POWER_SHARE = 0.97
# Uncapped but still climbing: the averaged power rose by more than this share of the limit
# since the previous reading (a heavy kernel's first slice after idle may not be capped yet).
CLIMBING_POWER_SHARE = 0.05
_POWER_CAP_BIT = 0x4


@dataclass(frozen=True)
class PowerState:
    """The power limiter as NVML reports it: engaged (sw_power_cap), averaged power, limit."""

    capped: bool
    power_w: float
    limit_w: float

    def unsettled(self, before_w: float | None) -> bool:
        """Whether a kernel timed now would not yet run as a sustained stream of it does:
        capped with the averaged power still under SETTLED_POWER_SHARE of the limit (running
        on the budget an idle spell left), or uncapped with the power still climbing since
        `before_w` (the previous reading)."""
        if self.capped:
            return self.power_w < SETTLED_POWER_SHARE * self.limit_w
        rise = self.power_w - before_w if before_w is not None else 0.0
        return rise > CLIMBING_POWER_SHARE * self.limit_w


_READERS: dict[str, Callable[[int], _Reader]] = {"nvidia": _NvmlReader, "amd": _AmdSmiReader}


def _each(**reads) -> dict:
    """Call each reader; a failing one is left out (that field stays null), never fatal."""
    out = {}
    for key, read in reads.items():
        try:
            v = read()
        except Exception:
            continue
        if isinstance(v, int | float):
            out[key] = v
    return out


class Telemetry:
    """Background sampler; start() at the timed window's start, stop() at its end."""

    def __init__(self, vendor: str, index: int, interval_s: float = 0.01) -> None:
        self.interval_s = interval_s
        self._reader: _Reader | None = None
        if vendor in _READERS:
            try:
                self._reader = _READERS[vendor](index)
            except Exception:  # no library, no driver or no permission: telemetry stays null
                self._reader = None
        self._series = _Series()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def available(self) -> bool:
        return self._reader is not None

    def power_state(self) -> PowerState | None:
        """One reading of the board's power limiter: None where the reader has no enforced
        power limit (AMD, Intel, no NVML) or a read fails: the settle then cannot tell."""
        limit = getattr(self._reader, "power_limit_w", None)
        if self._reader is None or limit is None:
            return None
        try:
            r, cap = self._reader.read(), float(limit())
        except Exception:
            return None
        if "power" not in r or not cap > 0:
            return None
        return PowerState(bool(int(r.get("throttle", 0)) & _POWER_CAP_BIT), r["power"], cap)

    @property
    def source(self) -> str:
        return self._reader.source if self._reader is not None else "none"

    def _sample(self) -> None:
        if self._reader is None:  # start() and stop() never sample without a reader
            return
        r, s = self._reader.read(), self._series
        for key, target in (("sm", s.sm), ("mem", s.mem), ("power", s.power), ("temp", s.temp)):
            if key in r:
                target.append(float(r[key]))
        s.throttle |= int(r.get("throttle", 0))
        s.n += 1

    def _loop(self) -> None:
        while not self._stop.wait(self.interval_s):
            self._sample()

    def start(self) -> None:
        if not self.available:
            return
        if self._thread is not None:  # a window left open by a failed point
            self.stop()
        self._series = _Series()
        self._stop.clear()
        self._sample()  # at least one reading even for a window shorter than the interval
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()

    def stop(self) -> TelemetrySummary:
        if not self.available or self._thread is None:
            return TelemetrySummary()
        self._stop.set()
        self._thread.join()
        self._thread = None
        self._sample()
        s = self._series
        med = lambda xs: float(np.median(xs)) if xs else None
        return TelemetrySummary(
            sm_clock_mhz=med(s.sm),
            mem_clock_mhz=med(s.mem),
            power_w=med(s.power),
            temp_c=med(s.temp),
            throttle_reasons=",".join(decode_throttle(s.throttle & ~_IDLE_BIT)),
            telemetry_samples=s.n,
            source=self.source,
        )
