"""Seeded tuning against a full tune on one card (results/h100/README.md, order item 8): two runs
of the same points, one tuned with HARNESS_TUNE_SEED (kernels/tune_seed.py), one in full, each
from its own cache. Prints each run's tune-pass seconds for the provider, then one line per
point: both picks, both sweep medians and seeded over full, and the geomean and worst.

    python3 scripts/seed_ab.py results/h100/seed3-s113h results/h100/seedfull-s113h [own-cutlass]

Times compare only within one call on one card; a pick both runs share times the same kernel
twice, so its ratio is the A/A noise. It exits 1, after the table, where the pair is no test of
seeding: cards differ, a tune pass was cut short, or no row of the seeded run was seeded.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import Any

import pandas as pd

from harness.store import read_rows

KEYS = ["m", "n", "k", "dtype", "layout"]


def tune_pass(run: Path, provider: str) -> tuple[float | None, int]:
    """The tune pass's seconds for `provider`, summed over the run's calls (run.json history),
    and how many points its passes left untuned (`not_reached`: a pass cut by the budget)."""
    history = json.loads((run / "run.json").read_text()).get("history", [])
    passes = [call.get("tune_pass") or {} for call in history]
    found = [
        seconds
        for p in passes
        for name, seconds in (p.get("by_provider") or {}).items()
        if name.split()[0] == provider
    ]
    return (sum(found) if found else None), sum(int(p.get("not_reached") or 0) for p in passes)


def picks(run: Path, provider: str) -> pd.DataFrame:
    """The run's ok rows of `provider`: the point, its pick, how it was tuned, the sweep median."""
    df = read_rows(str(run))
    df = df[(df["provider"] == provider) & (df["status"] == "ok")].copy()

    def config(text: Any) -> dict:
        try:
            return json.loads(text or "{}")
        except (TypeError, ValueError):
            return {}

    cfgs = df["provider_config"].map(config)
    df["pick"] = [f"{c.get('variant', '?')}:{c.get('run_options', '')}" for c in cfgs]
    df["tune_source"] = [c.get("tune_source", "") for c in cfgs]
    df["seeded_from"] = [c.get("tune_seeded_from", "") for c in cfgs]
    return df[[*KEYS, "pick", "tune_source", "seeded_from", "latency_ms_median", "device_uuid"]]


def pair(seeded: pd.DataFrame, full: pd.DataFrame) -> pd.DataFrame:
    """One row per point both runs measured: both picks and the seeded / full ratio."""
    both = seeded.merge(full, on=KEYS, suffixes=("_seeded", "_full"))
    both["ratio"] = both["latency_ms_median_seeded"] / both["latency_ms_median_full"]
    both["same_pick"] = both["pick_seeded"] == both["pick_full"]
    return both


def main(argv: list[str]) -> int:
    if len(argv) not in (2, 3):
        print(__doc__.split("\n\n")[1].strip(), file=sys.stderr)
        return 2
    seeded_run, full_run = Path(argv[0]), Path(argv[1])
    provider = argv[2] if len(argv) == 3 else "own-cutlass"
    problems = []
    for name, run in (("seeded", seeded_run), ("full", full_run)):
        seconds, untuned = tune_pass(run, provider)
        print(f"{name}: {run.name}, tune pass {seconds} s for {provider}")
        if untuned:
            problems.append(f"{name}'s tune pass was cut: {untuned} points not reached")
    both = pair(picks(seeded_run, provider), picks(full_run, provider))
    if both.empty:
        print("no point measured ok by both runs")
        return 1
    cards = sorted(set(both["device_uuid_seeded"]) | set(both["device_uuid_full"]))
    print(f"cards: {', '.join(str(c) for c in cards)}")
    if len(cards) > 1:
        problems.append("the runs were timed on different cards")
    if not (both["tune_source_seeded"] == "seeded").any():
        problems.append("no row of the seeded run was tuned seeded (no seed matched?)")
    for r in both.sort_values(KEYS).itertuples():
        mark = "same" if r.same_pick else f"{r.pick_seeded} vs {r.pick_full}"
        print(
            f"{r.m}x{r.n}x{r.k} {r.tune_source_seeded}/{r.tune_source_full} "
            f"{r.latency_ms_median_seeded * 1e3:.1f} / {r.latency_ms_median_full * 1e3:.1f} us "
            f"{r.ratio:.3f} {mark}"
        )
    geo = math.exp(both["ratio"].map(math.log).mean())
    differ = both[~both["same_pick"]]
    print(
        f"{len(both)} points, {len(differ)} with another pick; seeded / full geomean {geo:.4f}, "
        f"worst {both['ratio'].max():.4f}"
        + (
            f"; where the picks differ {math.exp(differ['ratio'].map(math.log).mean()):.4f}"
            if len(differ)
            else ""
        )
    )
    for problem in problems:
        print(f"not a comparison of seeding: {problem}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
