"""Issue 21.3's two bars for a paged-decode serving run: own GB/s as a fraction of the GPU's
measured HBM read ceiling, and own time against the fastest vendor row of the same point, by
(q_len, GQA group, ragged) slice and by (batch, KV length, ragged); another own provider of the
run (a rung) set against own per slice. scripts/decode_serving_table.py prints them for one run;
the report's serving table (serving_table) gives the ceiling bar of every serving run it reads.

A ratio compares rows of one run on one GPU only: a point whose rows come from more than one
GPU (`device_uuid`), or lacks a vendor the run has, gets no ratio (its own GB/s still counts
against the ceiling).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from harness.measure.stats import geomean
from harness.report import read_once as cold_read  # `read_once` names table()'s curve
from harness.report.ceilings import row_ceilings
from harness.report.roofs_table import read_fit
from harness.report.tables import Table
from harness.store import read_rows

SLICE = ["q_len", "group", "ragged"]
POINT = ["q_len", "group", "ragged", "page_size", "batch", "kv_len"]
# the ceiling bar's own axes (issue 21.3: batch >= 16, KV >= 4k), lengths equal or ragged
BAR = ["batch", "kv_len", "ragged"]
RUNG = "rung:"  # a column of `table`: that own rung's time over own's, per point
# a column of `table`: whether that rung's tuner picked own's config at the point (True/False;
# missing where a row has no provider_config). A rung is tuned under its own key, so where the
# two tuners picked different configs the ratio prices the picks as well as the feature
SAME = "same:"
# the tuner's choices a rung leaves alone: tile, stages, warps, kernel, split, merge, page path,
# row split and balanced grid. Not item_order or item_start, which are what the decode's rungs
# take away (session 108, fmha_decode_start-s107h: 11 of 32 points picked differently)
PICK_KEYS = (
    "impl",
    "kernel",
    "BLOCK_N",
    "num_stages",
    "num_warps",
    "split_by",
    "num_splits",
    "reduce",
    "page_path",
    "M_BLOCKS",
    "balanced_ctas",
)
# fixed_and_rate's groups; each is fit per (q_len, page size) slice over its KV lengths
FIT = ["batch", "group", "ragged"]


def hbm_read_gbps(device: str, folders: list[Path]) -> tuple[float, str]:
    """`device`'s measured HBM read ceiling (GB/s) and where it came from, taken as the report and
    `harness goals` take it from the rows under `folders`: the latest ceilings row (a decode
    row that out-read the ceilings run sits above it: report.ceilings.above_roof)."""
    from harness.report.data import load
    from harness.report.peaks import device_peaks, measured_hbm_read

    rows = load([str(f) for f in folders])
    values, sources = measured_hbm_read(device_peaks(rows[rows["device_name"] == device]))
    if device not in values:
        raise SystemExit(f"no hbm_read_gbps ceiling row for {device} under {folders}")
    return values[device], sources.get(device, "")


def read_once_curve(run_dir: Path) -> pd.Series:
    """GB/s of one cold read pass by bytes read: the faster provider at each size."""
    ok = cold_read.one_pass_reads(read_rows(str(run_dir)))
    if ok.empty:
        raise SystemExit(f"no one-pass read rows in {run_dir}")
    return cold_read.curve(ok)


def table(
    rows: pd.DataFrame,
    own: str,
    ceiling: float,
    read_once: pd.Series | None = None,
    card_ceilings: dict[str, float] | None = None,
) -> pd.DataFrame:
    """Own's GB/s, its share of the HBM read ceiling and its speed against the fastest vendor
    row per point of one run. `ceiling` is the GPU's; `card_ceilings` ({card UUID: GB/s}) puts a
    point timed on a card that read its own ceiling against that one (cards differ by up to 3%)."""
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
    no_card = pd.Series(None, index=own_rows.index, dtype=object)  # rows without a UUID column
    uuids = own_rows["device_uuid"] if "device_uuid" in own_rows else no_card
    ceilings = row_ceilings(uuids, card_ceilings or {}, ceiling)
    out = pd.DataFrame(
        {
            "own_gbps": gbps,
            "ceiling_frac": gbps / ceilings,
            "vs_best": vs_best,
            "best": wide[vendors].idxmin(axis=1).where(vs_best.notna()) if vendors else None,
            "no_ratio": no_ratio,
        }
    )
    picks = _picks(rows, [own, *rungs])
    for rung in rungs:  # the rung's time over own's: > 1 where what the rung leaves out paid
        out[RUNG + rung] = (wide[rung] / wide[own]).where(one_machine)
        if picks is not None:
            both = picks[own].notna() & picks[rung].notna()
            out[SAME + rung] = (picks[rung] == picks[own]).where(both).reindex(out.index)
    if read_once is not None:
        out["read_once_frac"] = gbps / cold_read.gbps_at(read_once, own_rows["min_bytes"])
    return out[out.index.isin(wide.index)]


def _picks(rows: pd.DataFrame, providers: list[str]) -> pd.DataFrame | None:
    """Per point (POINT) and provider, the PICK_KEYS values of its provider_config as one
    string, or None where the rows carry no config."""
    if "provider_config" not in rows:
        return None
    mine = rows[rows["provider"].isin(providers)]

    def pick(text: object) -> str | None:
        cfg = json.loads(text) if isinstance(text, str) and text else None
        return json.dumps([cfg.get(k) for k in PICK_KEYS]) if cfg else None

    chosen = mine.assign(pick=mine["provider_config"].map(pick))
    wide = chosen.pivot_table(index=POINT, columns="provider", values="pick", aggfunc="first")
    return wide.reindex(columns=providers)


def own_rungs(rows: pd.DataFrame, own: str) -> list[str]:
    """The run's other own providers: rungs of own's ladder (own-triton-no-longest-first), which
    are set against own point by point, never counted as a vendor. Rows name their family; a
    table without the column goes by the provider's name."""
    family = rows["family"] if "family" in rows else rows["provider"].str.startswith("own-")
    is_own = family.eq("own") if "family" in rows else family
    return sorted(set(rows.loc[is_own, "provider"]) - {own})


