"""Telemetry's vendor switch on the CPU: a fake `amdsmi` module (the ROCm 6 Python API's names
and return shapes) stands in for the library, so the AMD sampler runs without an AMD GPU."""

from __future__ import annotations

import enum
import sys
import types

import pytest

from harness.measure.telemetry import Telemetry, decode_throttle


def fake_amdsmi(power: dict, temps: dict, throttled: bool = False) -> types.ModuleType:
    """amdsmi as ROCm 6.2 exposes it: clocks in MHz, socket power in W, temperature per sensor."""
    m = types.ModuleType("amdsmi")
    m.AmdSmiClkType = enum.IntEnum("AmdSmiClkType", "SYS GFX MEM")
    m.AmdSmiTemperatureType = enum.IntEnum("AmdSmiTemperatureType", "EDGE HOTSPOT VRAM")
    m.AmdSmiTemperatureMetric = enum.IntEnum("AmdSmiTemperatureMetric", "CURRENT MAX")
    m.calls = {"init": 0}

    def temp(h, sensor, metric):
        if sensor.name not in temps:
            raise RuntimeError("AMDSMI_STATUS_NOT_SUPPORTED")
        return temps[sensor.name]

    m.amdsmi_init = lambda *a: m.calls.__setitem__("init", m.calls["init"] + 1)
    m.amdsmi_get_processor_handles = lambda: ["gpu0", "gpu1"]
    m.amdsmi_get_gpu_device_bdf = lambda h: {"gpu0": "0000:0c:00.0", "gpu1": "0000:22:00.0"}[h]
    m.amdsmi_get_clock_info = lambda h, t: {
        "clk": {"GFX": 2100, "MEM": 1300}[t.name],
        "min_clk": 500,
        "max_clk": 2100,
        "clk_locked": False,
    }
    m.amdsmi_get_power_info = lambda h: dict(power)
    m.amdsmi_get_temp_metric = temp
    m.amdsmi_get_gpu_metrics_info = lambda h: {"throttle_status": throttled}
    return m


def _window(tel: Telemetry):
    tel.start()
    return tel.stop()


def test_amd_telemetry_through_amdsmi_mi300x(monkeypatch):
    # MI300X: current_socket_power filled, no edge sensor (hotspot only).
    smi = fake_amdsmi({"current_socket_power": 712, "average_socket_power": "N/A"}, {"HOTSPOT": 61})
    monkeypatch.setitem(sys.modules, "amdsmi", smi)
    tel = Telemetry("amd", 1, interval_s=0.001)
    assert tel.available and tel.source == "amdsmi"
    s = _window(tel)
    assert (s.sm_clock_mhz, s.mem_clock_mhz, s.power_w, s.temp_c) == (2100, 1300, 712, 61)
    assert s.throttle_reasons == "" and s.telemetry_samples >= 2 and s.source == "amdsmi"


def test_amd_telemetry_mi250x_average_power_millidegrees_and_throttle(monkeypatch):
    smi = fake_amdsmi(
        {"current_socket_power": 0, "average_socket_power": 380},
        {"EDGE": 45000, "HOTSPOT": 52000},
        throttled=True,
    )
    monkeypatch.setitem(sys.modules, "amdsmi", smi)
    s = _window(Telemetry("amd", 0, interval_s=0.001))
    assert s.power_w == 380 and s.temp_c == 52.0
    assert s.throttle_reasons == "amd_throttle_status"


def test_amd_reading_that_fails_leaves_only_that_field_null(monkeypatch):
    smi = fake_amdsmi({"current_socket_power": "N/A", "average_socket_power": "N/A"}, {})
    monkeypatch.setitem(sys.modules, "amdsmi", smi)
    s = _window(Telemetry("amd", 0, interval_s=0.001))
    assert s.sm_clock_mhz == 2100 and s.power_w is None and s.temp_c is None


def test_handle_matched_by_pci_bus_id(monkeypatch):
    import torch

    from harness.measure.telemetry import amdsmi_handle

    smi = fake_amdsmi({}, {})
    props = types.SimpleNamespace(pci_bus_id=0x22, pci_domain_id=0)
    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda i: props)
    assert amdsmi_handle(smi, 0) == "gpu1"  # HIP device 0 is the second GPU amdsmi lists


def test_missing_library_means_null_telemetry(monkeypatch):
    monkeypatch.setitem(sys.modules, "amdsmi", None)  # import amdsmi raises ImportError
    tel = Telemetry("amd", 0)
    assert not tel.available and tel.source == "none"
    s = _window(tel)
    assert s.sm_clock_mhz is None and s.source == "none"
    assert not Telemetry("intel", 0).available and not Telemetry("cpu", 0).available


@pytest.mark.parametrize(("mask", "names"), [(0x4 | 0x40, ["sw_power_cap", "hw_thermal"])])
def test_nvml_throttle_bits_unchanged(mask, names):
    assert decode_throttle(mask) == names
