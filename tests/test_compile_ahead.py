"""harness/compile_ahead.py: own Triton's candidates compiled in spawned workers before the tune
pass, with the tuners' timers stubbed and nothing stored; the points grouped so that one worker
compiles the kernels a group shares."""

from __future__ import annotations

import io
import os
import sys
import time
from pathlib import Path

import pytest

from harness import compile_ahead
from harness.device import get_device
from harness.problems.attention import AttentionProblem
from harness.problems.gemm import GemmProblem
from harness.sweep import Point

TESTS = Path(__file__).parent


def _decode(**kw) -> AttentionProblem:
    axes = dict(batch=64, q_heads=32, kv_heads=8, q_len=1, kv_len=4096, causal=True)
    axes.update(kv_layout="paged", page_size=16, ragged=True)
    return AttentionProblem(**{**axes, **kw})


def test_points_that_differ_in_size_only_share_a_worker():
    chosen = [
        ("a", Point(_decode(), "own-triton")),
        ("b", Point(_decode(kv_len=16384), "own-triton")),
        ("c", Point(_decode(kv_len=16384), "own-triton-no-longest-first")),
        ("d", Point(_decode(q_len=8), "own-triton")),
        ("e", Point(_decode(batch=16), "own-triton")),
    ]
    groups = compile_ahead.groups_of(chosen)
    # q_len changes the kernels (a constexpr); batch and KV length do not, nor the rung's name
    assert [[t[0] for t in g] for g in groups] == [["a", "b", "c", "e"], ["d"]]
    assert groups[0][2][2] == "own-triton-no-longest-first"  # the provider travels with it


def test_worker_count_follows_cores_memory_and_the_ask():
    groups = [[("k", "attention", "own-triton", _decode(kv_len=16384))]] * 20
    need = 3 * _decode(kv_len=16384).min_bytes() + compile_ahead.WORKER_OVERHEAD_BYTES
    count = compile_ahead.worker_count
    assert count(groups, cores=16, free_gpu_bytes=None) == 14
    assert count(groups, cores=256, free_gpu_bytes=None) == 16
    assert count(groups, cores=64, free_gpu_bytes=5 * need) == 5
    assert count(groups, cores=64, free_gpu_bytes=None, free_host_bytes=12 << 30) == 4
    assert count(groups[:3], cores=64, free_gpu_bytes=None) == 3
    # one worker would only move the compiling, not share it
    assert count(groups, cores=64, free_gpu_bytes=need + need // 2) == 0
    assert count(groups, cores=3, free_gpu_bytes=None) == 0
    assert count(groups, cores=64, free_gpu_bytes=None, asked=0) == 0
    assert count(groups[:2], cores=64, free_gpu_bytes=None, asked=8) == 2


def test_shares_keep_groups_whole_unless_one_is_more_than_its_share():
    group = lambda name, n: [(f"{name}{i}", "gemm", "own-triton", None) for i in range(n)]
    dealt = compile_ahead.shares([group("a", 2), group("b", 2), group("c", 1), group("d", 1)], 3)
    assert sorted(sorted(k for k, *_ in s) for s in dealt) == [
        ["a0", "a1"],
        ["b0", "b1"],
        ["c0", "d0"],
    ]
    # one sweep of 8 rungs at one shape: cut into even shares, or one worker would do it all
    dealt = compile_ahead.shares([group("r", 8)], 4)
    assert [len(s) for s in dealt] == [2, 2, 2, 2]
    assert compile_ahead.shares([group("a", 1)], 4) == [group("a", 1)]


def test_only_providers_registered_to_compile_ahead_on_a_gpu_are_sent():
    cpu = get_device("cpu")
    assert not compile_ahead.compiles_ahead("attention", "own-triton", cpu)
    gpu = type("Gpu", (), {"is_gpu": True})()
    assert compile_ahead.compiles_ahead("attention", "own-triton-no-longest-first", gpu)
    assert compile_ahead.compiles_ahead("gemm", "own-triton-gluon", gpu)
    assert not compile_ahead.compiles_ahead("attention", "own-cutlass", gpu)
    # named own-triton, but prepare builds a layer, not a tuned Triton point
    assert not compile_ahead.compiles_ahead("decoder_layer", "own-triton", gpu)
    assert not compile_ahead.compile_ahead(
        [("k", Point(_decode(), "own-triton"))], cpu, 1, "randn", io.StringIO()
    )


@pytest.fixture
def marks(monkeypatch, tmp_path):
    """tests/compile_ahead_providers.py registered here and in the spawned workers; a fresh tune
    cache and a folder for the candidates' marks."""
    monkeypatch.syspath_prepend(str(TESTS))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(TESTS), *sys.path]))
    monkeypatch.setenv("HARNESS_EXTRA_PROVIDERS", "compile_ahead_providers")
    monkeypatch.setenv("HARNESS_TUNE_CACHE", str(tmp_path / "tune"))
    (tmp_path / "marks").mkdir()
    monkeypatch.setenv("COMPILE_AHEAD_MARKS", str(tmp_path / "marks"))
    return tmp_path


def _gemm(m: int) -> GemmProblem:
    return GemmProblem(m=m, n=16, k=16, dtype="fp32", layout="nn")


