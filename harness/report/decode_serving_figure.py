"""Issue 21.3's two bars at once, per point: own-triton's fraction of the HBM read ceiling (x)
against the fastest vendor's time over own's (y), one figure per GPU. A point in the shaded
corner (x >= 0.90, y >= 1.00) meets both; the table beside it (decode_serving.serving_table)
gives the geomeans.

Each point is drawn once, from the latest serving run on that GPU that timed it beside a
vendor (runs ordered by their last row's timestamp): the runs were cut and resumed on different
cards of one model, and a ratio is only ever taken inside one run on one GPU (decode_serving.
table leaves a point timed on two cards without one), so the figure mixes runs, never rows.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from harness.report.data import latest_per_run
from harness.report.decode_serving import OWN, POINT, SERVING_SWEEP, table
from harness.report.figures import FigureFile, new_figure, save, series_colors, slug

BAR_CEILING, BAR_VENDOR = 0.90, 1.00  # issue 21.3: 0.90 of the ceiling, 1.00x the fastest vendor


def latest_points(rows: pd.DataFrame, ceiling: float) -> pd.DataFrame:
    """Per point (decode_serving.POINT), `table`'s columns from the latest run that has a vendor
    ratio there, with that run's id in `run`; rows of one GPU model, any number of runs."""

    def per_run(run_rows: pd.DataFrame) -> pd.DataFrame:
        if OWN not in set(run_rows["provider"]):
            return pd.DataFrame()
        points = table(run_rows, OWN, ceiling)
        return points[points["vs_best"].notna()].reset_index()

    return latest_per_run(rows, per_run, POINT)


def serving_figures(df: pd.DataFrame, hbm_read: dict[str, float], out: Path) -> list[FigureFile]:
    """One scatter per GPU with a measured HBM read ceiling (`hbm_read`, GB/s by device name)
    and a serving run with vendor rows, from `df` (harness.report.data.load's rows)."""
    sweep = df["sweep"] if "sweep" in df else pd.Series(None, index=df.index, dtype=object)
    rows = df[(df["op"] == "attention") & (sweep == SERVING_SWEEP)]
    figures = []
    for device, dev_rows in rows.groupby("device_name", sort=True):
        ceiling = hbm_read.get(str(device))
        if not ceiling:
            continue
        points = latest_points(dev_rows, ceiling)
        if points.empty:
            continue
        figures.append(_figure(str(device), ceiling, points, out))
    return figures


def _figure(device: str, ceiling: float, points: pd.DataFrame, out: Path) -> FigureFile:
    fig = new_figure(6.4, 4.6, right=0.72)
    ax = fig.add_subplot()
    lo_x = min(0.6, points["ceiling_frac"].min() - 0.02)
    hi_x = max(1.02, points["ceiling_frac"].max() + 0.02)
    lo_y = min(0.9, points["vs_best"].min() - 0.02)
    hi_y = max(1.1, points["vs_best"].max() + 0.02)
    ax.axvspan(BAR_CEILING, hi_x, ymin=(BAR_VENDOR - lo_y) / (hi_y - lo_y), color="0.9", lw=0)
    ax.axvline(BAR_CEILING, color="0.4", lw=0.8, ls="--")
    ax.axhline(BAR_VENDOR, color="0.4", lw=0.8, ls="--")
    slices = points.groupby(["batch", "kv_len"], sort=True)
    names = {key: f"batch {int(key[0])}, KV {int(key[1]) // 1024}k" for key in slices.groups}
    colors = series_colors(names.values())
    for key, g in slices:
        name = names[key]
        for ragged, marker in ((False, "o"), (True, "^")):
            part = g[g["ragged"] == ragged]
            label = f"{name}, {'ragged' if ragged else 'equal lengths'}"
            ax.scatter(
                part["ceiling_frac"],
                part["vs_best"],
                s=22,
                marker=marker,
                facecolors=colors[name] if ragged else "none",
                edgecolors=colors[name],
                linewidths=0.9,
                label=label if len(part) else None,
            )
    ax.set_xlim(lo_x, hi_x)
    ax.set_ylim(lo_y, hi_y)
    ax.set_xlabel(f"{OWN} GB/s / measured HBM read ceiling ({ceiling:,.0f} GB/s)")
    ax.set_ylabel(f"fastest vendor time / {OWN} time")
    both = int(((points["ceiling_frac"] >= BAR_CEILING) & (points["vs_best"] >= BAR_VENDOR)).sum())
    ax.set_title(f"{device}: paged decode as served, {both} of {len(points)} points meet both bars")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7, frameon=False)
    runs = ", ".join(sorted(points["run"].unique()))
    caption = (
        f"Issue 21.3's bars per point on the {device}: {OWN}'s fraction of the measured HBM read "
        f"ceiling (x; bar {BAR_CEILING:.2f}) and the fastest vendor row's time over {OWN}'s at "
        f"the same point in the same run on one GPU (y; bar {BAR_VENDOR:.2f}x); the shaded corner "
        f"meets both. Hollow circles: equal lengths; filled triangles: ragged. Each point from "
        f"the latest serving run that timed it beside a vendor: {runs}."
    )
    return save(fig, out, f"decode-serving-{slug(device)}", caption)
