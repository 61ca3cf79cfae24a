"""Print a paged-decode run against issue 21.3's two bars: own GB/s as a fraction of the GPU's
measured HBM read ceiling, and own time against the fastest vendor row of the same point.

    python3 scripts/decode_serving_table.py RUN_DIR [--ceilings DIR] [--own own-triton]
                                            [--read-once DIR] [--batch N] [--against RUN]

One line per (q_len, GQA group, ragged) slice, geomean over its points (pages, batch, KV
length), then the whole run. The ceiling is the GPU's measured HBM read ceiling as the report
and `harness goals` take it: the latest `hbm_read_gbps` row of a ceilings run (default: among
every run in RUN_DIR's folder, results/<gpu>; --ceilings DIR: that ceilings run), so the three
never disagree on the bar. A ratio above 1 means
own is faster (fastest vendor time / own time, same point, same run). A point whose rows come
from more than one GPU (a resumed run that ended on another machine: `device_uuid`) has no ratio:
it is left out of the vs-vendor columns and counted on the last line, since timings compare only
within one machine. Nor has a point where a vendor of the run has no row at all (a run cut short
before it: session 58's H100 run lacked FA4's row at a point where FA4 had been the fastest).
Its own GB/s still counts against the ceiling. Another own provider of the run (a rung such as
own-triton-no-longest-first) is no vendor: it gets its own lines, its time over own's per slice.

--read-once DIR (a `probes_read_once` run on the same GPU model) adds `of_read_once`: own GB/s
over the rate one cold pass reads the same number of bytes at (the faster provider at each size,
interpolated in log bytes). A decode point moves 0.1-0.3 GB in 30-80 us, where a plain read
does not reach the 4 GiB plateau either: this column says how much of the gap is the size.

After the slices: the ceiling bar per (batch, KV length, ragged); why own is short of it, as
own's time fit as fixed + bytes / rate per (batch, GQA group, ragged) beside one cold read's fit
(with --read-once): a rate at the read's and a fixed cost above it put the gap in the launch,
ramp, tail and merge, not in streaming; own's rungs, how own's tuner
ran the points (kernel, split, merge, item order: provider_config, counted), and every point
behind the fastest vendor, slowest first.

--batch N keeps one batch size (repeatable): one half of the grid against the same half of
another run. --against RUN (an earlier run of the same grid, usually on another machine of the
same model) adds each provider's speed in RUN_DIR over its speed in RUN, at the points both
measured ok (own also per q_len). A vs-vendor ratio that moved between two runs on two machines
moved by own's change over the vendors' change: session 66's batch-16 half went from 1.043x to
1.072x while FlashInfer itself ran 1.4% slower on the new machine.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

from harness.report.decode_serving import (
    behind,
    ceiling_by,
    fixed_and_rate,
    hbm_read_gbps,
    keep_batches,
    merge_margins,
    merge_margins_by_splits,
    own_merge_timings,
    own_picks,
    own_rungs,
    provider_drift,
    read_once_curve,
    rungs_by,
    summarize,
    table,
)
from harness.store import read_rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run_dir", type=Path)
    ap.add_argument("--ceilings", type=Path, default=None)
    ap.add_argument("--own", default="own-triton")
    ap.add_argument("--read-once", type=Path, default=None, help="a probes_read_once run")
    ap.add_argument(
        "--batch", type=int, action="append", help="keep this batch size only (repeatable)"
    )
    ap.add_argument("--against", type=Path, default=None, help="an earlier run of the same grid")
    a = ap.parse_args()
    curve = read_once_curve(a.read_once) if a.read_once else None
    rows = keep_batches(read_rows(str(a.run_dir)), a.batch)
    if rows.empty:
        raise SystemExit(f"{a.run_dir}: no rows at batch {a.batch}")
    device = str(rows["device_name"].dropna().iloc[0])
    folders = [a.ceilings, a.run_dir] if a.ceilings else [a.run_dir.parent]
    ceiling, source = hbm_read_gbps(device, folders)
    points = table(rows, a.own, ceiling, curve)
    only = f", batch {', '.join(map(str, a.batch))} only" if a.batch else ""
    print(f"{a.run_dir}{only}: {a.own}, HBM read ceiling {ceiling:,.0f} GB/s (measured: {source})")
    if curve is not None:
        sizes = ", ".join(f"{b / 1e6:,.0f} MB {g:,.0f}" for b, g in curve.items())
        print(f"one cold read pass ({a.read_once}), GB/s by bytes: {sizes}")
    with pd.option_context("display.width", 200, "display.max_rows", 200):
        print(summarize(points).to_string())
        print("the ceiling bar by batch, KV length and raggedness:")
        print(ceiling_by(points).to_string())
        split = fixed_and_rate(rows, a.own, curve)
        if len(split):
            print(
                "own's time as fixed + bytes / rate over each (q_len, page) slice's KV lengths"
                " (median of the slices), beside one cold read's over the same bytes:"
            )
            print(split.to_string(index=False))
        rungs = rungs_by(points)
        if len(rungs):
            print("own against its rungs in this run (the rung's time / own's, same point):")
            print(rungs.to_string(index=False))
        picks = own_picks(rows, a.own)
        if len(picks):
            print(f"how {a.own}'s tuner ran the points (provider_config):")
            print(picks.to_string(index=False))
        margins = merge_margins(own_merge_timings(rows, a.own))
        if len(margins):
            print("its split merges in its tuner's timings (the reduction kernel's time / each's):")
            print(margins.to_string(index=False))
            by_splits = merge_margins_by_splits(rows, a.own)
            if len(by_splits) and by_splits["splits"].nunique() > 1:
                print("the same by split count:")
                print(by_splits.to_string(index=False))
        slow = behind(points)
        print(f"{len(slow)} point(s) behind the fastest vendor" + (":" if len(slow) else ""))
        if len(slow):
            print(slow.to_string())
    if a.against is not None:
        other = keep_batches(read_rows(str(a.against)), a.batch)
        if other.empty:
            raise SystemExit(f"{a.against}: no rows" + (f" at batch {a.batch}" if a.batch else ""))
        drift = provider_drift(rows, other, a.own)
        print(f"each provider here over itself in {a.against} (latency there / here):")
        print(drift.to_string(index=False) if len(drift) else "no point measured ok in both")
    attention = rows[(rows["op"] == "attention") & (rows["status"] == "ok")]
    if set(attention["provider"]) <= {a.own, *own_rungs(attention, a.own)}:
        print("own rows only: no vs-vendor ratio")
    else:
        for why, n in points.loc[points["no_ratio"] != "", "no_ratio"].value_counts().items():
            print(
                f"{n} point(s) {why}: no vs-vendor ratio, their own GB/s counted against the ceiling"
            )


if __name__ == "__main__":
    main()
