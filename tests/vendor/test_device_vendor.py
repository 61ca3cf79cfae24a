"""Vendor detection on the CPU: torch's ROCm, CUDA and XPU attributes are monkeypatched with
fake property objects, so the AMD and Intel paths of harness.device run without their GPUs."""

from __future__ import annotations

import types

import pytest
import torch

from harness import device as dev


def _props(**kw) -> types.SimpleNamespace:
    base = dict(name="GPU", major=0, minor=0, multi_processor_count=1, total_memory=1 << 30)
    return types.SimpleNamespace(**{**base, **kw})


@pytest.fixture
def fresh(monkeypatch):
    """get_device is cached per spec: clear it around each test, pretend a GPU is present."""
    dev.get_device.cache_clear()
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    yield monkeypatch
    dev.get_device.cache_clear()


def test_rocm_build_is_amd_with_gfx_arch_cu_count_and_infinity_cache(fresh):
    # MI300X as a ROCm build of torch reports it: the HIP device behind the cuda API.
    props = _props(
        name="AMD Instinct MI300X",
        gcnArchName="gfx942:sramecc+:xnack-",
        multi_processor_count=304,
        L2_cache_size=4 << 20,
        total_memory=192 << 30,
        uuid="abcd",
    )
    fresh.setattr(torch.version, "hip", "6.2.41133")
    fresh.setattr(torch.cuda, "get_device_properties", lambda i: props)
    fresh.setattr(dev, "_amd_driver_version", lambda i: "6.8.5")
    info = dev.get_device("cuda:0")
    assert (info.vendor, info.type, info.arch) == ("amd", "cuda", "gfx942")
    assert info.compute_capability is None and info.sm_count == 304
    assert info.l2_bytes == 4 << 20 and info.llc_bytes == 256 << 20
    assert info.flush_bytes == 256 << 20  # the flush must defeat the Infinity Cache, not the L2
    assert info.runtime_version == "6.2.41133" and info.driver_version == "6.8.5"
    row = info.as_row()
    assert row["device_arch"] == "gfx942" and row["device_sm_count"] == 304
    assert row["device_llc_bytes"] == 256 << 20 and row["device_compute_capability"] is None


def test_mi250x_gcd_flushes_its_l2(fresh):
    props = _props(
        name="AMD Instinct MI250X",
        gcnArchName="gfx90a:sramecc+:xnack-",
        multi_processor_count=110,
        L2_cache_size=8 << 20,
    )
    fresh.setattr(torch.version, "hip", "6.1.0")
    fresh.setattr(torch.cuda, "get_device_properties", lambda i: props)
    fresh.setattr(dev, "_amd_driver_version", lambda i: None)
    info = dev.get_device("cuda:0")
    assert (info.arch, info.sm_count, info.flush_bytes) == ("gfx90a", 110, 8 << 20)


def test_cuda_build_is_nvidia(fresh):
    props = _props(
        name="NVIDIA H200",
        major=9,
        minor=0,
        multi_processor_count=132,
        L2_cache_size=60 << 20,
        uuid="1234",
    )
    fresh.setattr(torch.version, "hip", None)
    fresh.setattr(torch.cuda, "get_device_properties", lambda i: props)
    fresh.setattr(dev, "_driver_version", lambda is_hip: "570.1")
    info = dev.get_device("cuda:0")
    assert (info.vendor, info.arch, info.compute_capability) == ("nvidia", "sm_90", (9, 0))
    assert info.llc_bytes == info.l2_bytes == 60 << 20 and info.uuid == "GPU-1234"


def test_intel_xpu_detected_when_no_cuda(monkeypatch):
    dev.get_device.cache_clear()
    props = _props(
        name="Intel(R) Data Center GPU Max 1550",
        gpu_subslice_count=64,
        driver_version="1.3.29735",
        platform_name="Intel(R) oneAPI Unified Runtime",
    )
    fake_xpu = types.SimpleNamespace(
        is_available=lambda: True, get_device_properties=lambda i: props
    )
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(torch, "xpu", fake_xpu)
    try:
        assert dev.parse_device("auto") == ("xpu", 0)
        info = dev.get_device("xpu:0")
        assert (info.vendor, info.type, info.sm_count) == ("intel", "xpu", 64)
        assert info.l2_bytes == 204 << 20 and info.driver_version == "1.3.29735"
    finally:
        dev.get_device.cache_clear()


def test_no_gpu_means_cpu_and_xpu_refused(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(torch, "xpu", types.SimpleNamespace(is_available=lambda: False))
    assert dev.parse_device("auto") == ("cpu", 0)
    with pytest.raises(ValueError, match="torch sees no Intel GPU"):
        dev.parse_device("xpu:0")


def test_broken_xpu_runtime_is_not_available(monkeypatch):
    def boom():
        raise RuntimeError("level zero loader missing")

    monkeypatch.setattr(torch, "xpu", types.SimpleNamespace(is_available=boom))
    assert dev.xpu_available() is False


def test_protocol_resolves_timer_per_device_type():
    from harness.measure.protocol import Protocol

    p = Protocol()
    assert [p.resolved_timer(t) for t in ("cpu", "cuda", "xpu")] == [
        "host",
        "cuda-events",
        "xpu-events",
    ]
