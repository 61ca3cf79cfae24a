"""Collectives in the report: busbw vs message size per (device, world size), ok rows only."""

import pandas as pd

from harness.report.collectives import collective_figures, collective_rows


def _row(collective, size, busbw, status="ok", world=2, timer="cuda-events"):
    return {
        "op": "collective",
        "provider": "nccl",
        "problem": f"{collective} {size} x{world}",
        "timer": timer,
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


def test_graph_replayed_rows_are_a_line_of_their_own(tmp_path):
    """Eager and graph-replayed rows of one collective are two lines (dashed: graph), never
    one line zigzagging between the two timers; the caption says what the dashed line is."""
    rows = pd.DataFrame(
        [_row("all_reduce", s, s / 1e6) for s in (1024, 1 << 20)]
        + [_row("all_reduce", s, s / 1e5, timer="cuda-graph") for s in (1024, 1 << 20)]
    )
    (fig,) = collective_figures(rows, tmp_path)
    assert "Dashed: the calls captured back to back in one CUDA graph" in fig.caption
    legend = fig.svg.read_text()  # text stays text in the SVG (svg.fonttype none)
    assert "all_reduce (nccl)" in legend and "all_reduce (nccl, graph replay)" in legend
    (eager,) = collective_figures(rows[rows.timer == "cuda-events"], tmp_path / "eager")
    assert "Dashed" not in eager.caption