def test_workers_launch_every_candidate_time_nothing_and_store_nothing(marks, monkeypatch):
    groups = [
        [
            ("k32", "gemm", "own-triton-marks", _gemm(32)),
            ("k13", "gemm", "own-triton-marks", _gemm(13)),
        ],
        [("k48", "gemm", "own-triton-marks", _gemm(48))],
    ]
    results = compile_ahead.run_workers(groups, "cpu", 1, "randn", workers=2)
    assert results["k32"] is None and results["k48"] is None
    assert results["k13"] == "RuntimeError: no candidate fits m 13"  # the pass will say why
    launched = [p for p in (marks / "marks").iterdir() if p.name[0].isdigit()]
    # and the prepared launch once (what compiles the choice where the cache held it)
    assert sorted(p.name.rsplit("-", 1)[0] for p in (marks / "marks").glob("run-*")) == [
        "run-32",
        "run-48",
    ]
    made = sorted(p.name.rsplit("-", 1)[0] for p in launched)
    assert made == ["32-0", "32-1", "32-2", "48-0", "48-1", "48-2"]  # each launched once
    assert os.getpid() not in {int(p.name.rsplit("-", 1)[1]) for p in launched}
    # the stubbed timer made the first candidate win, and no decision was kept
    tune = marks / "tune"
    assert not tune.exists() or not any(tune.rglob("*.json"))
    # the same prepare here, timed by a stand-in timer and unstubbed, does store its decision:
    # the workers' empty cache is the stub's doing
    from harness_kernels.triton import attention_tune

    from harness.providers import load_all

    monkeypatch.setattr(attention_tune, "bench_cold", lambda fn, device: 1.0)
    cpu = get_device("cpu")
    problem = _gemm(32)
    load_all().get("gemm", "own-triton-marks").prepare(
        problem, problem.make_inputs(1, "randn", cpu.torch_device), cpu
    )
    assert any(tune.rglob("*"))


def _pids(marks, m: int) -> list[int]:
    return [int(p.name.rsplit("-", 1)[1]) for p in (marks / "marks").glob(f"pid-{m}-*")]


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def test_a_worker_that_dies_leaves_its_points_to_the_pass(marks):
    groups = [
        [
            ("k7", "gemm", "own-triton-marks", _gemm(7)),
            ("k32", "gemm", "own-triton-marks", _gemm(32)),
        ],
        [("k48", "gemm", "own-triton-marks", _gemm(48))],
    ]
    results = compile_ahead.run_workers(groups, "cpu", 1, "randn", workers=2)
    assert results["k48"] is None
    assert results["k7"] == results["k32"] == "its worker ended (exit code 3)"


def test_a_worker_that_cannot_start_says_so_for_each_point(marks, monkeypatch):
    monkeypatch.setenv("HARNESS_EXTRA_PROVIDERS", "compile_ahead_providers,no_such_module_here")
    groups = [[("k32", "gemm", "own-triton-marks", _gemm(32))]] * 2
    results = compile_ahead.run_workers(groups, "cpu", 1, "randn", workers=2)
    assert results["k32"].startswith("worker did not start: ModuleNotFoundError")


def test_the_deadline_kills_the_workers(marks):
    groups = [
        [("k5", "gemm", "own-triton-marks", _gemm(5))],
        [("k6", "gemm", "own-triton-marks", _gemm(6))],
    ]
    began = time.time()
    results = compile_ahead.run_workers(groups, "cpu", 1, "randn", workers=2, deadline=began + 20)
    assert results == {"k5": "not reached by the deadline (or all workers stalled)", "k6": None}
    assert time.time() - began < 40  # the sleeping worker was killed, not waited for
    (pid,) = _pids(marks, 5)
    assert _gone(pid)


def test_workers_that_all_stall_are_killed(marks, monkeypatch):
    monkeypatch.setattr(compile_ahead, "STALL_S", 8.0)
    groups = [[("k5", "gemm", "own-triton-marks", _gemm(5))]]
    began = time.time()
    results = compile_ahead.run_workers(groups, "cpu", 1, "randn", workers=1)  # no deadline
    assert results == {"k5": "not reached by the deadline (or all workers stalled)"}
    assert time.time() - began < 40
    assert all(_gone(pid) for pid in _pids(marks, 5))


def test_stub_timers_replaces_every_timer_a_tuner_bound(monkeypatch):
    """Each tuner module binds bench_cold / bench_capped by name at import: after stub_timers
    none holds a real timer, and tune_cache.save writes nothing. (Restored after the test.)"""
    import importlib

    import harness_kernels.bench_cold as bench
    import harness_kernels.tune_cache as tune_cache

    names = ["capped_retime", "cutlass.gemm_tune", "triton.attention_tune"]
    names += ["triton.gemm_tune", "triton.kernel_choice"]
    modules = [bench, *(importlib.import_module(f"harness_kernels.{n}") for n in names)]
    real = {bench.bench_cold, bench.bench_capped}
    for module in modules:
        for name in compile_ahead.TIMER_NAMES:
            if hasattr(module, name):
                monkeypatch.setattr(module, name, getattr(module, name))
    monkeypatch.setattr(tune_cache, "save", tune_cache.save)
    compile_ahead.stub_timers()
    held = {
        (m.__name__, n)
        for m in modules
        for n in compile_ahead.TIMER_NAMES
        if getattr(m, n, None) in real
    }
    assert held == set()
    assert sum(hasattr(m, n) for m in modules for n in compile_ahead.TIMER_NAMES) >= 7
    assert bench.bench_cold(lambda: None, None) == 0.0 and tune_cache.save(None, [], 0, 1.0) is None
