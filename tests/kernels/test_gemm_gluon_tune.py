"""The Gluon GEMM's tuner (kernels/triton/gemm_gluon_tune.py) on the CPU: bursts for every tile,
then the close rivals of a long burst winner re-timed at the power cap, the re-time's decision
kept on disk. Launches and both timers are faked (nothing is timed)."""

from __future__ import annotations

import pytest
import torch
from harness_kernels import capped_retime, tune_cache
from harness_kernels.triton import attention_tune, gemm_gluon_tune

# session 60's H100 burst times at 2048x57344x8192 (ms), and a made-up cap that reorders them
BURST = {"128x320": 2.723, "128x256": 2.834, "128x192pp": 2.847, "128x160": 2.861, "64x128": 4.0}
CANDS = [{"name": name} for name in BURST]


def _name(cfg: dict) -> str:
    return cfg["name"]


@pytest.fixture(autouse=True)
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("HARNESS_TUNE_CACHE", str(tmp_path / "tune"))
    monkeypatch.setattr(torch.cuda, "synchronize", lambda: None)
    attention_tune._TUNE_CACHE.clear()
    gemm_gluon_tune.clear_cache()
    yield tmp_path / "tune"
    attention_tune._TUNE_CACHE.clear()
    gemm_gluon_tune.clear_cache()


def _fake(monkeypatch, burst: dict[str, float], cap: dict[str, float]):
    """Fake launches (each knows its tile) and timers; returns the lists of tiles each timed."""
    timed: dict[str, list[str]] = {"burst": [], "cap": []}
    output = torch.zeros(2, 2)

    def build(cfg: dict):
        def launch() -> torch.Tensor:
            return output

        launch.tile = cfg["name"]  # type: ignore[attr-defined]
        return launch

    def bench_cold(fn, device) -> float:
        timed["burst"].append(fn.tile)
        return burst[fn.tile]

    def bench_capped(fn, device) -> float:
        timed["cap"].append(fn.tile)
        return cap[fn.tile]

    monkeypatch.setattr(attention_tune, "bench_cold", bench_cold)
    monkeypatch.setattr(capped_retime, "bench_capped", bench_capped)
    return build, output, timed


def _stored(family: str) -> tune_cache.TuneKey | None:
    return tune_cache.make_key(
        "triton-gemm-gluon" if family == "burst" else family,
        "Fake H100",
        ("gemm_gluon", 2048, 57344, 8192),
        CANDS,
        toolchain="triton 0",
        sources=("triton/gemm_gluon*.py",),
    )


def _tune(build, output):
    return gemm_gluon_tune.tune(("k",), CANDS, build, True, output, _stored, _name)


def test_the_cap_overturns_the_burst_winner_and_the_record_says_so(monkeypatch):
    cap = {"128x320": 2.86, "128x256": 2.80, "128x192pp": 2.74, "128x160": 2.83}
    build, output, timed = _fake(monkeypatch, BURST, cap)
    cfg, info = _tune(build, output)
    assert cfg["name"] == "128x192pp"
    # the three within CAPPED_BAND (5%) of the winner, forward then backward; 128x160 is 5.1% behind
    forward = ["128x320", "128x256", "128x192pp"]
    assert timed["cap"] == forward + forward[::-1]
    assert info["tune_ms"] == 2.74 and info["tune_burst_pick"] == "128x320"
    assert info["tune_capped_source"] == "timed" and set(info["tune_capped_ms"]) == set(forward)
    assert info["tune_timings_ms"]["128x320"] == 2.723  # every burst time is still there
    # provider_config's tune_key names both disk entries, as tune_cache.tuned_on reads them
    burst, capped = info["tune_key"].split(",")
    assert (_stored("burst").digest, _stored(gemm_gluon_tune.CAPPED_FAMILY).digest) == (
        burst,
        capped,
    )


