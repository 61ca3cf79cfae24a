"""attention_tune.tune's capped re-time (session 104: the bursts ranked a persistent Gluon tile
ahead at 16k tokens that the sweep, at the power cap, timed 6.5% behind). Timers are faked: the
burst (bench_cold) and the capped (capped_retime.bench_capped) readings are given per
candidate, so what is asserted is the decision, not a time."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from harness_kernels import capped_retime
from harness_kernels.triton import attention_tune

CANDS = [{"T": 1}, {"T": 2}, {"T": 3}]
# burst: T1 wins, T2 within BAND of it, T3 far behind; at the cap T2 leads by more than NOISE
BURST = {1: 1.00, 2: 1.02, 3: 2.00}
CAPPED = {1: 1.10, 2: 1.03, 3: 9.99}


def _label(cfg: dict) -> str:
    return f"T{cfg['T']}"


def _build(cfg: dict):
    def run() -> None:
        return None

    run.cfg = cfg  # type: ignore[attr-defined]
    return run


@pytest.fixture(autouse=True)
def fake_gpu(tmp_path: Path, monkeypatch) -> list[int]:
    """Fake timers (each capped reading is logged) and a fresh tune cache."""
    monkeypatch.setenv("HARNESS_TUNE_CACHE", str(tmp_path / "tune"))
    attention_tune._TUNE_CACHE.clear()
    monkeypatch.setattr(torch.cuda, "synchronize", lambda: None)
    monkeypatch.setattr(attention_tune, "bench_cold", lambda fn, device: BURST[fn.cfg["T"]])
    capped_reads: list[int] = []

    def bench_capped(fn, device) -> float:
        capped_reads.append(fn.cfg["T"])
        return CAPPED[fn.cfg["T"]]

    monkeypatch.setattr(capped_retime, "bench_capped", bench_capped)
    yield capped_reads
    attention_tune._TUNE_CACHE.clear()


def _tune(key: tuple, capped: bool, stored=None):
    return attention_tune.tune(key, CANDS, _build, True, None, stored, label=_label, capped=capped)


def test_the_cap_reorders_close_rivals_and_the_disk_entry_keeps_it(fake_gpu):
    stored = attention_tune.stored_key(
        ("prefill", 16384), CANDS, "NVIDIA H100 80GB HBM3", attention_tune.PREFILL_SOURCES
    )
    cfg, info = _tune(("prefill", 16384), True, stored)
    assert cfg == {"T": 2}
    assert info["tune_burst_pick"] == "T1"
    assert info["tune_capped_ms"] == {"T1": 1.1, "T2": 1.03}
    assert info["tune_ms"] == BURST[2]  # the chosen candidate's burst time
    assert sorted(fake_gpu) == [1, 1, 2, 2]  # the two rivals, forward then back; not T3
    attention_tune._TUNE_CACHE.clear()  # as a fresh process: the disk decides, untimed
    again, cached = _tune(("prefill", 16384), True, stored)
    assert again == {"T": 2} and cached["tune_source"] == "cache"
    assert cached["tune_capped_ms"] == info["tune_capped_ms"] and len(fake_gpu) == 4


def test_without_capped_the_burst_winner_stands(fake_gpu):
    cfg, info = _tune(("decode", 4096), False)
    assert cfg == {"T": 1} and "tune_capped_ms" not in info and fake_gpu == []


def test_a_short_winner_is_not_retimed(fake_gpu, monkeypatch):
    monkeypatch.setattr(attention_tune, "bench_cold", lambda fn, device: BURST[fn.cfg["T"]] / 100)
    cfg, info = _tune(("prefill", 256), True)
    assert cfg == {"T": 1} and "tune_capped_ms" not in info and fake_gpu == []


def test_a_broken_retime_keeps_the_burst_winner_and_says_why(fake_gpu, monkeypatch):
    def broken(fn, device) -> float:
        raise RuntimeError("no events on this device")

    monkeypatch.setattr(capped_retime, "bench_capped", broken)
    cfg, info = _tune(("prefill", 8192), True)
    assert cfg == {"T": 1}
    assert info["tune_capped_failed"] == "RuntimeError: no events on this device"
