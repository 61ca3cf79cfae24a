"""How the L2 flush's size moves a read: one-pass read runs (sweep probes_read_once) made with
different `protocol.l2_flush_factor`s, or `protocol.l2=hot`, side by side. One line per working
set: each run's median in us, then each run's time over the last run's (the reference), so a
ratio under 1 is a read the run's flush left faster.

Session 77 (H200, results/h200/README.md): two series on two cards, one in each order, asked
whether the sweep's default 2x-L2 read flush leaves part of a 64-192 MB operand in the L2. At
most a little: 1x and 2x read alike (within 1.5%); 4x read 0-2.6% slower at 48-192 MB in the
series that ran 2x first and 0-1.8% in the one that ran 4x first; 8x read 1.2-9% slower than
1x and 2x at every size up to 192 MB, 16 MB (inside the L2, evicted by any of them)
included, so most of 8x's cost is not L2 residue.

python3 scripts/flush_series_table.py results/h200/readonce-f1b-s77 results/h200/readonce-f2b-s77 \
    results/h200/readonce-f4b-s77 results/h200/readonce-f8b-s77
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

from harness.store import read_rows


def label(rows: pd.DataFrame, path: str) -> str:
    """The run's flush as a short column name: `hot`, the flushed MiB, or the folder's name."""
    if (rows["l2"] == "hot").all():
        return "hot"
    flushed = rows["l2_flush_bytes"].dropna().unique()
    return f"{flushed[0] / 2**20:.0f}MiB" if len(flushed) == 1 else Path(path).name


def series(paths: list[str]) -> pd.DataFrame:
    """Median us per working set (rows) and run (columns, in the order given)."""
    columns = {}
    for path in paths:
        rows = read_rows(path)
        rows = rows[(rows["status"] == "ok") & (rows["op"] == "memory")]
        if rows.empty:
            raise SystemExit(f"{path}: no ok memory rows")
        us = rows.groupby("working_set_bytes")["latency_ms_median"].median() * 1e3
        columns[label(rows, path)] = us
    table = pd.DataFrame(columns)
    table.index = [f"{b / 2**20:.0f} MiB" for b in table.index]
    return table


def main(paths: list[str]) -> int:
    if len(paths) < 2:
        print(__doc__)
        return 2
    table = series(paths)
    ref = table.columns[-1]
    print("median us")
    print(table.round(2).to_string())
    print(f"\nover {ref}")
    print(table.div(table[ref], axis=0).round(3).to_string())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
