"""kernels/cutlass/decode_twin.py: at decode, the 2x1-clustered twin runs where the tuner's
bursts put it within their noise of an unclustered swapped 128-wide pick."""

from __future__ import annotations

from types import SimpleNamespace

import torch
from harness_kernels.cutlass import decode_twin
from harness_kernels.cutlass.gemm import CONFIGS, RunOptions

from harness.device import DeviceInfo
from harness.problems import GemmProblem
from harness.providers import load_all

H200 = DeviceInfo(
    "cuda", 0, "nvidia", "NVIDIA H200", None, "sm_90", (9, 0), 132, 50 << 20, 141 << 30, None, None
)

HEUR, DP = RunOptions(), RunOptions("data-parallel")
PICK = (CONFIGS["sm90-swapab-128x16"], HEUR)
TWIN = (CONFIGS["sm90-swapab-dp-128x16-c2x1"], HEUR)
CANDS = [PICK, (CONFIGS["sm90-swapab-128x16"], DP), TWIN]


def _ms(pick: float, twin: float) -> dict[str, float]:
    return {
        f"sm90-swapab-128x16:{HEUR}": pick,
        f"sm90-swapab-128x16:{DP}": pick * 1.006,
        f"sm90-swapab-dp-128x16-c2x1:{HEUR}": twin,
    }


def test_the_twin_of_each_unclustered_swapped_weight_tile():
    assert decode_twin.twin_name("sm90-swapab-128x16") == "sm90-swapab-dp-128x16-c2x1"
    assert decode_twin.twin_name("sm90-swapab-dp-128x32") == "sm90-swapab-dp-128x32-c2x1"
    assert decode_twin.twin_name("sm90-swapab-128x64") == "sm90-swapab-dp-128x64-c2x1"
    # every twin the rule can name is a config the candidate lists time
    for w in (16, 32, 64):
        assert decode_twin.twin_name(f"sm90-swapab-128x{w}") in CONFIGS
    for other in (
        "sm90-swapab-dp-128x16-c2x1",  # already clustered
        "sm90-swapab-dp-128x16-c4x1",
        "sm90-swapab-128x64-c1x2",
        "sm90-swapab-pingpong-64x16",  # 64-row tiles
        "sm90-coop-128x256",
    ):
        assert decode_twin.twin_name(other) is None


def test_the_twin_runs_within_the_bursts_noise_and_says_what_it_replaced():
    # session 61's H200 tune pass at 16x28672x4096: twin 0.1% behind the pick
    moved = decode_twin.prefer_twin(16, "bf16", PICK, _ms(0.0592, 0.05926), {}, CANDS)
    assert moved is not None
    twin, why = moved
    assert twin == TWIN
    assert why == dict(
        burst_pick=f"sm90-swapab-128x16:{HEUR}",
        burst_pick_ms=0.0592,
        twin=f"sm90-swapab-dp-128x16-c2x1:{HEUR}",
        twin_ms=0.05926,
        band=decode_twin.BAND,
    )


def test_the_rule_leaves_the_pick_where_it_does_not_apply():
    ms = _ms(0.0592, 0.0595)
    assert decode_twin.prefer_twin(16, "bf16", PICK, _ms(0.0592, 0.0610), {}, CANDS) is None
    assert decode_twin.prefer_twin(128, "bf16", PICK, ms, {}, CANDS) is None  # not decode
    assert decode_twin.prefer_twin(16, "fp8_e4m3", PICK, ms, {}, CANDS) is None  # not measured
    assert decode_twin.prefer_twin(16, "tf32", PICK, ms, {}, CANDS) is None
    # a capped re-time decided: sustained timing, as the sweep's; the rule stays out
    assert decode_twin.prefer_twin(16, "bf16", PICK, ms, {"x": 0.1}, CANDS) is None
    # the twin not among the candidates, or not timed (rejected, or unbuildable)
    assert decode_twin.prefer_twin(16, "bf16", PICK, ms, {}, CANDS[:2]) is None
    untimed = {k: v for k, v in ms.items() if "c2x1" not in k}
    assert decode_twin.prefer_twin(16, "bf16", PICK, untimed, {}, CANDS) is None
    # the pick is the twin already, or has none
    assert decode_twin.prefer_twin(16, "bf16", TWIN, ms, {}, CANDS) is None
    pingpong = (CONFIGS["sm90-swapab-pingpong-64x16"], HEUR)
    assert decode_twin.prefer_twin(16, "bf16", pingpong, ms, {}, CANDS) is None


def test_the_tuners_pick_without_the_rule_is_a_provider_of_its_own():
    """own-cutlass-burst: the same tune decisions without the rule, the A/B that judges it."""
    registry = load_all()
    assert {"own-cutlass", "own-cutlass-burst"} <= set(registry.names("gemm"))
    assert registry.get("gemm", "own-cutlass-burst").family == "own"


def _fake_tuner(monkeypatch, m: int):
    """own_cutlass's tuner and launch faked at M x 28672 x 4096: the tuner's pick is the
    unclustered swapped 128x16, its twin 0.3% behind in the bursts; `prepared` lists what ran."""
    from harness_kernels.cutlass import gemm, gemm_tune

    timings = _ms(0.0590, 0.0592)
    result = gemm_tune.TuneResult(PICK[0], PICK[1], timings, {}, {}, "cache", "")
    monkeypatch.setattr(gemm_tune, "tune", lambda *a, **k: result)
    prepared = []

    def prepare(a, b, config, alpha=None, options=None):
        prepared.append(f"{config.name}:{options}")
        return SimpleNamespace(config={"variant": config.name})

    monkeypatch.setattr(gemm, "prepare_gemm", prepare)
    problem = GemmProblem(m=m, n=28672, k=4096, dtype="bf16", layout="nt")
    inputs = {"a": torch.empty(m, 4096), "b": torch.empty(28672, 4096).t()}
    return result, prepared, problem, inputs


def test_own_cutlass_runs_the_twin_and_own_cutlass_burst_the_pick(monkeypatch):
    registry = load_all()
    result, prepared, problem, inputs = _fake_tuner(monkeypatch, 16)
    rule = registry.get("gemm", "own-cutlass").prepare(problem, inputs, H200).config
    burst = registry.get("gemm", "own-cutlass-burst").prepare(problem, inputs, H200).config
    assert prepared == [f"sm90-swapab-dp-128x16-c2x1:{HEUR}", f"sm90-swapab-128x16:{HEUR}"]
    assert rule["variant"] == "sm90-swapab-dp-128x16-c2x1" and rule["tuned_ms"] == 0.0592
    assert rule["twin_rule"]["burst_pick"] == f"sm90-swapab-128x16:{HEUR}"
    assert burst["variant"] == "sm90-swapab-128x16" and burst["tuned_ms"] == 0.0590
    assert "twin_rule" not in burst
    assert rule["candidates"] == burst["candidates"]  # one tune decision, shared
    assert (result.config, result.options) == PICK  # the tuner's result is left as it was


def test_past_decode_own_cutlass_runs_the_tuners_pick(monkeypatch):
    _, prepared, problem, inputs = _fake_tuner(monkeypatch, 128)
    config = load_all().get("gemm", "own-cutlass").prepare(problem, inputs, H200).config
    assert prepared == [f"sm90-swapab-128x16:{HEUR}"] and "twin_rule" not in config