def rungs_by(points: pd.DataFrame) -> pd.DataFrame:
    """Per slice and whole: each rung's time over own's at the points both measured (geomean,
    min, how many at or above 1.00x): what the feature the rung leaves out was worth there.
    Where the rows carry provider_config: how many of those points the two tuners picked the
    same config at (`same_config`), and the geomean over those alone (`same_config_ratio`), the
    points that price the feature without the picks."""
    out = []
    for col in [c for c in points.columns if c.startswith(RUNG)]:
        rung = col[len(RUNG) :]
        same = points.get(SAME + rung)
        parts = [(k, g) for k, g in points.groupby(level=SLICE)]
        for key, g in parts + [(("all", "", ""), points)]:
            r = g[col].dropna()
            if r.empty:
                continue
            line = dict(
                rung=rung,
                **dict(zip(SLICE, key, strict=True)),
                points=len(r),
                rung_over_own=round(geomean(r), 3),
                min=round(r.min(), 3),
                max=round(r.max(), 3),
                **{">=1.00x": int((r >= 1.0).sum())},
            )
            if same is not None:
                alike = r[same.reindex(r.index).eq(True)]
                line["same_config"] = len(alike)
                line["same_config_ratio"] = round(geomean(alike), 4) if len(alike) else None
            out.append(line)
    return pd.DataFrame(out)


def own_picks(rows: pd.DataFrame, own: str) -> pd.DataFrame:
    """How own's tuner ran the run's points, counted from provider_config: the kernel (`tl` or
    Gluon), whole or split (by each sequence's length, by the longest, or balanced runs), how
    the splits were merged ("kernel", "fused" or "pdl") and the Gluon item order. A run's
    numbers say what it reached; this says which of the ways it reached them with."""
    mine = rows[(rows["provider"] == own) & (rows["status"] == "ok")]
    if "provider_config" not in mine or mine.empty:
        return pd.DataFrame()
    picks = []
    for text in mine["provider_config"]:
        cfg = json.loads(text) if isinstance(text, str) and text else {}
        split = (cfg.get("num_splits") or 1) > 1 or cfg.get("split_by") == "balanced"
        picks.append(
            dict(
                kernel=cfg.get("impl", "tl"),
                split=f"by {cfg.get('split_by') or 'length'}" if split else "whole",
                merge=(cfg.get("reduce") or "kernel") if split else "-",
                order=cfg.get("item_order") or "-",
            )
        )
    counts = pd.DataFrame(picks).value_counts().rename("points").reset_index()
    order = ["points", "kernel", "split", "merge", "order"]  # ties by name: the same every run
    ascending = [False, True, True, True, True]
    return counts.sort_values(order, ascending=ascending).reset_index(drop=True)


