"""scripts/tune_rung_pairs.py: two decode rungs set against each other from a tune cache's
timings, pair by pair (the same candidate under both rungs), with the `tl` kernel's pairs apart
as the control."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))

import tune_rung_pairs  # noqa: E402
from take_back import _write_tgz  # noqa: E402


def _entry(rung: str, timings: dict[str, float], fill: str = "", when: str = "2026-12-07T13:05"):
    problem = (
        f"('attn_decode', 16, 32, 4, 1, 128, torch.bfloat16, True, '{rung}', 256, 4096, None, "
        f"'NVIDIA H100 80GB HBM3', 'gluon'{', ' + repr(fill) if fill else ''}, 'joint')"
    )
    entry = {
        "key": {"family": "triton-attention", "problem": problem},
        "record": {"tune_timings_ms": timings},
        "gpu_uuid": "GPU-a38d2b5d-0000",
        "tuned_at": when,
    }
    name = f"tune/triton-attention/{rung}{fill}{when}.json"
    return name, json.dumps(entry).encode()


def test_pairs_are_per_candidate_and_the_tl_pairs_are_the_control(tmp_path, capsys):
    early = {"gluon-m64n128w4s2x2": 0.040, "gluon-m64n64w4s2x1": 0.050, "m64n64w4s3x2": 0.060}
    late = {"gluon-m64n128w4s2x2": 0.044, "gluon-m64n64w4s2x1": 0.050, "m64n64w4s3x2": 0.060}
    files = dict(
        [
            _entry("full", early, "fill6/8"),
            _entry("no-early-start", late, "fill6/8"),
            # a problem tuned under one rung only has no pair
            _entry("full", early),
            # an entry from before --since is left out
            _entry("no-early-start", {"m64n64w4s3x2": 1.0}, when="2026-12-06T00:00"),
        ]
    )
    path = tmp_path / "tune.tgz"
    _write_tgz(path, files)
    got = tune_rung_pairs.entries(path, "2026-12-07T13")
    assert sorted(sorted(r) for r in got.values()) == [["full"], ["full", "no-early-start"]]
    assert (
        tune_rung_pairs.main([str(path), "--b", "no-early-start", "--since", "2026-12-07T13"]) == 0
    )
    out = capsys.readouterr().out
    line = next(x for x in out.splitlines() if x.startswith("b16 kvh4 q1 p256 kv4096 ragged"))
    # three pairs: 1.1, 1.0 and 1.0 -> geomean 1.1 ** (1 / 3); best over best 0.044 / 0.040
    assert f"{1.1 ** (1 / 3):.4f}" in line and "1.1000" in line
    assert "gluon candidates: 2 pairs" in out and "tl candidates: 1 pairs, geomean 1.0000" in out
    assert "ragged: 1 problems, best over best 1.1000" in out and "equal:" not in out


def test_no_pair_is_an_error(tmp_path):
    path = tmp_path / "tune.tgz"
    _write_tgz(path, dict([_entry("full", {"a": 1.0})]))
    assert tune_rung_pairs.main([str(path), "--b", "no-early-start"]) == 1
    with pytest.raises(SystemExit):
        tune_rung_pairs.main([str(path)])  # --b is required
