"""Seeded tuning (kernels/tune_seed.py) through the own CUTLASS tuner, on the CPU: building and
timing are faked (counted), so which candidates were timed is known. No timing is asserted."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from harness_kernels import tune_cache, tune_seed
from harness_kernels.cutlass import gemm_tune as cutlass_tune
from harness_kernels.cutlass.gemm import CONFIGS, RunOptions

from harness.report.gap_reasons import _tuned_where

CANDS = [
    (CONFIGS["sm90-streamk-128x128"], RunOptions()),
    (CONFIGS["sm90-streamk-128x128"], RunOptions("split-k", 2)),
    (CONFIGS["sm90-pingpong-128x128"], RunOptions(swizzle=1)),
]
# burst ms by candidate position (1-based): the fastest is the split-K, then the stream-K
FAKE_MS = {1: 2.0, 2: 1.0, 3: 3.0}


@pytest.fixture
def gpu(tmp_path, monkeypatch) -> dict:
    """A fresh cache, the CUTLASS tuner with building and timing faked, and a GPU whose name a
    test sets; `timed` lists the candidate positions timed, in order."""
    monkeypatch.setenv("HARNESS_TUNE_CACHE", str(tmp_path / "tune"))
    monkeypatch.delenv("HARNESS_TUNE_SEED", raising=False)
    state: dict = {"name": "Fake H100", "timed": [], "built": [], "cache": tmp_path / "tune"}

    class FakeLaunch:
        def __init__(self, position: int):
            self.position = position

        def __call__(self) -> torch.Tensor:
            return state["expected"]

    def prepare(a, b, config, alpha=None, options=None):
        return FakeLaunch(CANDS.index((config, options)) + 1)

    def bench_cold(launch, device) -> float:
        state["timed"].append(launch.position)
        return FAKE_MS[launch.position]

    monkeypatch.setattr(
        cutlass_tune.build, "build_many", lambda specs: state["built"].append(len(list(specs)))
    )
    monkeypatch.setattr(cutlass_tune, "prepare_gemm", prepare)
    monkeypatch.setattr(cutlass_tune, "bench_cold", bench_cold)
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda device=None: state["name"])
    a, b = torch.randn(256, 128).bfloat16(), torch.randn(64, 128).bfloat16().t()
    state["a"], state["b"], state["expected"] = a, b, a.float() @ b.float()
    fresh()
    yield state
    fresh()


def fresh() -> None:
    """A new process's state: no in-process decisions, no folder read."""
    cutlass_tune.clear_cache()
    tune_seed.clear_index()
    tune_cache._SEEDS.clear()


def tune(state: dict, name: str) -> cutlass_tune.TuneResult:
    state["name"], state["timed"] = name, []
    fresh()
    return cutlass_tune.tune(state["a"], state["b"], CANDS, lambda: state["expected"], ("k",))


def entry(state: dict, result: cutlass_tune.TuneResult) -> dict:
    return json.loads(
        (Path(state["cache"]) / "cutlass-gemm" / f"{result.cache_key}.json").read_text()
    )


def test_seeding_times_another_gpus_choice_first_then_its_fastest(gpu, monkeypatch):
    full = tune(gpu, "Fake H100")
    assert (full.source, gpu["timed"]) == ("tuned", [1, 2, 3])
    monkeypatch.setenv("HARNESS_TUNE_SEED", "1")
    one = tune(gpu, "Fake H200")
    assert (one.source, one.options, gpu["timed"], gpu["built"][-1]) == (
        "seeded",
        RunOptions("split-k", 2),
        [2],
        1,
    )
    assert one.cache_key != full.cache_key
    stored = entry(gpu, one)
    seed = stored["record"]["seeded_from"]
    assert (seed["top"], seed["tried"], seed["of"]) == (1, 1, 3)
    assert seed["sources"] == [f"Fake H100 (driver {tune_cache.driver_version()})"]
    assert seed["entries"] == [full.cache_key] and stored["candidates_tried"] == 1
    assert tune_cache.seeded_from(one.cache_key).endswith("top 1: 1 of 3 timed")
    monkeypatch.setenv("HARNESS_TUNE_SEED", "2")
    fresh()
    Path(gpu["cache"], "cutlass-gemm", f"{one.cache_key}.json").unlink()
    two = tune(gpu, "Fake H200")
    assert (two.source, gpu["timed"]) == ("seeded", [2, 1])  # the choice, then the next burst


