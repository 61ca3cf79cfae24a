"""scripts/split_by_gain.py: the fastest split-by-length candidate over the fastest
split-by-longest one, per ragged decode decision of a tune cache."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from script_module import load_script

gain = load_script("split_by_gain")


def _entry(root: Path, name: str, problem: str, timings: dict) -> None:
    folder = root / "tune" / "triton-attention"
    folder.mkdir(parents=True, exist_ok=True)
    record = {"key": {"problem": problem}, "record": {"tune_timings_ms": timings}}
    (folder / f"{name}.json").write_text(json.dumps(record))


def test_ratios_of_ragged_decisions_timed_both_ways(tmp_path):
    ragged = "('attn_decode', 16, 32, 8, 1, 128, torch.bfloat16, True, 'full', 16, 4096, None, 'H', 'fill6/8', 'joint')"
    _entry(
        tmp_path,
        "a",
        ragged,
        {"m16n64w4s3x1": 0.10, "m16n64w4s3x4": 0.09, "m16n64w4s3x4-longest": 0.06},
    )
    full = ragged.replace(", 'fill6/8'", "")  # a full batch: no longest candidate, no ratio
    _entry(tmp_path, "b", full, {"m16n64w4s3x1": 0.10})
    merge = ragged.replace("'joint'", "'reduce'")  # the merge's decision: not a split choice
    _entry(tmp_path, "c", merge, {"m16n64w4s3x4-longest-fused": 0.05})
    rows = gain.decisions(tmp_path)
    assert len(rows) == 1
    ratio, pair, best_length, best_longest, _ = rows[0]
    assert ratio == pytest.approx(0.09 / 0.06) and pair == pytest.approx(0.09 / 0.06)
    assert (best_length, best_longest) == ("m16n64w4s3x4", "m16n64w4s3x4-longest")