MERGES = ("fused", "pdl")  # the split merges set against the reduction kernel ("kernel")


def merge_margins(decisions: list[dict[str, float]]) -> pd.DataFrame:
    """Per merge, the reduction kernel's time over that merge's across merge decisions, each
    {merge: ms} as one process timed them (provider_config.reduce_timings_ms, or a tune cache's
    decision): geomean, min, max and how often it won (> 1). A row's `reduce` names only the
    winner; these are the margins it won by. Decisions without a "kernel" time are skipped."""
    out = []
    for merge in MERGES:
        r = pd.Series([d["kernel"] / d[merge] for d in decisions if "kernel" in d and merge in d])
        if len(r):
            out.append(
                dict(
                    merge=merge,
                    decisions=len(r),
                    kernel_over_merge=round(geomean(r), 3),
                    min=round(r.min(), 3),
                    max=round(r.max(), 3),
                    won=int((r > 1).sum()),
                )
            )
    return pd.DataFrame(out)


def own_merge_decisions(rows: pd.DataFrame, own: str) -> list[tuple[dict, dict[str, float]]]:
    """Own's merge decisions in a run, each (provider_config, its reduce_timings_ms), from each
    ok row that carries them (rows from before session 72 do not)."""
    mine = rows[(rows["provider"] == own) & (rows["status"] == "ok")]
    if "provider_config" not in mine:
        return []
    cfgs = (json.loads(t) if isinstance(t, str) and t else {} for t in mine["provider_config"])
    return [(c, c["reduce_timings_ms"]) for c in cfgs if c.get("reduce_timings_ms")]


def own_merge_timings(rows: pd.DataFrame, own: str) -> list[dict[str, float]]:
    """Own's merge decisions in a run: each ok row's provider_config.reduce_timings_ms."""
    return [timings for _, timings in own_merge_decisions(rows, own)]


def merge_margins_by_splits(rows: pd.DataFrame, own: str) -> pd.DataFrame:
    """merge_margins per split count (provider_config.num_splits). The count is what a merge's
    work scales with: in session 73's ragged batch-16 half (H200) the fused merge ran 1.005x the
    reduction kernel over the 2-split decisions and 0.951x over the 4-split ones."""
    decisions = own_merge_decisions(rows, own)
    parts = []
    for n in sorted({int(c["num_splits"]) for c, _ in decisions if c.get("num_splits")}):
        table = merge_margins([t for c, t in decisions if c.get("num_splits") == n])
        if len(table):
            table.insert(0, "splits", n)
            parts.append(table)
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()


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


def summarize(points: pd.DataFrame, keys: list[str] = SLICE) -> pd.DataFrame:
    """Per group of `keys` (index levels of `table`'s frame) and whole: points, own GB/s and its
    fraction of the ceiling (geomeans), how many reach 90%, own against the fastest vendor
    (geomean, min, how many at or above 1.00x) and which vendor was fastest most often."""

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

    by_slice = points.groupby(level=keys).apply(one)
    whole = one(points).to_frame(("all",) + ("",) * (len(keys) - 1)).T
    whole.index.names = keys
    return pd.concat([by_slice, whole])


SERVING_SWEEP = "fmha_decode_serving"  # sweeps/fmha_decode_serving.yaml; runs of it only
OWN = "own-triton"


def _same_text(points: pd.DataFrame, rung: str) -> str:
    """' (same config at n: r)' for the serving table's rung column: at how many of the points
    both tuners picked the same config, and the rung's ratio there ('' where the rows carry no
    provider_config)."""
    if SAME + rung not in points:
        return ""
    alike = points[RUNG + rung][points[SAME + rung].eq(True)].dropna()
    ratio = f": {geomean(alike):.3f}x" if len(alike) else ""
    return f" (same config at {len(alike)}{ratio})"


