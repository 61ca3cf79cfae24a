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


def test_an_own_row_names_the_gpu_that_timed_its_tuners_decision(tmp_path, monkeypatch):
    """An own provider's config that names a tune-cache entry gets `tuned_on`: the GPU UUID the
    entry was timed on, as this process knows it (tuned here, or read back from disk); a vendor
    provider's config, or one without a tune_key, is left as it was."""
    from harness_kernels import tune_cache

    monkeypatch.setenv("HARNESS_TUNE_CACHE", str(tmp_path))
    monkeypatch.setattr(tune_cache, "_ORIGIN", {})
    monkeypatch.setattr(tune_cache, "gpu_uuid", lambda: "GPU-tuner")
    key = tune_cache.make_key(
        "test", "Fake GPU", ("p",), [1, 2], toolchain="t", sources=("bench_cold.py",)
    )
    tune_cache.save(key, [1, 2], 0, 0.1)  # tuned on GPU-tuner
    monkeypatch.setattr(tune_cache, "_ORIGIN", {})  # a later process
    tune_cache.load(key, [1, 2])

    def tuned(problem, inputs, device):
        return Prepared(lambda: None, {"tune_key": key.digest, "tune_source": "cache"})

    def untuned(problem, inputs, device):
        return Prepared(lambda: None, {"variant": "full"})

    reg = Registry()
    register("own-tuned", "gemm", "own", ("cpu",), registry=reg)(tuned)
    register("own-untuned", "gemm", "own", ("cpu",), registry=reg)(untuned)
    register("vendor-tuned", "gemm", "vendor", ("cpu",), registry=reg)(tuned)
    problem, device = GemmProblem(m=8, n=8, k=8, dtype="fp32"), get_device("cpu")
    prepare = lambda name: reg.get("gemm", name).prepare(problem, {}, device).config  # noqa: E731
    assert prepare("own-tuned")["tuned_on"] == "GPU-tuner"
    assert "tuned_on" not in prepare("own-untuned")
    assert "tuned_on" not in prepare("vendor-tuned")
    assert reg.get("gemm", "own-tuned").prepare.__name__ == "tuned"  # functools.wraps


def test_an_own_row_says_its_decision_was_seeded(tmp_path, monkeypatch):
    """A decision timed on another GPU's best few candidates only (harness_kernels/tune_seed.py)
    is named in the row's config (`tune_seeded_from`), read back from disk while seeding is on;
    a decision tuned in full adds nothing."""
    from harness_kernels import tune_cache

    monkeypatch.setenv("HARNESS_TUNE_CACHE", str(tmp_path))
    monkeypatch.setenv("HARNESS_TUNE_SEED", "1")
    monkeypatch.setattr(tune_cache, "_SEEDS", {})
    make = lambda p: tune_cache.make_key(  # noqa: E731
        "test", "Fake GPU", (p,), [1, 2], toolchain="t", sources=("bench_cold.py",)
    )
    seeded, full = make("seeded"), make("full")
    seed = dict(sources=["Fake H100 (driver 1)"], entries=["e"], top=1, tried=1, of=2)
    tune_cache.note_seed(seeded, seed)
    tune_cache.save(seeded, [1, 2], 1, 0.1)
    tune_cache.save(full, [1, 2], 0, 0.1)
    monkeypatch.setattr(tune_cache, "_SEEDS", {})  # a later process
    assert tune_cache.load(seeded, [1, 2]) is not None and tune_cache.load(full, [1, 2])

    def prepared_for(key):
        return lambda problem, inputs, device: Prepared(lambda: None, {"tune_key": key.digest})

    reg = Registry()
    register("own-seeded", "gemm", "own", ("cpu",), registry=reg)(prepared_for(seeded))
    register("own-full", "gemm", "own", ("cpu",), registry=reg)(prepared_for(full))
    problem, device = GemmProblem(m=8, n=8, k=8, dtype="fp32"), get_device("cpu")
    prepare = lambda name: reg.get("gemm", name).prepare(problem, {}, device).config  # noqa: E731
    said = prepare("own-seeded")["tune_seeded_from"]
    assert said == "Fake H100 (driver 1), top 1: 1 of 2 timed"
    assert "tune_seeded_from" not in prepare("own-full")
