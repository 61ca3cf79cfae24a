"""Collectives in the report: busbw vs message size per (device, world size), ok rows only."""

import pandas as pd

from harness.report.collectives import collective_figures, collective_rows


def _row(collective, size, busbw, status="ok", world=2):
    return {
        "op": "collective",
        "provider": "nccl",
        "problem": f"{collective} {size} x{world}",
        "timer": "cuda-events",
        "l2": "hot",
        "fill": "randn",
        "seed": 0,
        "status": status,
        "latency_ms_median": 0.1 if status == "ok" else None,
        "collective": collective,
        "message_bytes": size,
        "world_size": world,
        "busbw_gbps": busbw,
        "device_name": "NVIDIA H200",
        "device_type": "cuda",
        "timestamp": "2026-11-21",
    }


def test_one_figure_per_device_and_world_size(tmp_path):
    rows = pd.DataFrame(
        [
            _row(c, s, s / 1e6)
            for c in ("all_reduce", "all_gather")
            for s in (1024, 1 << 20, 1 << 30)
        ]
        + [_row("all_reduce", 4096, 9e9, status="wrong")]
        + [_row("all_reduce", 1024, 1.0, world=4)]
    )
    assert len(collective_rows(rows)) == 7  # the wrong row is never a speed
    figs = collective_figures(rows, tmp_path)
    assert [f.stem for f in figs] == [
        "collectives-nvidia-h200-2ranks",
        "collectives-nvidia-h200-4ranks",
    ]
    assert all(f.png.stat().st_size > 0 and f.svg.exists() for f in figs)


def test_no_collectives_no_figure(tmp_path):
    rows = pd.DataFrame([{"op": "gemm", "status": "ok", "latency_ms_median": 1.0}])
    assert collective_figures(rows, tmp_path) == []