def serving_table(
    df: pd.DataFrame,
    hbm_read: dict[str, float],
    sources: dict[str, str] | None = None,
    card_reads: dict[str, dict[str, tuple[str, float]]] | None = None,
) -> Table:
    """The report's table of issue 21.3's bars: one line per serving run, GPU, batch, KV length
    and raggedness (and the run whole), from `df` (harness.report.data.load's rows, with their
    `sweep`) and each GPU's measured HBM read ceiling (`hbm_read`, GB/s by device name; where
    each came from in `sources`, for the caption). A run whose card read its own ceiling
    (`card_reads`, ceilings.card_hbm_reads') is read against that one, as `harness goals` reads
    it; column `ceiling` says which. A run on a GPU without a measured ceiling is left out and
    named in the caption."""
    title = "Paged decode as served: the HBM read ceiling and the fastest vendor (issue 21.3)"
    sweep = df["sweep"] if "sweep" in df else pd.Series(None, index=df.index, dtype=object)
    rows = df[(df["op"] == "attention") & (sweep == SERVING_SWEEP)]
    lines, no_ceiling = [], set()
    for (device, run), run_rows in rows.groupby(["device_name", "run_id"], sort=True):
        if OWN not in set(run_rows["provider"]):
            continue
        ceiling = hbm_read.get(str(device))
        if ceiling is None:
            no_ceiling.add(str(device))
            continue
        cards = (card_reads or {}).get(str(device), {})
        run_cards = set(run_rows["device_uuid"].dropna()) if "device_uuid" in run_rows else set()
        own_card = {u: cards[u][1] for u in run_cards if u in cards}
        points = table(run_rows, OWN, ceiling, card_ceilings=own_card)
        if own_card and len(own_card) == len(run_cards) == 1:
            ceiling_of = f"{next(iter(own_card.values())):,.0f} GB/s, the run's card"
        elif own_card:
            ceiling_of = (
                f"{len(own_card)} of the run's {len(run_cards)} cards their own; "
                f"the rest {ceiling:,.0f} GB/s, another card"
            )
        else:
            ceiling_of = f"{ceiling:,.0f} GB/s" + (", another card" if cards else "")
        rungs = own_rungs(run_rows, OWN)
        bars = summarize(points, BAR)
        for key, bar in bars.iterrows():
            where = points if key[0] == "all" else points.xs(key, level=BAR, drop_level=False)
            rung_text = "; ".join(
                f"{r}: {geomean(where[RUNG + r].dropna()):.3f}x" + _same_text(where, r)
                for r in rungs
                if where[RUNG + r].notna().any()
            )
            vs = bar["vs_fastest_vendor"]
            no_vendor = pd.isna(vs)  # a run of own providers alone (an A/B of rungs)
            lines.append(
                {
                    "gpu": device,
                    "run": run,
                    "batch": key[0] if key[0] == "all" else str(int(key[0])),
                    "kv_len": key[1] if key[0] == "all" else str(int(key[1])),
                    "ragged": key[2] if key[0] == "all" else ("yes" if key[2] else "no"),
                    "points": int(bar["points"]),
                    "own_gbps": f"{bar['own_gbps']:,.0f}",
                    "of_ceiling": f"{bar['of_ceiling']:.3f}",
                    "ceiling": ceiling_of,
                    ">=90%": int(bar[">=90%"]),
                    "vs_fastest_vendor": "" if no_vendor else f"{vs:.3f}x",
                    "min": "" if no_vendor else f"{bar['min']:.3f}x",
                    ">=1.00x": "" if no_vendor else int(bar[">=1.00x"]),
                    "fastest_vendor": "" if no_vendor else bar["fastest_vendor"],
                    "rung_over_own": rung_text,
                }
            )
    sources = sources or {}
    ceilings = "; ".join(
        f"{d} {v:,.0f} GB/s" + (f", from the {sources[d]}" if d in sources else "")
        for d, v in sorted(hbm_read.items())
    )
    caption = (
        f"Runs of sweeps/{SERVING_SWEEP}.yaml: {OWN}'s GB/s (least bytes over the median) as a "
        f"fraction of the GPU's measured HBM read ceiling ({ceilings or 'none measured'}; "
        "a run whose card read its own is set against that one, column `ceiling`), "
        "geomean per group, and how many points reach 0.90; the fastest vendor row's time "
        f"over {OWN}'s at each point (> 1: own faster; geomean, min, how many at or above "
        "1.00x), only between rows of one run on one GPU. rung_over_own: another own provider "
        "of the run (a rung of the ladder), its time over own's; in brackets the points where "
        "both tuners picked the same config, and the ratio there alone. Issue 21.3's bar: 0.90 of the "
        "ceiling and 1.00x at batch >= 16, KV >= 4k."
        + (
            f" No measured ceiling, left out: {', '.join(sorted(no_ceiling))}."
            if no_ceiling
            else ""
        )
    )
    return Table("decode_serving", title, caption, pd.DataFrame(lines))


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