def test_a_seeded_decision_is_read_only_while_seeding_is_on(gpu, monkeypatch):
    tune(gpu, "Fake H100")
    monkeypatch.setenv("HARNESS_TUNE_SEED", "1")
    seeded = tune(gpu, "Fake H200")
    again = tune(gpu, "Fake H200")
    assert (again.source, gpu["timed"]) == ("cache", [])
    assert tune_cache.seeded_from(again.cache_key)  # a row that read it still says so
    monkeypatch.delenv("HARNESS_TUNE_SEED")
    full = tune(gpu, "Fake H200")
    assert (full.source, gpu["timed"], full.cache_key) == ("tuned", [1, 2, 3], seeded.cache_key)
    stored = entry(gpu, full)
    assert "seeded_from" not in stored["record"] and stored["candidates_tried"] == 3
    assert tune_cache.seeded_from(full.cache_key) == ""


def test_without_another_gpus_entry_seeding_tunes_in_full(gpu, monkeypatch):
    monkeypatch.setenv("HARNESS_TUNE_SEED", "1")
    first = tune(gpu, "Fake H200")
    assert (first.source, gpu["timed"]) == ("tuned", [1, 2, 3])
    assert "seeded_from" not in entry(gpu, first)["record"]


def test_a_seed_as_wide_as_the_list_is_a_full_tune(gpu, monkeypatch):
    tune(gpu, "Fake H100")
    monkeypatch.setenv("HARNESS_TUNE_SEED", "5")
    wide = tune(gpu, "Fake H200")
    assert (wide.source, sorted(gpu["timed"])) == ("tuned", [1, 2, 3])
    assert "seeded_from" not in entry(gpu, wide)["record"]


def test_a_seeded_decision_never_seeds_another(gpu, monkeypatch):
    tune(gpu, "Fake H100")
    monkeypatch.setenv("HARNESS_TUNE_SEED", "1")
    tune(gpu, "Fake H200")
    third = tune(gpu, "Fake B200")
    seed = entry(gpu, third)["record"]["seeded_from"]
    assert (seed["sources"][0].split(" (")[0], len(seed["entries"]), gpu["timed"]) == (
        "Fake H100",
        1,
        [2],
    )


def test_the_same_gpu_on_another_driver_is_seeded(gpu, monkeypatch):
    tune(gpu, "Fake H100")
    monkeypatch.setenv("HARNESS_TUNE_SEED", "1")
    tune_cache.driver_version.cache_clear()
    monkeypatch.setattr(tune_cache, "driver_version", lambda: "999.1")
    newer = tune(gpu, "Fake H100")
    assert (newer.source, gpu["timed"]) == ("seeded", [2])


def test_ranked_puts_the_choice_first_then_burst_order_and_keeps_twins():
    seed = tune_seed.SeedEntry("G", "d", "x", 2, (("a", 3.0), ("b", 1.0), ("c", 2.0)))
    assert tune_seed.ranked(seed, ["a", "b", "c", "b"]) == [2, 1, 3, 0]


def test_a_gpu_name_inside_the_problem_reads_as_the_same():
    key = dict(family="f", toolchain="t", source_hash="s", candidates="c", device="NVIDIA H200")
    h200 = dict(key, problem="(16, 'NVIDIA H200', 'tuned')")
    h100 = dict(key, device="NVIDIA H100", problem="(16, 'NVIDIA H100', 'tuned')")
    assert tune_seed.seed_key(h200) == tune_seed.seed_key(h100)
    assert tune_seed.seed_key(dict(h100, problem="(32, 'NVIDIA H100', 'tuned')")) != (
        tune_seed.seed_key(h200)
    )


