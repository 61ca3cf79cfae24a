"""harness/compile_ahead.py: own Triton's candidates compiled in spawned workers before the tune
pass, with the tuners' timers stubbed and nothing stored; the points grouped so that one worker
compiles the kernels a group shares."""

from __future__ import annotations

import io
import os
import sys
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
    assert compile_ahead.worker_count(groups, cores=16, free_gpu_bytes=None) == 14
    assert compile_ahead.worker_count(groups, cores=256, free_gpu_bytes=None) == 16
    assert compile_ahead.worker_count(groups, cores=64, free_gpu_bytes=5 * need) == 5
    assert compile_ahead.worker_count(groups, cores=64, free_gpu_bytes=need // 2) == 1
    assert compile_ahead.worker_count(groups[:3], cores=64, free_gpu_bytes=None) == 3
    assert compile_ahead.worker_count(groups, cores=64, free_gpu_bytes=None, asked=0) == 0
    assert compile_ahead.worker_count(groups[:2], cores=64, free_gpu_bytes=None, asked=8) == 2


def test_only_own_triton_on_a_gpu_is_sent():
    cpu = get_device("cpu")
    assert not compile_ahead.compiles_ahead("own-triton", cpu)
    gpu = type("Gpu", (), {"is_gpu": True})()
    assert compile_ahead.compiles_ahead("own-triton-no-longest-first", gpu)
    assert not compile_ahead.compiles_ahead("own-cutlass", gpu)
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
    made = sorted(p.name.rsplit("-", 1)[0] for p in (marks / "marks").iterdir())
    assert made == ["32-0", "32-1", "32-2", "48-0", "48-1", "48-2"]  # each launched once
    assert os.getpid() not in {int(p.name.rsplit("-", 1)[1]) for p in (marks / "marks").iterdir()}
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


def test_the_deadline_ends_the_workers(marks):
    groups = [[("k32", "gemm", "own-triton-marks", _gemm(32))]]
    results = compile_ahead.run_workers(groups, "cpu", 1, "randn", workers=1, deadline=0.0)
    assert results == {"k32": "not reached by the deadline"}
