"""scripts/superseded_runs.py: a run is listed only when later runs on the same GPU measured
every one of its ok rows ok again (rows faked; run.json gives each run's start)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
from script_module import load_script


def _load():
    return load_script("superseded_runs")


def _run(root: Path, name: str, time: str) -> Path:
    (root / name).mkdir()
    (root / name / "run.json").write_text(json.dumps({"history": [{"time": time}]}))
    return root / name


def test_only_runs_covered_row_for_row_by_later_runs(tmp_path, monkeypatch):
    mod = _load()
    rows = {
        "old": [("gemm", "cublas", "m1", "ok"), ("gemm", "own", "m1", "ok"), ("gemm", "own", "m2", "error")],
        "partial": [("gemm", "cublas", "m1", "ok"), ("gemm", "own", "m9", "ok")],
        "new": [("gemm", "cublas", "m1", "ok"), ("gemm", "own", "m1", "ok")],
    }  # fmt: skip
    for name, t in (("old", "2026-11-01"), ("partial", "2026-11-02"), ("new", "2026-11-03")):
        _run(tmp_path, name, t)
    frame = {n: pd.DataFrame(r, columns=["op", "provider", "problem", "status"]) for n, r in rows.items()}  # fmt: skip
    monkeypatch.setattr(mod, "read_rows", lambda path: frame[Path(path).name])
    out = mod.covered(tmp_path)
    # "old" is covered by "partial" and "new" (its failed row needs no cover); "partial"'s m9
    # row was never measured again; "new" has nothing after it
    assert [(name, n, by) for name, n, _, by in out] == [("old", 2, ["partial", "new"])]
