"""Before the first point of a GPU sweep the runner asks every pending point's provider what to
build (Provider.prebuild) and builds it, one parallel call per builder; CPU sweeps and sweeps
without such providers build nothing. The own-cutlass providers declare their libraries."""

import io

from harness.device import DeviceInfo
from harness.problems import GemmProblem
from harness.providers import Provider, Registry, load_all
from harness.providers.own_cutlass import specs_for
from harness.providers.registry import Prebuild
from harness.runner import prebuild
from harness.sweep import Point

GPU = DeviceInfo("cuda", 0, "nvidia", "H200", None, "sm_90", (9, 0), 132, 1, 1, None, None)
CPU = DeviceInfo("cpu", 0, "cpu", "cpu", None, "x86_64", None, 2, None, None, None, None)
P1, P2 = GemmProblem(16, 4096, 4096, "bf16", "nt"), GemmProblem(32, 4096, 4096, "bf16", "nt")


def _registry(calls: list) -> Registry:
    """lib-a and lib-b share one builder (lib-b needs one spec lib-a needs too); plain has none."""

    def build(specs):
        calls.append(specs)
        return {s: "error: nvcc failed" if s == "b-m32" else "cached" for s in specs}

    def hook(tag: str) -> Prebuild:
        return Prebuild(lambda problems: [f"{tag}-m{p.m}" for p in problems], build, "libraries")

    registry = Registry()
    never = lambda *_: None
    registry.add(Provider("lib-a", "gemm", "own", ("nvidia",), never, prebuild=hook("a")))
    registry.add(Provider("lib-b", "gemm", "own", ("nvidia",), never, prebuild=hook("b")))
    registry.add(Provider("plain", "gemm", "vendor", ("nvidia",), never))
    return registry


def test_declared_builds_run_once_before_the_sweep():
    calls: list = []
    registry = _registry(calls)
    todo = [
        ("k1", Point(P1, "lib-a")),
        ("k2", Point(P1, "plain")),
        ("k3", Point(P2, "lib-b")),
        ("k4", Point(P2, "lib-a")),
    ]
    out = io.StringIO()
    prebuild(todo, registry, GPU, out)
    assert calls == [["a-m16", "a-m32", "b-m32"]]  # one call for the shared builder
    assert "3 libraries ready" in out.getvalue() and "1 failed" in out.getvalue()
    prebuild(todo, registry, CPU, out)
    prebuild([("k2", Point(P1, "plain"))], registry, GPU, out)
    assert len(calls) == 1


def test_own_cutlass_providers_declare_their_libraries():
    registry = load_all()
    tuned = registry.get("gemm", "own-cutlass").prebuild
    fixed = registry.get("gemm", "own-cutlass-sm80-multistage").prebuild
    assert tuned is not None and fixed is not None and tuned.build is fixed.build
    assert fixed.needs([P1]) == specs_for([P1], ["own-cutlass-sm80-multistage"])
    assert registry.get("gemm", "cublas").prebuild is None
