"""Clocks, power, temperature and throttle reasons sampled through NVML while a point is timed.

A number measured at 1.1 GHz is not the number measured at 1.98 GHz: every row carries the
median SM clock and the union of throttle reasons seen during its timed window, so a reader can
tell a slow kernel from a throttled card. Fields are null where NVML is unavailable.
"""

from __future__ import annotations

import threading
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


class Telemetry:
    """Background sampler; start() at the timed window's start, stop() at its end."""

    def __init__(self, vendor: str, index: int, interval_s: float = 0.01) -> None:
        self.interval_s = interval_s
        self._handle = None
        self._nvml = None
        if vendor == "nvidia":
            try:
                import pynvml

                pynvml.nvmlInit()
                self._handle = pynvml.nvmlDeviceGetHandleByIndex(index)
                self._nvml = pynvml
            except Exception:  # no driver library or no permission: telemetry stays null
                self._handle = None
        self._series = _Series()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def available(self) -> bool:
        return self._handle is not None

    def _sample(self) -> None:
        nv, h, s = self._nvml, self._handle, self._series
        for target, read in (
            (s.sm, lambda: nv.nvmlDeviceGetClockInfo(h, nv.NVML_CLOCK_SM)),
            (s.mem, lambda: nv.nvmlDeviceGetClockInfo(h, nv.NVML_CLOCK_MEM)),
            (s.power, lambda: nv.nvmlDeviceGetPowerUsage(h) / 1000.0),
            (s.temp, lambda: nv.nvmlDeviceGetTemperature(h, nv.NVML_TEMPERATURE_GPU)),
        ):
            try:
                target.append(float(read()))
            except Exception:
                pass
        try:
            s.throttle |= int(nv.nvmlDeviceGetCurrentClocksEventReasons(h))
        except Exception:
            pass
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
            source="nvml",
        )
