"""What a family of tuning candidates bought, read from the tuner's own timings: for each own
CUTLASS row whose tuner timed candidates matching PATTERN, the best time of all candidates over
the best of the others (1.05: the family made that point 5% faster), then the geomean, the points
it moved by more than 1%, the largest gains and how often each config won.

The times are the tuner's bursts (kernels/bench_cold.py: read flush and stream hold before every
launch), all from one process on one machine, so the comparison is free of machine spread; the
sweep's own medians (gemm_ratio_table.py) say what the chosen kernel gives against the vendor.

python3 scripts/candidate_gain.py results/h100/gemm_llama-decode-dp '-dp-128x\\d+-c'   # clustered only
python3 scripts/candidate_gain.py results/h200/gemm_llama-s50 'pingpong-64x16:' m=17-32
python3 scripts/candidate_gain.py results/h200/gemm_llama-s50 @deep provider=own-triton
python3 scripts/candidate_gain.py results/h100/gemm_llama-noise @new:OLD_RUN provider=own-triton

Options: provider= (default own-cutlass) and m=LO-HI (rows with LO <= M <= HI). The family
@deep is own Triton's one-wave deep-pipeline configs (gemm_candidates.deep_configs), named per
row's shape for a 132-SM Hopper and 2-byte operands (bf16 runs). The family @new:OLD_RUN is
every candidate the tuner timed at a point that OLD_RUN's tuner did not offer at the same shape
(same provider): what a change to the candidate lists bought, read within the newer run.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable

import numpy as np
import pandas as pd

from harness.store import read_rows

Family = Callable[[int, int, int, str], bool]  # (m, n, k, candidate name) -> in the family


def deep_family(m: int, n: int, k: int, name: str) -> bool:
    """Whether `name` is one of own Triton's deep configs at this bf16 shape on a 132-SM Hopper."""
    from harness_kernels.triton.aot import TARGETS
    from harness_kernels.triton.gemm_candidates import deep_configs
    from harness_kernels.triton.gemm_tune import _short  # the name provider_config records

    return name in {_short(c) for c in deep_configs("full", m, n, k, 2, 2, TARGETS["sm_90"][1])}


def new_family(earlier: pd.DataFrame) -> Family:
    """The candidates absent from `earlier`'s timed lists at the same shape (rows of one
    provider); a shape `earlier` lacks has no family member, so its row is left out."""
    offered = {
        (int(m), int(n), int(k)): set(json.loads(cfg or "{}").get("candidates") or {})
        for m, n, k, cfg in zip(
            earlier.m, earlier.n, earlier.k, earlier.provider_config, strict=True
        )
    }
    return lambda m, n, k, name: (m, n, k) in offered and name not in offered[(m, n, k)]


def gains(rows: pd.DataFrame, pattern: str | Family) -> pd.DataFrame:
    """One line per row that timed both kinds of candidate: shape, gain (best of all / best
    without the family) and the winning config (columns m, n, k, provider_config). `pattern`
    is a regex on candidate names, or a Family."""
    if isinstance(pattern, str):
        regex = re.compile(pattern)

        def family(m: int, n: int, k: int, name: str) -> bool:
            return bool(regex.search(name))
    else:
        family = pattern
    out = []
    for m, n, k, cfg in zip(rows.m, rows.n, rows.k, rows.provider_config, strict=True):
        timed = json.loads(cfg or "{}").get("candidates") or {}
        if not isinstance(timed, dict):
            continue  # own Triton's Gluon rows list candidate names only
        others = [ms for name, ms in timed.items() if not family(int(m), int(n), int(k), name)]
        if not others or len(others) == len(timed):
            continue  # tuned from the disk cache without timings, or no candidate of the family
        winner = min(timed, key=timed.get)
        out.append({"shape": f"{m}x{n}x{k}", "gain": min(others) / timed[winner], "winner": winner})
    return pd.DataFrame(out, columns=["shape", "gain", "winner"])


def _label(name: str) -> str:
    """A winner as the summary names it: a CUTLASS config without its run options, or an own
    Triton config (block_m=16/block_n=64/...) as 16x64x128 s5 k1 p2 (split-K, programs/SM)."""
    if "block_m=" not in name:
        return name.split(":")[0]
    d = dict(part.split("=", 1) for part in name.split("/"))
    tile = f"{d['block_m']}x{d['block_n']}x{d['block_k']} s{d['num_stages']}"
    return f"{tile} k{d['split_k']} p{d['programs_per_sm']}" + (
        " stream-K" if d.get("stream_k") == "True" else ""
    )


def summary(g: pd.DataFrame) -> list[str]:
    if g.empty:
        return ["no row timed candidates of the family beside others"]
    geomean = float(np.exp(np.log(g.gain).mean()))
    largest = g.sort_values("gain", ascending=False).head(6)
    wins = g.winner.map(_label).value_counts()
    return [
        f"{len(g)} points: best of all / best without the family, geomean {geomean:.4f}, "
        f"max {g.gain.max():.3f}, above 1.01 on {int((g.gain > 1.01).sum())}",
        "  largest: "
        + ", ".join(f"{s} {v:.3f}" for s, v in zip(largest["shape"], largest["gain"], strict=True)),
        "  winners: " + ", ".join(f"{name} {count}" for name, count in wins.items()),
    ]


def main(argv: list[str]) -> int:
    opts = dict(a.split("=", 1) for a in argv[2:] if "=" in a)
    if len(argv) < 2 or len(opts) != len(argv) - 2 or set(opts) - {"provider", "m"}:
        print(__doc__.strip().split("\n\n")[-2], file=sys.stderr)
        return 2
    run, pattern = argv[:2]

    def own_rows(path: str) -> pd.DataFrame:
        rows = read_rows(path, columns=["provider", "status", "m", "n", "k", "provider_config"])
        return rows[(rows.provider == opts.get("provider", "own-cutlass")) & (rows.status == "ok")]

    own = own_rows(run)
    if "m" in opts:
        lo, hi = (int(x) for x in opts["m"].split("-"))
        own = own[(own.m >= lo) & (own.m <= hi)]
    family: str | Family = pattern
    if pattern == "@deep":
        family = deep_family
    elif pattern.startswith("@new:"):
        family = new_family(own_rows(pattern.removeprefix("@new:")))
    print("\n".join(summary(gains(own, family))))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
