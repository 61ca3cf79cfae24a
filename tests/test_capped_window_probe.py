"""scripts/capped_window_probe.py without a GPU: its shape argument, rankings and report."""

from __future__ import annotations

import pytest
from harness_kernels.triton.gemm_configs import GemmConfig
from script_module import load_script

probe = load_script("capped_window_probe")


def test_shapes_are_m_by_n_by_k():
    assert probe.parse_shape("8192x10240x8192") == (8192, 10240, 8192)
    for bad in ("8192x10240", "0x1x1", "1x2x3x4", "ax1x1"):
        with pytest.raises(SystemExit):
            probe.parse_shape(bad)


def test_pairwise_agreement_counts_orders_as_the_reference_has_them():
    sweep = {"a": 1.0, "b": 2.0, "c": 3.0}
    assert probe.pair_agreement(sweep, sweep) == (3, 3)
    assert probe.pair_agreement({"a": 2.5, "b": 2.0, "c": 3.0}, sweep) == (2, 3)
    assert probe.pair_agreement({"a": 3.0, "b": 2.0, "c": 1.0}, sweep) == (0, 3)
    assert probe.ranking({"a": 2.5, "b": 2.0, "c": 3.0}) == ["b", "a", "c"]


def test_tl_names_show_tile_stages_and_options():
    cfg = GemmConfig(128, 256, 64, 8, 4, split_k=2, stream_k=True)
    assert probe.tl_name(cfg) == "tl 128x256x64 s4 w8 k2 stream_k"


def test_report_ranks_own_contenders_against_the_sweep():
    own = ["tl x", "gluon y"]
    mean = {(c, t): 1.0 for c in [*own, probe.VENDOR] for t in probe.METHODS}
    mean["tl x", "burst"] = 0.5  # the burst alone puts tl x first
    mean["gluon y", "sweep"] = 0.9
    clocks = dict.fromkeys([*own, probe.VENDOR], 1500.0)
    text = "\n".join(probe.report("1x2x3", own, mean, clocks, 2))
    assert "burst        OTHER winner pairs 0/1: tl x < gluon y" in text
    assert "sweep        same winner  pairs 1/1: gluon y < tl x" in text


def test_rounds_alternate_order_and_interleave_methods(monkeypatch):
    import argparse
    import types

    import torch

    calls = []
    info = types.SimpleNamespace(
        torch_device=torch.device("cpu"), flush_bytes=None, vendor="cpu", index=0
    )
    monkeypatch.setattr(probe, "get_device", lambda spec: info)
    fns = {"tl x": lambda: "tl x", "gluon y": lambda: "gluon y", probe.VENDOR: lambda: "cuBLAS"}
    monkeypatch.setattr(probe, "contenders", lambda *a: (fns, ["tl x", "gluon y"]))
    monkeypatch.setattr(probe, "L2Flusher", lambda *a: None)
    monkeypatch.setattr(probe, "Telemetry", lambda *a: None)
    fake = lambda method, ms: lambda fn, *a: calls.append((fn(), method)) or ms
    monkeypatch.setattr(probe, "bench_cold", fake("cold", 1.0))
    monkeypatch.setattr(probe, "bench_capped", fake("capped", 2.0))
    monkeypatch.setattr(
        probe, "sweep_time", lambda fn, *a: (calls.append((fn(), "sweep")) or 3.0, 1500.0)
    )
    args = argparse.Namespace(max_tl=4, rounds=2, long_warmup_ms=600, long_rep_ms=300)
    rows: list = []
    lines = probe.probe(1, 2, 3, args, rows)
    assert [c for c, _ in calls[::4]] == ["tl x", "gluon y", "cuBLAS", "cuBLAS", "gluon y", "tl x"]
    assert [m for _, m in calls[:4]] == ["cold", "capped", "cold", "sweep"]
    assert len(rows) == 24 and rows[-1] == ["1x2x3", "tl x", "sweep", 2, 3.0, 1500.0]
    assert "1500" in lines[2]
