"""scripts/merge_gain.py: the reduction kernel's time over each other split merge's, per
'reduce' decision of a decode tune cache."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from script_module import load_script

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"
sys.path.insert(0, str(SCRIPTS))  # merge_gain imports split_by_gain's cache reader
gain = load_script("merge_gain")

EQUAL = "('attn_decode', 16, 32, 4, 8, 128, torch.bfloat16, True, 'full', 256, 4096, None, 'H', 'gluon', 'reduce')"
RAGGED = EQUAL.replace("'gluon'", "'fill6/8', 'gluon'")


def _entry(root: Path, name: str, problem: str, timings: dict) -> None:
    folder = root / "tune" / "triton-attention"
    folder.mkdir(parents=True, exist_ok=True)
    record = {"key": {"problem": problem}, "record": {"tune_timings_ms": timings}}
    (folder / f"{name}.json").write_text(json.dumps(record))


def test_margins_per_decision_and_by_raggedness(tmp_path):
    _entry(tmp_path, "a", EQUAL, {"g-m64-kernel": 0.108, "g-m64-fused": 0.100, "g-m64-pdl": 0.120})
    # off sm_90: no pdl
    _entry(tmp_path, "b", RAGGED, {"g-m64-kernel": 0.090, "g-m64-fused": 0.100})
    _entry(tmp_path, "c", EQUAL.replace("'reduce'", "'joint'"), {"g-m64": 0.1})  # not a merge
    _entry(tmp_path, "d", RAGGED, {"g-m64-fused": 0.1})  # the caller's merge: nothing to compare
    rows = gain.decisions(tmp_path)
    assert len(rows) == 2
    equal, ragged = sorted(rows, key=lambda r: r["ragged"])
    assert equal["timings"] == {"kernel": 0.108, "fused": 0.100, "pdl": 0.120}
    assert (equal["chosen"], equal["config"], equal["rung"]) == ("fused", "g-m64", "full")
    assert ragged["ragged"] and "pdl" not in ragged["timings"] and ragged["chosen"] == "kernel"
    lines = gain.summary(rows)
    assert lines[0].startswith("equal-length, 1 decisions:") and lines[1].startswith("ragged, 1")
    assert "pdl" not in lines[1]


def test_margins_from_rows_provider_config():
    """The same margins from a run's rows (provider_config.reduce_timings_ms, session 72 on)."""
    import pandas as pd

    from harness.report.decode_serving import merge_margins, own_merge_timings

    cfgs = [
        {"reduce": "fused", "reduce_timings_ms": {"kernel": 0.11, "fused": 0.10, "pdl": 0.12}},
        {"reduce": "kernel", "reduce_timings_ms": {"kernel": 0.10, "fused": 0.11, "pdl": 0.105}},
        {"reduce": None},  # a whole-sequence point: no merge
        {"reduce": "fused", "reduce_timings_ms": None},  # the caller's merge
    ]
    rows = pd.DataFrame(
        {
            "provider": ["own-triton"] * 4 + ["flashinfer"],
            "status": ["ok"] * 5,
            "provider_config": [json.dumps(c) for c in cfgs] + [json.dumps(cfgs[0])],
        }
    )
    timings = own_merge_timings(rows, "own-triton")
    assert len(timings) == 2
    table = merge_margins(timings).set_index("merge")
    assert table.loc["fused", "decisions"] == 2 and table.loc["fused", "won"] == 1
    assert table.loc["fused", "max"] == pytest.approx(1.1)
    assert table.loc["pdl", "won"] == 0 and table.loc["pdl", "min"] == pytest.approx(
        0.917, abs=1e-3
    )
    assert merge_margins([{"fused": 0.1}]).empty  # no reduction kernel time: nothing to set against


def test_margins_by_split_count():
    """The margins per split count, from rows: each count's decisions alone, and none for the
    rows without a count or without timings."""
    import pandas as pd

    from harness.report.decode_serving import merge_margins_by_splits

    cfgs = [
        {"num_splits": 2, "reduce_timings_ms": {"kernel": 0.11, "fused": 0.10}},
        {"num_splits": 2, "reduce_timings_ms": {"kernel": 0.10, "fused": 0.10}},
        {"num_splits": 4, "reduce_timings_ms": {"kernel": 0.10, "fused": 0.125, "pdl": 0.1}},
        {"num_splits": 1},  # whole: no merge
    ]
    rows = pd.DataFrame(
        {
            "provider": ["own-triton"] * 4,
            "status": ["ok"] * 4,
            "provider_config": [json.dumps(c) for c in cfgs],
        }
    )
    table = merge_margins_by_splits(rows, "own-triton").set_index(["splits", "merge"])
    assert list(table.index) == [(2, "fused"), (4, "fused"), (4, "pdl")]
    assert table.loc[(2, "fused"), "decisions"] == 2 and table.loc[(2, "fused"), "won"] == 1
    assert table.loc[(4, "fused"), "kernel_over_merge"] == pytest.approx(0.8)
    assert merge_margins_by_splits(rows.iloc[3:], "own-triton").empty
