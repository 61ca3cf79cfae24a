"""Before and after: how a change moved own kernels against the vendors, point by point.

`harness gaps AFTER against=BEFORE` sets two gap frames (harness.report.gaps) side by side on
the points both measured with the same own provider on the same GPU model:

    change = speedup after / speedup before       (> 1: the own kernel gained on the vendors)

Each speedup divides two medians of one run, timed on one machine; the change divides two such
ratios. That is the comparison that holds when the two runs came from two machines of one
model, where their times alone do not: two H200s read the same bytes 1-2.5% apart (session 57),
and a vendor row moves with its machine as the own row does. The reference is each run's
fastest vendor row of the point, so it may be another vendor after than before; both are named.
A point whose ok vendor rows differ between the two runs (a vendor not reached in a run cut
short, or failing in one) is left out of the change and counted: session 58's H100 run lacked
FA4's row at a point where FA4 had been the fastest, and its speedup there rose from 0.921x
against FA4 to 1.155x against FlashInfer. A run of several folders on either side is matched run
by run: one summary line per pair of runs. Pandas only: no torch.

Whether the own kernel's choice changed at a point (its config as `harness gaps` names it: the
tile, stages, schedule, splits) separates what a change bought from what the two machines
moved: the points that kept their config measure the drift between the runs. In session 59's
H100 mid band 16 of 32 points changed config (1.009x over them, 0.992x over the other 16); one
that kept its config moved 1.003x -> 0.961x (512x4096x14336): 4.2%, nearly as far as the best
new tile moved a point (5.2%, 256x6144x4096).
"""

from __future__ import annotations

import pandas as pd
from tabulate import tabulate

from harness.measure.stats import geomean
from harness.report.data import fmt
from harness.report.gap_reasons import PAR

KEY = ["device", "op", "dtype", "problem", "own"]
SIDE = ["run", "reference", "vendors", "speedup", "reference_gpu", "rung", "own_config"]
MOVES_SHOWN = 8  # largest moves listed each way


def gap_change(before: pd.DataFrame, after: pd.DataFrame) -> pd.DataFrame:
    """One line per (GPU model, op, dtype, point, own provider, run before, run after) with a
    speedup on both sides: the two speedups, their references and `change`; smallest change
    first. `same_vendors` is False where the two runs' ok vendor rows of the point differ (no
    like-for-like change: the summary and the moves leave those out)."""
    cols = [*KEY, *SIDE]
    if before.empty or after.empty:
        return pd.DataFrame(columns=[*KEY, "change"])
    b = before.loc[before["speedup"].notna(), cols]
    a = after.loc[after["speedup"].notna(), cols]
    pairs = b.merge(a, on=KEY, suffixes=("_before", "_after"))
    pairs["change"] = pairs["speedup_after"] / pairs["speedup_before"]
    pairs["same_vendors"] = pairs["vendors_before"] == pairs["vendors_after"]
    pairs["same_config"] = pairs["own_config_before"] == pairs["own_config_after"]
    return pairs.sort_values(["change", *KEY], kind="stable").reset_index(drop=True)


def _at_par(speedups: pd.Series) -> int:
    return int((speedups > 1 - PAR).sum())


def change_summary(pairs: pd.DataFrame) -> pd.DataFrame:
    """Per (GPU model, op, dtype, own provider, run before, run after), headline kernels
    first: the points both runs compared, each run's geomean speedup over them, the geomean
    change, the points at par or better in each, the smallest and largest change, how many
    speedups rest on a reference timed on another GPU than their own row (weaker: a run resumed
    on another machine), and the points left out because their vendor rows differ. Then the
    points whose own config changed, and the geomean change over those (`change_new_config`)
    and over the others (`change_same_config`: the drift between the two runs, since the own
    kernel there is the same); NaN where there are none."""
    if pairs.empty:
        return pd.DataFrame()
    keys = ["device", "op", "dtype", "own", "run_before", "run_after"]
    out = []
    for (rung, *key), both in pairs.groupby(["rung_after", *keys], sort=True):
        g = both[both["same_vendors"]]
        if g.empty:
            continue
        other = (g["reference_gpu_before"] == "other") | (g["reference_gpu_after"] == "other")
        out.append(
            {
                **dict(zip(keys, key, strict=True)),
                "rung": rung,
                "points": len(g),
                "before": geomean(g["speedup_before"]),
                "after": geomean(g["speedup_after"]),
                "change": geomean(g["change"]),
                "at_par_before": _at_par(g["speedup_before"]),
                "at_par_after": _at_par(g["speedup_after"]),
                "min_change": float(g["change"].min()),
                "max_change": float(g["change"].max()),
                "reference_on_other_gpu": int(other.sum()),
                "vendors_differ": len(both) - len(g),
                "config_changed": int((~g["same_config"]).sum()),
                "change_new_config": _geomean_or_nan(g.loc[~g["same_config"], "change"]),
                "change_same_config": _geomean_or_nan(g.loc[g["same_config"], "change"]),
            }
        )
    return pd.DataFrame(out)


def _geomean_or_nan(values: pd.Series) -> float:
    return geomean(values) if len(values) else float("nan")


def largest_moves(pairs: pd.DataFrame, n: int = MOVES_SHOWN) -> pd.DataFrame:
    """The n points that lost most and the n that gained most (headline kernels only), each
    with both speedups and references: losses first, smallest change first."""
    head = pairs[~pairs["rung_after"] & pairs["same_vendors"]] if not pairs.empty else pairs
    if head.empty:
        return head
    lost = head[head["change"] < 1].head(n)
    gained = head[head["change"] >= 1].tail(n)
    return pd.concat([lost, gained])


def render(pairs: pd.DataFrame, n: int = MOVES_SHOWN) -> str:
    """The summary and the largest moves as text for the terminal."""
    summary = change_summary(pairs)
    if summary.empty:
        return (
            "(no point with a speedup in both: same GPU model, op, dtype, shape and own provider)"
        )
    shown = summary.copy()
    numbers = ("before", "after", "change", "min_change", "max_change")
    for col in (*numbers, "change_new_config", "change_same_config"):
        shown[col] = shown[col].map(lambda v: fmt(v, ".3f"))
    moves = largest_moves(pairs, n)
    lines = [
        tabulate(shown, headers="keys", tablefmt="simple", showindex=False, disable_numparse=True),
        "",
        f"largest moves (up to {n} each way, headline kernels):",
    ]
    if moves.empty:
        lines.append("(none)")
        return "\n".join(lines)
    table = pd.DataFrame(
        {
            "device": moves["device"],
            "problem": moves["problem"],
            "own": moves["own"],
            "before": [
                f"{s:.3f} vs {r}"
                for s, r in zip(moves["speedup_before"], moves["reference_before"], strict=True)
            ],
            "after": [
                f"{s:.3f} vs {r}"
                for s, r in zip(moves["speedup_after"], moves["reference_after"], strict=True)
            ],
            "change": moves["change"].map(lambda v: fmt(v, ".3f")),
            "own config": [
                b if same else f"{b} -> {a}"
                for b, a, same in zip(
                    moves["own_config_before"],
                    moves["own_config_after"],
                    moves["same_config"],
                    strict=True,
                )
            ],
        }
    )
    lines.append(
        tabulate(table, headers="keys", tablefmt="simple", showindex=False, disable_numparse=True)
    )
    return "\n".join(lines)
