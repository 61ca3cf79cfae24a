"""Print a paged-decode run against issue 21.3's two bars: own GB/s as a fraction of the GPU's
measured HBM read ceiling, and own time against the fastest vendor row of the same point.

    python3 scripts/decode_serving_table.py RUN_DIR [--ceilings DIR] [--own own-triton]
                                            [--read-once DIR] [--batch N] [--against RUN]

One line per (q_len, GQA group, ragged) slice, geomean over its points (pages, batch, KV
length), then the whole run. The ceiling is the `hbm_read_gbps` row of a ceilings run (default:
RUN_DIR's sibling `ceilings`, which must come from the same GPU model). A ratio above 1 means
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

After the slices: the ceiling bar per (batch, KV length, ragged), and every point behind the
fastest vendor, slowest first.

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

import numpy as np
import pandas as pd

from harness.measure.stats import geomean
from harness.store import read_rows

SLICE = ["q_len", "group", "ragged"]
POINT = ["q_len", "group", "ragged", "page_size", "batch", "kv_len"]
# the ceiling bar's own axes (issue 21.3: batch >= 16, KV >= 4k), lengths equal or ragged
BAR = ["batch", "kv_len", "ragged"]
RUNG = "rung:"  # a column of `table`: that own rung's time over own's, per point


def hbm_read_gbps(ceilings_dir: Path) -> float:
    rows = read_rows(str(ceilings_dir))
    hit = rows[(rows["metric"] == "hbm_read_gbps") & (rows["status"] == "ok")]
    if hit.empty:
        raise SystemExit(f"no hbm_read_gbps row in {ceilings_dir}")
    return float(hit["gbps"].max())


def read_once_curve(run_dir: Path) -> pd.Series:
    """GB/s of one cold read pass by bytes read: the faster provider at each size."""
    rows = read_rows(str(run_dir))
    ok = rows[(rows["op"] == "memory") & (rows["status"] == "ok") & (rows["metric"] == "read")]
    ok = ok[ok["traffic_bytes"] == ok["working_set_bytes"]]  # one pass only
    if ok.empty:
        raise SystemExit(f"no one-pass read rows in {run_dir}")
    return ok.groupby("traffic_bytes")["gbps"].max().sort_index()


def read_once_gbps(curve: pd.Series, nbytes: pd.Series) -> pd.Series:
    """The curve at each byte count, linear in log bytes between sizes, its end values outside."""
    x = np.log(np.asarray(nbytes, dtype=np.float64))
    y = np.interp(x, np.log(curve.index.to_numpy(np.float64)), curve.to_numpy(np.float64))
    return pd.Series(y, index=nbytes.index)


def table(
    rows: pd.DataFrame, own: str, ceiling: float, read_once: pd.Series | None = None
) -> pd.DataFrame:
    rows = rows[rows["op"] == "attention"].copy()
    rows["group"] = rows["q_heads"] // rows["kv_heads"]
    # schema 5 drops `ragged` from rows of one length (None): those are not ragged
    rows["ragged"] = rows["ragged"].fillna(False).astype(bool)
    # a point where a vendor of the run has no row at all (a run cut short before it) has no
    # fastest vendor yet; one whose vendor row failed (status not ok) has the others'
    present = rows.groupby(POINT)["provider"].agg(set)
    rows = rows[rows["status"] == "ok"]
    wide = rows.pivot_table(index=POINT, columns="provider", values="latency_ms_median")
    own_rows = rows[rows["provider"] == own].set_index(POINT)
    gbps = own_rows["gbps"]
    rungs = own_rungs(rows, own)
    vendors = [c for c in wide.columns if c != own and c not in rungs]
    if vendors:  # points with both; a run of own rows alone keeps them all, with no ratio
        wide = wide[wide[vendors].notna().any(axis=1) & wide[own].notna()]
    vs_best = wide[vendors].min(axis=1) / wide[own] if vendors else wide[own] * float("nan")
    no_ratio = pd.Series("", index=wide.index)
    if vendors:
        run_vendors = set(present.explode()) - {own} - set(rungs)
        missing = ~present.map(run_vendors.issubset).reindex(wide.index).fillna(False)
        no_ratio = no_ratio.mask(missing, "a vendor not measured")
    if "device_uuid" in rows:  # a point timed on two machines has no like-for-like ratio
        machines = rows.groupby(POINT)["device_uuid"].nunique().reindex(wide.index)
        no_ratio = no_ratio.mask(machines > 1, "timed on more than one GPU")
    one_machine = no_ratio != "timed on more than one GPU"
    vs_best = vs_best.where(no_ratio == "")
    out = pd.DataFrame(
        {
            "own_gbps": gbps,
            "ceiling_frac": gbps / ceiling,
            "vs_best": vs_best,
            "best": wide[vendors].idxmin(axis=1).where(vs_best.notna()) if vendors else None,
            "no_ratio": no_ratio,
        }
    )
    for rung in rungs:  # the rung's time over own's: > 1 where what the rung leaves out paid
        out[RUNG + rung] = (wide[rung] / wide[own]).where(one_machine)
    if read_once is not None:
        out["read_once_frac"] = gbps / read_once_gbps(read_once, own_rows["min_bytes"])
    return out[out.index.isin(wide.index)]


def own_rungs(rows: pd.DataFrame, own: str) -> list[str]:
    """The run's other own providers: rungs of own's ladder (own-triton-no-longest-first), which
    are set against own point by point, never counted as a vendor. Rows name their family; a
    table without the column goes by the provider's name."""
    family = rows["family"] if "family" in rows else rows["provider"].str.startswith("own-")
    is_own = family.eq("own") if "family" in rows else family
    return sorted(set(rows.loc[is_own, "provider"]) - {own})


