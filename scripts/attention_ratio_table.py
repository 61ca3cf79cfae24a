"""Print an attention run's own / vendor time ratios: per head_dim, geomean over causal and not at
q_len >= 4096 and over every point, each own provider against one vendor row of the same run.

    python3 scripts/attention_ratio_table.py RUN_DIR [--vendor sdpa-cudnn] [--min-len 4096]

A ratio above 1 means the own kernel is faster (vendor time / own time, same point, same run).
"""

from __future__ import annotations

import argparse
from collections import defaultdict

from harness.measure.stats import geomean
from harness.store import read_rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run_dir")
    ap.add_argument("--vendor", default="sdpa-cudnn")
    ap.add_argument("--min-len", type=int, default=4096)
    a = ap.parse_args()
    rows = read_rows(a.run_dir)
    rows = rows[(rows["op"] == "attention") & (rows["status"] == "ok")]
    key = ["head_dim", "q_len", "kv_len", "batch", "causal"]
    ms = {
        (r.provider, *(getattr(r, k) for k in key)): r.latency_ms_median for r in rows.itertuples()
    }
    every: dict[tuple[str, int], list[float]] = defaultdict(list)  # all points
    long: dict[tuple[str, int], list[float]] = defaultdict(list)  # q_len >= min_len
    for (prov, d, ql, kl, b, c), t in ms.items():
        v = ms.get((a.vendor, d, ql, kl, b, c))
        if prov == a.vendor or v is None:
            continue
        every[(prov, int(d))].append(v / t)
        if ql >= a.min_len:
            long[(prov, int(d))].append(v / t)
    print(f"vendor time / own time against {a.vendor} (geomean; S >= {a.min_len} | all points)")
    for (prov, d), xs in sorted(long.items()):
        allx = every[(prov, d)]
        print(
            f"{prov:24s} D {d:3d}: {geomean(xs):.3f}x (n={len(xs)}, min {min(xs):.3f}) | "
            f"{geomean(allx):.3f}x (n={len(allx)})"
        )


if __name__ == "__main__":
    main()
