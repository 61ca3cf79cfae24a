"""scripts/decode_merge_probe.py without a GPU: the points it takes from committed runs (the
own-triton rows whose pick was a Gluon per-item split) and the config it pins for each."""

from __future__ import annotations

import json
from pathlib import Path

from script_module import load_script

from harness.store import read_rows

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "decode_merge_probe.py"
probe = load_script("decode_merge_probe")

RUN = ROOT / "results" / "h200" / "fmha_decode_serving-b16-ragged-s70"


def test_points_are_the_gluon_split_picks_rebuilt_with_their_configs():
    points = probe.gluon_split_points([str(RUN)], None)
    rows = read_rows(str(RUN))
    own = rows[rows["provider"] == "own-triton"]
    picks = [json.loads(c) for c in own["provider_config"]]
    wanted = [c for c in picks if c["impl"] == "gluon" and c["num_splits"] > 1]
    assert wanted and len(points) == len(wanted)  # session 70: 27 of 32
    labels = set(own["problem"])
    for problem, pick in points:
        assert problem.label() in labels and problem.ragged and problem.batch == 16
        cfg = pick["config"]
        assert cfg["impl"] == "gluon" and pick["splits"] > 1
        assert cfg.get("split_by") in (None, "longest")  # balanced runs are not probed
        assert {"BLOCK_N", "num_warps", "num_stages", "options"} <= set(cfg)
    at_4k = probe.gluon_split_points([str(RUN)], 4096)
    assert at_4k and all(p.kv_len == 4096 for p, _ in at_4k) and len(at_4k) < len(points)
