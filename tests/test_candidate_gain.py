"""scripts/candidate_gain.py: what a family of tuning candidates bought, from the tuner's own
timings in provider_config (synthetic rows)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pandas as pd

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "candidate_gain.py"
spec = importlib.util.spec_from_file_location("candidate_gain", SCRIPT)
gain = importlib.util.module_from_spec(spec)
spec.loader.exec_module(gain)


def _row(m: int, timed: dict) -> dict:
    return dict(m=m, n=10240, k=8192, provider_config=json.dumps({"candidates": timed}))


def test_gain_is_the_best_of_all_over_the_best_without_the_family():
    rows = pd.DataFrame(
        [
            # the family wins: 0.050 against the others' best 0.055
            _row(1, {"a-dp-128x16-c4x1:x": 0.050, "a-128x16:stream-k": 0.055, "b:y": 0.060}),
            # an old candidate wins: gain 1.0
            _row(16, {"a-dp-128x16-c2x1:x": 0.070, "a-pingpong-64x16:x": 0.065}),
            _row(32, {"a-pingpong-64x32:x": 0.040}),  # no candidate of the family: left out
            _row(64, {}),  # read from the disk cache, no timings: left out
        ]
    )
    g = gain.gains(rows, r"-dp-128x\d+-c")
    assert list(g["shape"]) == ["1x10240x8192", "16x10240x8192"]
    assert g["gain"].round(6).tolist() == [1.1, 1.0]
    assert list(g["winner"]) == ["a-dp-128x16-c4x1:x", "a-pingpong-64x16:x"]
    lines = gain.summary(g)
    assert lines[0].startswith("2 points:") and "max 1.100, above 1.01 on 1" in lines[0]
    assert "geomean 1.0488" in lines[0]  # sqrt(1.1)
    assert lines[1] == "  largest: 1x10240x8192 1.100, 16x10240x8192 1.000"
    assert "a-dp-128x16-c4x1 1" in lines[2] and "a-pingpong-64x16 1" in lines[2]
    assert gain.summary(gain.gains(rows.iloc[2:], "-dp-")) == [
        "no row timed candidates of the family beside others"
    ]
