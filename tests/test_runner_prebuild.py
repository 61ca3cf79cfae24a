"""Before the first point of a GPU sweep, every CUTLASS library the pending points need is built
in one parallel call; CPU sweeps and sweeps without CUTLASS providers build nothing."""

import io

from harness.device import DeviceInfo
from harness.problems import GemmProblem
from harness.providers import own_cutlass
from harness.runner import _prebuild_libraries
from harness.sweep import Point

GPU = DeviceInfo("cuda", 0, "nvidia", "H200", None, "sm_90", (9, 0), 132, 1, 1, None, None)
CPU = DeviceInfo("cpu", 0, "cpu", "cpu", None, "x86_64", None, 2, None, None, None, None)


def test_cutlass_libraries_are_built_once_before_the_sweep(monkeypatch):
    calls = []
    monkeypatch.setattr(
        own_cutlass,
        "prebuild",
        lambda problems, providers: (
            calls.append((list(problems), providers)) or {"a": "cached", "b": "error: nvcc failed"}
        ),
    )
    p1, p2 = GemmProblem(16, 4096, 4096, "bf16", "nt"), GemmProblem(32, 4096, 4096, "bf16", "nt")
    todo = [
        ("k1", Point(p1, "own-cutlass")),
        ("k2", Point(p1, "cublas")),
        ("k3", Point(p2, "own-cutlass-sm80-multistage")),
    ]
    out = io.StringIO()
    _prebuild_libraries(todo, GPU, out)
    assert calls == [([p1, p2], ["own-cutlass", "own-cutlass-sm80-multistage"])]
    assert "2 CUTLASS libraries ready" in out.getvalue() and "1 failed" in out.getvalue()
    _prebuild_libraries(todo, CPU, out)
    _prebuild_libraries([("k2", Point(p1, "cublas"))], GPU, out)
    assert len(calls) == 1
