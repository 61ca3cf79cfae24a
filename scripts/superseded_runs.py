"""Committed runs whose every ok row was measured ok again by a later run on the same GPU model.

    python3 scripts/superseded_runs.py results/h200 [results/h100 ...]

A lent GPU call carries the whole tracked tree (64 MiB with the wheels), so runs that later
runs cover point for point can move out of the tree (results/h200/README.md, "Runs moved out of
the tree", says how to restore one from git). A row's identity is its op, provider and problem
axes (not point_key, which hashes the device and protocol too); "later" is by the run's first
recorded time (run.json history). Prints, per directory, each covered run with its ok rows,
size, and the later runs that cover it, then the total size.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pandas as pd

from harness.store import read_rows

AXES = [
    "op", "provider", "problem", "dtype", "m", "n", "k", "layout", "batch", "q_heads",
    "kv_heads", "q_len", "kv_len", "head_dim", "causal", "kv_layout", "page_size", "ragged",
    "phase", "model", "metric", "working_set_bytes", "stride_bytes", "collective",
    "message_bytes", "world_size",
]  # fmt: skip


def _keys(rows: pd.DataFrame) -> set[tuple]:
    ok = rows[rows.status == "ok"]
    cols = [c for c in AXES if c in ok.columns]
    return {tuple(str(v) for v in rec) for rec in ok[cols].itertuples(index=False)}


def _started(run: Path) -> str:
    history = json.loads((run / "run.json").read_text()).get("history", [])
    return min((h.get("time", "") for h in history), default="")


def _size(run: Path) -> int:
    return sum(f.stat().st_size for f in run.rglob("*") if f.is_file())


def covered(directory: Path) -> list[tuple[str, int, int, list[str]]]:
    """(run, ok rows, bytes, covering later runs) for each run of `directory` that later runs
    cover row for row."""
    runs = sorted((p for p in directory.iterdir() if (p / "run.json").exists()), key=_started)
    keys = {r.name: _keys(read_rows(r)) for r in runs}
    out = []
    for i, run in enumerate(runs):
        mine = keys[run.name]
        if not mine:
            continue
        later = runs[i + 1 :]
        left, by = set(mine), []
        for other in later:
            hit = left & keys[other.name]
            if hit:
                by.append(other.name)
                left -= hit
        if not left:
            out.append((run.name, len(mine), _size(run), by))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dirs", type=Path, nargs="+")
    total = 0
    for d in ap.parse_args().dirs:
        for name, n, size, by in covered(d):
            total += size
            print(f"{d / name}: {n} ok rows, {size / 1e6:.2f} MB, covered by {', '.join(by)}")
    print(f"total {total / 1e6:.2f} MB")


if __name__ == "__main__":
    main()
