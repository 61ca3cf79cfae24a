"""Own decode with the Gluon kernel among its candidates (own-triton) against the `tl` kernel
alone (own-triton-no-tma), from one run on one machine: per (q_len, GQA group, ragged) slice,
the geomean speedup, how often the tuner took the Gluon kernel, and both as fractions of the
HBM read ceiling (the run's device; `--ceiling` GB/s, default the H200's measured 4,628).

    python3 scripts/gluon_decode_table.py results/h200/<run> [--ceiling 4628]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import pandas as pd


def table(run: Path, ceiling: float) -> pd.DataFrame:
    rows = pd.read_parquet(run / "rows.parquet")
    rows = rows[rows.status == "ok"].copy()
    rows["ragged"] = rows.ragged.fillna(False).astype(bool)  # one length: stored as None
    keys = ["q_len", "kv_heads", "ragged", "page_size", "batch", "kv_len"]
    own = rows[rows.provider == "own-triton"].set_index(keys)
    tl = rows[rows.provider == "own-triton-no-tma"].set_index(keys)
    both = own.join(tl.add_suffix("_tl"), how="inner")
    both["speedup"] = both.latency_ms_median_tl / both.latency_ms_median
    both["gluon"] = both.provider_config.map(lambda c: json.loads(c).get("impl") == "gluon")
    both["own_ceiling"] = both.gbps / ceiling
    both["tl_ceiling"] = both.gbps_tl / ceiling
    both = both.reset_index()
    both["group"] = 32 // both.kv_heads

    def geo(s: pd.Series) -> float:
        return float(np.exp(np.log(s).mean()))

    by = both.groupby(["q_len", "group", "ragged"])
    out = by.agg(
        points=("speedup", "size"),
        speedup=("speedup", geo),
        min=("speedup", "min"),
        gluon_picked=("gluon", "sum"),
        own_of_ceiling=("own_ceiling", "mean"),
        tl_of_ceiling=("tl_ceiling", "mean"),
    )
    total = pd.DataFrame(
        dict(
            points=[len(both)],
            speedup=[geo(both.speedup)],
            min=[both.speedup.min()],
            gluon_picked=[int(both.gluon.sum())],
            own_of_ceiling=[both.own_ceiling.mean()],
            tl_of_ceiling=[both.tl_ceiling.mean()],
        ),
        index=pd.MultiIndex.from_tuples([("all", "", "")], names=out.index.names),
    )
    return pd.concat([out, total]).round(3)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run", type=Path)
    ap.add_argument("--ceiling", type=float, default=4628.0, help="HBM read ceiling, GB/s")
    args = ap.parse_args()
    print(f"{args.run}: own-triton (Gluon among the candidates) over own-triton-no-tma (tl)")
    print(table(args.run, args.ceiling).to_string())


if __name__ == "__main__":
    main()