def test_a_second_process_reads_both_decisions_and_times_nothing(monkeypatch, cache):
    cap = {"128x320": 2.86, "128x256": 2.80, "128x192pp": 2.74, "128x160": 2.83}
    build, output, timed = _fake(monkeypatch, BURST, cap)
    first, _ = _tune(build, output)
    assert (cache / gemm_gluon_tune.CAPPED_FAMILY).is_dir()
    attention_tune._TUNE_CACHE.clear()  # as a fresh process
    gemm_gluon_tune.clear_cache()
    before = {k: list(v) for k, v in timed.items()}
    again, info = _tune(build, output)
    assert again == first and timed == before
    assert info["tune_capped_source"] == "cache" and info["tune_ms"] == 2.74


def test_a_lead_inside_the_cap_s_noise_keeps_the_burst_winner(monkeypatch):
    cap = {"128x320": 2.80, "128x256": 2.79, "128x192pp": 2.85, "128x160": 2.90}  # 0.4% lead
    build, output, _ = _fake(monkeypatch, BURST, cap)
    cfg, info = _tune(build, output)
    assert cfg["name"] == "128x320" and info["tune_ms"] == 2.80


def test_a_short_winner_is_not_re_timed(monkeypatch):
    burst = {name: ms / 100 for name, ms in BURST.items()}  # 27 us: never meets the cap
    build, output, timed = _fake(monkeypatch, burst, {})
    cfg, info = _tune(build, output)
    assert cfg["name"] == "128x320" and timed["cap"] == []
    assert "tune_capped_ms" not in info


def test_a_failed_re_time_leaves_the_burst_winner_for_the_whole_process(monkeypatch):
    build, output, timed = _fake(monkeypatch, BURST, {})  # bench_capped raises KeyError
    cfg, info = _tune(build, output)
    assert cfg["name"] == "128x320" and info["tune_capped_failed"].startswith("KeyError")
    tries = len(timed["cap"])
    monkeypatch.setattr(capped_retime, "bench_capped", lambda fn, device: 1.0)
    again, _ = _tune(build, output)  # not re-timed: one process launches one tile per point
    assert again["name"] == "128x320" and len(timed["cap"]) == tries


def test_a_burst_winner_that_reads_nan_at_the_cap_stays_and_says_so(monkeypatch):
    cap = {"128x320": float("nan"), "128x256": 2.80, "128x192pp": 2.74}
    build, output, _ = _fake(monkeypatch, BURST, cap)
    cfg, info = _tune(build, output)
    assert cfg["name"] == "128x320" and "read nan at the cap" in info["tune_capped_failed"]


def test_a_stored_re_time_of_other_contenders_is_timed_again(monkeypatch):
    """The bursts were timed again since (their entry gone): a stored re-time of another set
    of contenders does not decide."""
    cap = {"128x320": 2.86, "128x256": 2.80, "128x192pp": 2.74, "128x160": 2.70}
    build, output, timed = _fake(monkeypatch, BURST, cap)
    _tune(build, output)
    attention_tune._TUNE_CACHE.clear()
    gemm_gluon_tune.clear_cache()
    _stored("burst").path.unlink()
    burst = {**BURST, "128x160": 2.75}  # now within the band
    build, output, timed = _fake(monkeypatch, burst, cap)
    cfg, info = _tune(build, output)
    assert cfg["name"] == "128x160" and info["tune_capped_source"] == "timed"
    assert timed["cap"].count("128x160") == 2


def test_untuned_takes_the_first_candidate_untimed(monkeypatch):
    build, output, timed = _fake(monkeypatch, BURST, {})
    cfg, info = gemm_gluon_tune.tune(("k",), CANDS, build, False, output, _stored, _name)
    assert cfg == CANDS[0] and info["tuned"] is False and timed == {"burst": [], "cap": []}