def _line(mb: np.ndarray, us: np.ndarray) -> tuple[float, float]:
    """Least squares us = fixed + MB / rate: (fixed us, rate GB/s; NaN if it does not rise)."""
    slope, fixed = np.polyfit(mb, us, 1)
    # a slope within rounding of zero is a flat time, not a rate of petabytes per second
    return float(fixed), (1e3 / slope if slope > 1e-6 else float("nan"))


def fixed_and_rate(
    rows: pd.DataFrame, own: str, read_once: pd.Series | None = None
) -> pd.DataFrame:
    """Why own falls short of the ceiling, split in two: per (batch, GQA group, ragged), own's
    time over each (q_len, page size) slice's KV lengths fit as fixed + bytes / rate (the median
    over the slices; a slice needs two byte counts), beside one cold read's fit
    (roofs_table.read_fit) over the read curve's sizes that bracket the same bytes (three at
    least). A rate near the read's with a fixed cost above the read's says the streaming reaches
    the ceiling and the launch, ramp, tail and merge are what is short. No kernel's fixed cost is below zero, so where the read's alone keeps a point under
    90% of the ceiling the bar there is out of reach (H200, session 72's batch 16: 134 MB is 29 us
    at 4,628 GB/s, and a cold read's 5.1 us fixed cost leaves it at 0.85).
    """
    own_rows = rows[(rows["op"] == "attention") & (rows["status"] == "ok")]
    own_rows = own_rows[own_rows["provider"] == own].copy()
    if own_rows.empty:
        return pd.DataFrame()
    own_rows["group"] = own_rows["q_heads"] // own_rows["kv_heads"]
    own_rows["ragged"] = own_rows["ragged"].fillna(False).astype(bool)
    own_rows["mb"] = own_rows["min_bytes"].astype(float) / 1e6
    own_rows["us"] = own_rows["latency_ms_median"].astype(float) * 1e3
    fits = []
    for key, g in own_rows.groupby([*FIT, "q_len", "page_size"]):
        g = g[np.isfinite(g["us"]) & np.isfinite(g["mb"])]
        if g["mb"].nunique() < 2:
            continue
        fixed, rate = _line(g["mb"].to_numpy(), g["us"].to_numpy())
        if np.isfinite(rate):  # a time that does not rise with bytes has no rate to show
            where = dict(zip(FIT, key[:3], strict=True))
            fits.append(where | dict(fixed_us=fixed, gbps=rate, lo=g["mb"].min(), hi=g["mb"].max()))
    if not fits:
        return pd.DataFrame()
    out = []
    for key, g in pd.DataFrame(fits).groupby(FIT):
        line = dict(zip(FIT, key, strict=True), slices=len(g))
        line |= dict(
            own_fixed_us=round(g["fixed_us"].median(), 1), own_gbps=round(g["gbps"].median())
        )
        if read_once is not None:  # the read curve's fit over the sizes bracketing these bytes
            mb = read_once.index.to_numpy(np.float64) / 1e6
            lo = mb[mb <= g["lo"].min()].max(initial=mb.min())
            hi = mb[mb >= g["hi"].max()].min(initial=mb.max())
            fit = read_fit(read_once[(mb >= lo) & (mb <= hi)], min_bytes=0)
            if fit is not None:
                line |= dict(read_fixed_us=round(fit.fixed_us, 1), read_gbps=round(fit.gbps))
        out.append(line)
    return pd.DataFrame(out)


def behind(points: pd.DataFrame) -> pd.DataFrame:
    """The points where a vendor row was faster, slowest first: own's fraction of the ceiling,
    own over the fastest vendor, and which vendor."""
    slow = points[points["vs_best"] < 1.0].sort_values("vs_best")
    return slow[["ceiling_frac", "vs_best", "best"]].round(3)
