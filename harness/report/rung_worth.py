"""What each ladder rung's feature was worth, read from one run: the rung's time over its
headline kernel's at every point both measured there (same card, same process, same protocol).

A rung removes one feature ('own-triton-no-swap-ab' is 'own-triton' without its swapped
configs), so rung / headline > 1 is what that feature bought at the point. Ratios are never
taken across runs: two cards of one model drift by a few percent (results/h200/README.md,
session 76: points whose pick did not change moved 0.945-0.955x between two H200s), more than
many features are worth.
"""

from __future__ import annotations

import pandas as pd

from harness.measure.stats import geomean

KEYS = ["device", "run", "op", "dtype"]


def headline_of(rung: str, own: set[str]) -> str | None:
    """The own provider `rung` is a rung of: the longest other name it extends with '-'."""
    bases = [q for q in own if q != rung and rung.startswith(q + "-")]
    return max(bases, key=len) if bases else None


def rung_worth(frame: pd.DataFrame) -> pd.DataFrame:
    """From harness.report.gaps.gap_frame: per run and rung, the points both it and its
    headline measured ok, and the rung's time over the headline's (geomean, min, max, and how
    many points the feature paid at: a ratio above 1.00). Empty where no run holds a rung."""
    if frame.empty or not frame["rung"].any():
        return pd.DataFrame()
    out = []
    for key, g in frame.groupby(KEYS, sort=True):
        own = set(g["own"])
        ms = g.pivot_table(index="problem", columns="own", values="own_ms", aggfunc="first")
        for rung in sorted(set(g.loc[g["rung"], "own"])):
            head = headline_of(rung, own)
            if head is None:
                continue
            ratio = (ms[rung] / ms[head]).dropna()
            if ratio.empty:
                continue
            out.append(
                {
                    **dict(zip(KEYS, key, strict=True)),
                    "own": head,
                    "rung": rung,
                    "points": len(ratio),
                    "rung_over_own": geomean(ratio),
                    "min": ratio.min(),
                    "max": ratio.max(),
                    "paid_at": int((ratio > 1.0).sum()),
                }
            )
    return pd.DataFrame(out)
