"""scripts/twin_ab_table.py: per point over processes, each provider's median, range and slow
rows, the points where the twin rule ran the twin, and per provider the slow count and geomean."""

from __future__ import annotations

import json

import pandas as pd
from script_module import load_script

ab = load_script("twin_ab_table")

TWIN = json.dumps({"twin_rule": {"burst_pick": "sm90-swapab-128x16:heuristic/sw1"}})


def _row(proc: int, provider: str, m: int, us: float, cfg: str = "{}") -> dict:
    return dict(
        run_id=f"proc-{proc}",
        provider=provider,
        status="ok",
        m=m,
        n=28672,
        k=4096,
        latency_ms_median=us / 1e3,
        provider_config=cfg,
    )


def test_slow_rows_ranges_and_the_twin_mark_per_point():
    rows = []
    for proc, (cub, burst) in enumerate([(60.0, 59.0), (60.5, 65.0), (64.0, 59.2)], start=1):
        rows += [
            _row(proc, "cublas", 16, cub),
            _row(proc, "own-cutlass", 16, 59.5, TWIN),
            _row(proc, "own-cutlass-burst", 16, burst),
            _row(proc, "cublas", 64, 63.0),
            _row(proc, "own-cutlass", 64, 62.0),
            _row(proc, "own-cutlass-burst", 64, 62.0),
        ]
    rows.append({**_row(4, "own-cutlass", 16, 1.0), "status": "error"})  # not ok: left out
    lines = ab.table(pd.DataFrame(rows))
    assert lines[1] == (
        "16x28672x4096 | 60.5 (60.0-64.0) 1/3 | 59.5 (59.5-59.5) 0/3 | 59.2 (59.0-65.0) 1/3 | twin"
    )
    assert lines[2].startswith("64x28672x4096 | 63.0 (63.0-63.0) 0/3") and lines[2].endswith(" |")
    summary = {line.split(":")[0]: line for line in lines[4:]}
    assert summary["cublas"].startswith("cublas: 1 of 6 rows slow")
    assert "own-cutlass-burst: 1 of 6 rows slow" in summary["own-cutlass-burst"]
    # geomean of cuBLAS's median over own-cutlass's: sqrt(60.5/59.5 * 63/62)
    assert "geomean 1.016 (2 points)" in summary["own-cutlass"]