@pytest.mark.parametrize(("env", "k"), [("3", 3), ("", 0), ("0", 0), ("top3", 0), ("-1", 0)])
def test_seed_top_reads_a_whole_number_above_zero(monkeypatch, env, k):
    monkeypatch.setenv("HARNESS_TUNE_SEED", env)
    assert tune_cache.seed_top() == k


def test_a_seeded_tune_counts_as_timed_here_for_the_gap_reasons():
    assert _tuned_where({"tune_source": "seeded"}, {}) == ""


def test_a_seeded_decision_is_tuned_again_under_a_larger_k(gpu, monkeypatch):
    tune(gpu, "Fake H100")
    monkeypatch.setenv("HARNESS_TUNE_SEED", "1")
    tune(gpu, "Fake H200")
    monkeypatch.setenv("HARNESS_TUNE_SEED", "2")
    wider = tune(gpu, "Fake H200")
    assert (wider.source, gpu["timed"]) == ("seeded", [2, 1])
    assert entry(gpu, wider)["record"]["seeded_from"]["top"] == 2
    monkeypatch.setenv("HARNESS_TUNE_SEED", "1")  # a smaller k reads the wider decision
    assert (tune(gpu, "Fake H200").source, gpu["timed"]) == ("cache", [])


def test_where_no_seeded_candidate_works_every_one_is_timed(gpu, monkeypatch):
    tune(gpu, "Fake H100")
    monkeypatch.setenv("HARNESS_TUNE_SEED", "1")
    real_prepare = cutlass_tune.prepare_gemm

    def split_k_fails_here(a, b, config, alpha=None, options=None):
        if options == RunOptions("split-k", 2):
            raise ValueError("not on this GPU")
        return real_prepare(a, b, config, alpha=alpha, options=options)

    monkeypatch.setattr(cutlass_tune, "prepare_gemm", split_k_fails_here)
    fallback = tune(gpu, "Fake H200")
    assert (fallback.source, fallback.options, gpu["timed"]) == ("tuned", RunOptions(), [1, 3])
    assert "seeded_from" not in entry(gpu, fallback)["record"]


def test_a_seeded_decode_candidate_brings_its_clustered_twin(gpu, monkeypatch):
    """bf16 at M <= 64: the twin rule (decode_twin.py) reads the 2x1 twin's burst, so a seeded
    unclustered swapped tile is timed beside its twin, and the seed counts it."""
    cands = [
        (CONFIGS["sm90-swapab-dp-128x32"], RunOptions()),
        (CONFIGS["sm90-swapab-dp-128x32-c2x1"], RunOptions()),
        (CONFIGS["sm90-pingpong-128x128"], RunOptions(swizzle=1)),
    ]
    ms = {0: 1.0, 1: 1.05, 2: 3.0}
    monkeypatch.setattr(
        cutlass_tune,
        "prepare_gemm",
        lambda a, b, config, alpha=None, options=None: type(
            "L", (), {"position": cands.index((config, options)), "__call__": lambda s: expected}
        )(),
    )
    timed: list[int] = []
    monkeypatch.setattr(
        cutlass_tune,
        "bench_cold",
        lambda launch, device: timed.append(launch.position) or ms[launch.position],
    )
    a, b = torch.randn(16, 128).bfloat16(), torch.randn(64, 128).bfloat16().t()
    expected = a.float() @ b.float()

    def run(name: str) -> cutlass_tune.TuneResult:
        gpu["name"] = name
        fresh()
        timed.clear()
        return cutlass_tune.tune(a, b, cands, lambda: expected, ("d",))

    run("Fake H100")
    monkeypatch.setenv("HARNESS_TUNE_SEED", "1")
    seeded = run("Fake H200")
    assert (seeded.source, timed) == ("seeded", [0, 1])
    assert entry(gpu, seeded)["record"]["seeded_from"]["tried"] == 2
