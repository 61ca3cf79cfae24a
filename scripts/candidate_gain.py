"""What a family of tuning candidates bought, read from the tuner's own timings: for each own
CUTLASS row whose tuner timed candidates matching PATTERN, the best time of all candidates over
the best of the others (1.05: the family made that point 5% faster), then the geomean, the points
it moved by more than 1%, the largest gains and how often each config won.

The times are the tuner's bursts (kernels/bench_cold.py: read flush and stream hold before every
launch), all from one process on one machine, so the comparison is free of machine spread; the
sweep's own medians (gemm_ratio_table.py) say what the chosen kernel gives against the vendor.

python3 scripts/candidate_gain.py results/h100/gemm_llama-decode-dp '-dp-128x\\d+-c'   # clustered only
"""

from __future__ import annotations

import json
import re
import sys

import numpy as np
import pandas as pd

from harness.store import read_rows


def gains(rows: pd.DataFrame, pattern: str) -> pd.DataFrame:
    """One line per row that timed both kinds of candidate: shape, gain (best of all / best
    without the family) and the winning config (columns m, n, k, provider_config)."""
    family = re.compile(pattern)
    out = []
    for m, n, k, cfg in zip(rows.m, rows.n, rows.k, rows.provider_config, strict=True):
        timed = json.loads(cfg or "{}").get("candidates") or {}
        others = [ms for name, ms in timed.items() if not family.search(name)]
        if not others or len(others) == len(timed):
            continue  # tuned from the disk cache without timings, or no candidate of the family
        winner = min(timed, key=timed.get)
        out.append({"shape": f"{m}x{n}x{k}", "gain": min(others) / timed[winner], "winner": winner})
    return pd.DataFrame(out, columns=["shape", "gain", "winner"])


def summary(g: pd.DataFrame) -> list[str]:
    if g.empty:
        return ["no row timed candidates of the family beside others"]
    geomean = float(np.exp(np.log(g.gain).mean()))
    largest = g.sort_values("gain", ascending=False).head(6)
    wins = g.winner.str.split(":").str[0].value_counts()
    return [
        f"{len(g)} points: best of all / best without the family, geomean {geomean:.4f}, "
        f"max {g.gain.max():.3f}, above 1.01 on {int((g.gain > 1.01).sum())}",
        "  largest: "
        + ", ".join(f"{s} {v:.3f}" for s, v in zip(largest["shape"], largest["gain"], strict=True)),
        "  winners: " + ", ".join(f"{name} {count}" for name, count in wins.items()),
    ]


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    run, pattern = argv
    rows = read_rows(run, columns=["provider", "status", "m", "n", "k", "provider_config"])
    own = rows[(rows.provider == "own-cutlass") & (rows.status == "ok")]
    print("\n".join(summary(gains(own, pattern))))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
