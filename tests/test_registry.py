import pytest

from harness.device import get_device
from harness.problems import GemmProblem
from harness.providers import Prepared, Registry, load_all, register


def _prep(problem, inputs, device):
    return Prepared(lambda: None)


def test_duplicate_registration_is_an_error():
    reg = Registry()
    register("x", "gemm", "own", ("cpu",), registry=reg)(_prep)
    with pytest.raises(ValueError, match="registered twice"):
        register("x", "gemm", "own", ("cpu",), registry=reg)(_prep)
    register("x", "attention", "own", ("cpu",), registry=reg)(_prep)  # same name, other op: fine


def test_bad_family_or_vendor_rejected():
    reg = Registry()
    with pytest.raises(ValueError, match="family"):
        register("x", "gemm", "mine", ("cpu",), registry=reg)(_prep)
    with pytest.raises(ValueError, match="vendors"):
        register("y", "gemm", "own", ("tpu",), registry=reg)(_prep)


def test_unknown_provider_lists_allowed():
    reg = load_all()
    with pytest.raises(ValueError, match=r"provider: unknown 'nope'.*allowed: .*cublas"):
        reg.get("gemm", "nope")


def test_every_required_provider_is_registered():
    reg = load_all()
    for name in ("cublas", "cublaslt-fp8", "torch-cpu", "hipblaslt", "own-triton"):
        assert name in reg.names("gemm")
    for name in (
        "sdpa-flash",
        "sdpa-efficient",
        "sdpa-cudnn",
        "sdpa-math",
        "flash-attn",
        "sdpa-paged-gather",
        "own-triton",
    ):
        assert name in reg.names("attention")
    assert {p.family for p in reg} == {"own", "vendor"}


def test_availability_reasons_on_cpu():
    reg, cpu = load_all(), get_device("cpu")
    assert "not cpu" in reg.get("gemm", "cublas").why_unavailable(cpu)
    assert reg.get("gemm", "torch-cpu").why_unavailable(cpu) is None
    fa = reg.get("attention", "flash-attn")
    assert fa.why_unavailable(cpu)  # vendor (and, here, the import) rule it out


def test_supports_gives_reasons():
    reg, cpu = load_all(), get_device("cpu")
    fp8 = reg.get("gemm", "cublaslt-fp8")
    assert "layout nt" in fp8.supports(GemmProblem(16, 16, 16, "fp8_e4m3", "nn"), cpu)
    assert fp8.supports(GemmProblem(16, 16, 16, "fp8_e4m3", "nt"), cpu) is None
    assert "fp8" in reg.get("gemm", "cublas").supports(GemmProblem(16, 16, 16, "fp8_e4m3"), cpu)
