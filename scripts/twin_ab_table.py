"""Own CUTLASS's decode twin rule over fresh processes (scripts/twin_ab_call.sh's runs): per
point, each provider's median over the processes, its range, and how many of its rows ran slow
(SLOW or more over its own fastest row at that point: the H200's per-allocation state was
+6-9%, results/h200/README.md, session 56); then per provider the slow rows over all points and
the geomean of cuBLAS's median over its median. Where own-cutlass ran the twin the rule chose
(`twin_rule` in provider_config) the point is marked "twin"; elsewhere both own providers ran
the same kernel, and their difference is the spread between processes.

python3 scripts/twin_ab_table.py results/_scratch/h200/twin_ab
"""

from __future__ import annotations

import json
import sys

import numpy as np
import pandas as pd

from harness.store import read_rows

SLOW = 1.04
PROVIDERS = ("cublas", "own-cutlass", "own-cutlass-burst")
SHAPE = ["m", "n", "k"]


def table(rows: pd.DataFrame) -> list[str]:
    """The lines to print for ok rows of one or more processes' runs."""
    ok = rows[rows.status == "ok"]
    out: list[str] = []
    slow = {p: [0, 0] for p in PROVIDERS}  # provider -> [slow rows, rows]
    medians: dict[str, dict[tuple, float]] = {p: {} for p in PROVIDERS}
    for point, g in ok.groupby(SHAPE):
        cells = []
        for p in PROVIDERS:
            t = g.loc[g.provider == p, "latency_ms_median"] * 1e3
            if t.empty:
                cells.append("-")
                continue
            n_slow = int((t > SLOW * t.min()).sum())
            slow[p][0] += n_slow
            slow[p][1] += len(t)
            medians[p][point] = float(t.median())
            cells.append(f"{t.median():.1f} ({t.min():.1f}-{t.max():.1f}) {n_slow}/{len(t)}")
        own = g[g.provider == "own-cutlass"].provider_config.map(lambda c: json.loads(c or "{}"))
        twin = any("twin_rule" in c for c in own)
        shape = "x".join(str(v) for v in point)
        out.append(f"{shape} | " + " | ".join(cells) + (" | twin" if twin else " |"))
    head = f"M x N x K | {' | '.join(PROVIDERS)} (median us (range) slow/rows) | rule"
    lines = [head, *out, ""]
    for p in PROVIDERS:
        n_slow, n = slow[p]
        ratios = [
            medians["cublas"][pt] / ms for pt, ms in medians[p].items() if pt in medians["cublas"]
        ]
        geo = float(np.exp(np.mean(np.log(ratios)))) if ratios else float("nan")
        lines.append(
            f"{p}: {n_slow} of {n} rows slow (>{SLOW:.2f}x its fastest); "
            f"cuBLAS median over its median, geomean {geo:.3f} ({len(ratios)} points)"
        )
    return lines


def main(paths: list[str]) -> int:
    cols = ["provider", "status", *SHAPE, "latency_ms_median", "provider_config", "run_id"]
    print("\n".join(table(read_rows(*paths, columns=cols))))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
