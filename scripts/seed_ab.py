"""Seeded tuning against a full tune on one card (results/h100/README.md, order item 8): two runs
of the same points, one tuned with HARNESS_TUNE_SEED (kernels/tune_seed.py), one in full, each
from its own cache. Prints each run's tune-pass seconds for the provider, then one line per
point: both picks, both sweep medians and seeded over full, and the geomean and worst.

    python3 scripts/seed_ab.py results/h100/seed3-s113h results/h100/seedfull-s113h [own-cutlass]

Times compare only within one call on one card (the runs' device UUIDs are printed and must
match); a pick both runs share times the same kernel twice, so its ratio is the A/A noise.
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


def tune_seconds(run: Path, provider: str) -> float | None:
    """The tune pass's seconds for `provider`, summed over the run's calls (run.json history)."""
    history = json.loads((run / "run.json").read_text()).get("history", [])
    found = [
        seconds
        for call in history
        for name, seconds in ((call.get("tune_pass") or {}).get("by_provider") or {}).items()
        if name.split()[0] == provider
    ]
    return sum(found) if found else None


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
    for name, run in (("seeded", seeded_run), ("full", full_run)):
        print(f"{name}: {run.name}, tune pass {tune_seconds(run, provider)} s for {provider}")
    both = pair(picks(seeded_run, provider), picks(full_run, provider))
    if both.empty:
        print("no point measured ok by both runs")
        return 1
    cards = sorted(set(both["device_uuid_seeded"]) | set(both["device_uuid_full"]))
    print(f"cards: {', '.join(str(c) for c in cards)}")
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
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
