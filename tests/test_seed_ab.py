"""scripts/seed_ab.py: the seeded-tuning GPU check's two runs, point by point
(results/h100/README.md, order item 8)."""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
import seed_ab  # noqa: E402

RUN = Path(__file__).resolve().parents[1] / "results" / "h200" / "gemm_llama_lowp-fp8-s111"


def test_seed_ab_pairs_points_and_says_where_the_picks_differ():
    point = dict(m=64, n=4096, k=4096, dtype="fp8_e4m3", layout="nt", device_uuid="GPU-a")
    seeded = pd.DataFrame(
        [
            dict(point, pick="x", tune_source="seeded", seeded_from="H200", latency_ms_median=1.1),
            dict(
                point, m=128, pick="y", tune_source="seeded", seeded_from="", latency_ms_median=2.0
            ),
        ]
    )
    full = pd.DataFrame(
        [
            dict(point, pick="z", tune_source="tuned", seeded_from="", latency_ms_median=1.0),
            dict(
                point, m=128, pick="y", tune_source="tuned", seeded_from="", latency_ms_median=2.0
            ),
        ]
    )
    both = seed_ab.pair(seeded, full).sort_values("m")
    assert both["ratio"].round(6).tolist() == [1.1, 1.0]
    assert both["same_pick"].tolist() == [False, True]


def test_seed_ab_reads_a_committed_run_against_itself(capsys):
    """The same run on both sides: every pick the same, every ratio 1, its tune pass read."""
    assert seed_ab.main([str(RUN), str(RUN)]) == 1  # nothing in it was seeded
    out = capsys.readouterr().out
    assert "tune pass 205.0 s for own-cutlass" in out
    assert "38 points, 0 with another pick; seeded / full geomean 1.0000" in out
    assert "not a comparison of seeding: no row of the seeded run was tuned seeded" in out