def rungs_by(points: pd.DataFrame) -> pd.DataFrame:
    """Per slice and whole: each rung's time over own's at the points both measured (geomean,
    min, how many at or above 1.00x): what the feature the rung leaves out was worth there."""
    out = []
    for col in [c for c in points.columns if c.startswith(RUNG)]:
        parts = [(k, g[col].dropna()) for k, g in points.groupby(level=SLICE)]
        for key, r in parts + [(("all", "", ""), points[col].dropna())]:
            if r.empty:
                continue
            out.append(
                dict(
                    rung=col[len(RUNG) :],
                    **dict(zip(SLICE, key, strict=True)),
                    points=len(r),
                    rung_over_own=round(geomean(r), 3),
                    min=round(r.min(), 3),
                    max=round(r.max(), 3),
                    **{">=1.00x": int((r >= 1.0).sum())},
                )
            )
    return pd.DataFrame(out)


def keep_batches(rows: pd.DataFrame, batches: list[int] | None) -> pd.DataFrame:
    """The rows of these batch sizes alone (None: all), so that a run of one half of the grid
    (the batch-16 half a call can time) is set against the same half of a whole-grid run."""
    return rows if not batches else rows[rows["batch"].isin(batches)]


def provider_drift(rows: pd.DataFrame, other: pd.DataFrame, own: str) -> pd.DataFrame:
    """Each provider's speed in `rows` over its speed in `other` (latency there / latency here,
    geomean over the points both measured ok; > 1: faster here), whole and, for `own`, by q_len."""

    def latency(r: pd.DataFrame) -> pd.DataFrame:
        r = r[(r["op"] == "attention") & (r["status"] == "ok")].copy()
        r["group"] = r["q_heads"] // r["kv_heads"]
        r["ragged"] = r["ragged"].fillna(False).astype(bool)
        return r.pivot_table(index=POINT, columns="provider", values="latency_ms_median")

    here, there = latency(rows), latency(other)
    out = []
    for provider in sorted(set(here.columns) & set(there.columns)):
        speed = (there[provider] / here[provider]).dropna()
        if speed.empty:
            continue
        parts = [("all", speed)]
        if provider == own:
            parts += [(f"q_len {q}", g) for q, g in speed.groupby(level="q_len")]
        for label, g in parts:
            out.append(
                dict(
                    provider=provider,
                    points=label,
                    n=len(g),
                    speed_here_over_there=round(geomean(g), 3),
                    min=round(g.min(), 3),
                    max=round(g.max(), 3),
                )
            )
    return pd.DataFrame(out)