def test_split_twins_fill_one_wave_with_the_tile_cublas_runs_at_the_405b_qkv():
    """Llama-3.1-405B's fused QKV (N 2304, K 16384; own Triton 0.76-0.83x cuBLAS at M 256):
    the Gluon GEMM offers 128x144 split 4 ways (128 units on 132 SMs, cuBLAS's decomposition)
    and 64x144 ping-pong split 2 ways; every twin's units fit one wave, its K steps divide
    evenly, C leaves through the second launch (no staging), and it is named with its split."""
    from harness_kernels.triton.gemm_gluon import (
        MIN_SPLIT_STEPS,
        config_name,
        gluon_gemm_configs,
    )

    m, n, k = 256, 2304, 16384
    cands = gluon_gemm_configs(m, n, k, 2, 2, 132)
    twins = [c for c in cands if c.get("SPLIT_K", 1) > 1]
    assert [config_name(c) for c in twins] == ["128x144s6k4", "64x144s6ppk2"]
    for c in twins:
        tiles = -(-m // c["BLOCK_M"]) * -(-n // c["BLOCK_N"])
        steps = k // c["BK"]
        assert tiles * c["SPLIT_K"] <= 132 and steps % c["SPLIT_K"] == 0
        assert steps // c["SPLIT_K"] >= MIN_SPLIT_STEPS and not c["C_SMEM"]
    # many tiles already: no twin (large M), and none for a probe's full list
    assert not any(c.get("SPLIT_K", 1) > 1 for c in gluon_gemm_configs(1024, 8192, 8192, 2, 2, 132))
    assert not any(
        c.get("SPLIT_K", 1) > 1 for c in gluon_gemm_configs(m, n, k, 2, 2, 132, per_schedule=None)
    )


def test_in_place_twins_only_for_few_parts_and_otherwise_equal():
    """A split twin's in-place twin differs only in SUM_IN_PLACE (the same tile, stages and
    split); none past IN_PLACE_MAX_SPLIT parts (the summing unit reads every part of its slice
    through one SM) or IN_PLACE_MAX_ACC accumulators per thread (it would spill). Not offered
    to the tuner (OFFER_IN_PLACE: never faster than the sum apart, session 83)."""
    from harness_kernels.triton.gemm_gluon import (
        IN_PLACE_MAX_ACC,
        IN_PLACE_MAX_SPLIT,
        OFFER_IN_PLACE,
        config_name,
        gluon_gemm_configs,
        in_place_twins,
    )

    assert not OFFER_IN_PLACE
    for m, n, k in ((64, 2304, 16384), (256, 2304, 16384), (256, 10240, 8192)):
        cands = gluon_gemm_configs(m, n, k, 2, 2, 132)
        assert not any(c.get("SUM_IN_PLACE") for c in cands)
        twins = [c for c in cands if c.get("SPLIT_K", 1) > 1]
        placed = in_place_twins(twins)
        for c in placed:
            assert config_name(c) == config_name({**c, "SUM_IN_PLACE": False}) + "i"
            assert {**c, "SUM_IN_PLACE": False} in [{**t, "SUM_IN_PLACE": False} for t in twins]
        kept = [
            t
            for t in twins
            if t["SPLIT_K"] <= IN_PLACE_MAX_SPLIT
            and t["SLICE_M"] * t["BLOCK_N"] // 128 <= IN_PLACE_MAX_ACC
        ]
        assert len(placed) == len(kept)
    names = {
        config_name(c)
        for c in in_place_twins(
            [c for c in gluon_gemm_configs(256, 2304, 16384, 2, 2, 132) if c.get("SPLIT_K", 1) > 1]
        )
    }
    assert names == {"128x144s6k4i", "64x144s6ppk2i"}
    # 256x160 (160 accumulators per consumer thread) split 2: the sum would spill
    wide = [c for c in gluon_gemm_configs(256, 10240, 8192, 2, 2, 132) if c.get("SPLIT_K", 1) > 1]
    assert "256x160s4k2" in {config_name(c) for c in wide}
    assert "256x160s4k2i" not in {config_name(c) for c in in_place_twins(wide)}