def summarize(points: pd.DataFrame) -> pd.DataFrame:
    def one(g: pd.DataFrame) -> pd.Series:
        ratios, best = g["vs_best"].dropna(), g["best"].dropna().mode()
        return pd.Series(
            {
                "points": len(g),
                "own_gbps": round(geomean(g["own_gbps"]), 0),
                "of_ceiling": round(geomean(g["ceiling_frac"]), 3),
                ">=90%": int((g["ceiling_frac"] >= 0.9).sum()),
                **(
                    {"of_read_once": round(geomean(g["read_once_frac"]), 3)}
                    if "read_once_frac" in g
                    else {}
                ),
                "vs_fastest_vendor": round(geomean(ratios), 3) if len(ratios) else float("nan"),
                "min": round(ratios.min(), 3),
                ">=1.00x": int((ratios >= 1.0).sum()),
                "fastest_vendor": best.iat[0] if len(best) else "-",
            }
        )

    by_slice = points.groupby(SLICE).apply(one)
    whole = one(points).to_frame(("all", "", "")).T
    whole.index.names = SLICE
    return pd.concat([by_slice, whole])


def ceiling_by(points: pd.DataFrame, keys: list[str] = BAR) -> pd.DataFrame:
    """The ceiling bar per (batch, KV length, ragged): points, geomean fraction of the ceiling
    (and of a read of the same bytes), how many reach 90%, the lowest."""

    def one(g: pd.DataFrame) -> pd.Series:
        frac = g["ceiling_frac"]
        out = {"points": len(g), "of_ceiling": round(geomean(frac), 3)}
        out[">=90%"] = int((frac >= 0.9).sum())
        out["min"] = round(frac.min(), 3)
        if "read_once_frac" in g:
            out["of_read_once"] = round(geomean(g["read_once_frac"]), 3)
        return pd.Series(out, dtype=object)  # counts print as counts

    return points.groupby(level=keys).apply(one)


def behind(points: pd.DataFrame) -> pd.DataFrame:
    """The points where a vendor row was faster, slowest first: own's fraction of the ceiling,
    own over the fastest vendor, and which vendor."""
    slow = points[points["vs_best"] < 1.0].sort_values("vs_best")
    return slow[["ceiling_frac", "vs_best", "best"]].round(3)


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
    ceiling = hbm_read_gbps(a.ceilings or a.run_dir.parent / "ceilings")
    curve = read_once_curve(a.read_once) if a.read_once else None
    rows = keep_batches(read_rows(str(a.run_dir)), a.batch)
    if rows.empty:
        raise SystemExit(f"{a.run_dir}: no rows at batch {a.batch}")
    points = table(rows, a.own, ceiling, curve)
    only = f", batch {', '.join(map(str, a.batch))} only" if a.batch else ""
    print(f"{a.run_dir}{only}: {a.own}, HBM read ceiling {ceiling:,.0f} GB/s (measured)")
    if curve is not None:
        sizes = ", ".join(f"{b / 1e6:,.0f} MB {g:,.0f}" for b, g in curve.items())
        print(f"one cold read pass ({a.read_once}), GB/s by bytes: {sizes}")
    with pd.option_context("display.width", 200, "display.max_rows", 200):
        print(summarize(points).to_string())
        print("the ceiling bar by batch, KV length and raggedness:")
        print(ceiling_by(points).to_string())
        rungs = rungs_by(points)
        if len(rungs):
            print("own against its rungs in this run (the rung's time / own's, same point):")
            print(rungs.to_string(index=False))
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
