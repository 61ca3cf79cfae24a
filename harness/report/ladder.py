"""Ladder bar charts: on one problem, every rung of an own kernel (each removes one hardware
feature) beside the vendor libraries, as TFLOP/s with the speedup over the vendor baseline."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from harness.report.data import IDENTITY, device_of, is_speed, ladder_rungs, latest
from harness.report.figures import (
    OTHERS_COLOR,
    FigureFile,
    new_figure,
    save,
    series_colors,
    slug,
    top_series,
)

PANELS_PER_FIGURE = 6
# A panel is a ladder: at least this many rungs of one own kernel on the problem in one run. A
# run that set one rung beside its own kernel (an A/B over a sweep's points: 659 of the 680
# panels of the H200 and H100 rows in session 79, 114 figures) is the rung-worth table's, which
# gives each such run's ratio over all its points.
MIN_RUNGS = 2
SINGLE_RUNG_NOTE = (
    "A run that set a single rung beside its own kernel is no panel here: the table of what "
    "each rung was worth gives that rung's ratio over all of the run's points."
)
_VENDOR_COLOR = "0.78"  # vendor bars: light grey and hatched, named on the axis
_TINY = 0.04  # a bar under this fraction of the longest also says its TFLOP/s in its label


def ladder_problems(rows: pd.DataFrame) -> pd.DataFrame:
    """ok rows (latest per point) of problems that an own kernel and at least one of its rungs
    measured in one run ('own-triton' and 'own-triton-no-tma'), with that run's rows only: a
    panel's bars share a run, so their ratios do. Two different own kernels on one problem
    (own-triton beside own-cutlass in a GEMM sweep) are not a ladder: the tables and rooflines
    compare them."""
    speed = rows[is_speed(rows) & rows["op"].isin(["gemm", "attention"])]
    if speed.empty:  # e.g. a run of collectives only: no ladder
        return speed
    ok = latest(speed, [*IDENTITY, "device_name", "run_id"])
    keys = ["device_name", "op", "problem", "run_id"]
    own = ok[ok["family"] == "own"].groupby(keys)["provider"]
    has_rung = own.agg(lambda names: bool(ladder_rungs(set(names))))
    keep = set(has_rung[has_rung].index)
    mask = [k in keep for k in zip(*(ok[c] for c in keys), strict=True)]
    return ok[mask]


def ladder_panels(rows: pd.DataFrame) -> pd.DataFrame:
    """ladder_problems' rows of the (device, problem, run) that measured at least MIN_RUNGS
    rungs, from the latest such run of each (device, problem) only: an earlier run of the same
    ladder measured older code (the H200's fa3-ladder-r4 had own-cutlass-fa3 at 0.93x cuDNN
    where fa3-ladder-s63b has 1.00x), and two panels of one problem would contradict each other.
    The rung-worth table keeps every run."""
    lad = ladder_problems(rows)
    if lad.empty:
        return lad
    keys = ["device_name", "op", "problem", "run_id"]
    own = lad[lad["family"] == "own"].groupby(keys)["provider"]
    rungs = own.agg(lambda names: len(ladder_rungs(set(names))))
    keep = set(rungs[rungs >= MIN_RUNGS].index)
    lad = lad[[k in keep for k in zip(*(lad[c] for c in keys), strict=True)]]
    if lad.empty or "timestamp" not in lad:
        return lad
    last = lad.groupby(keys)["timestamp"].max().reset_index()
    newest = last.sort_values("timestamp").groupby(keys[:-1]).tail(1)
    chosen = set(zip(*(newest[c] for c in keys), strict=True))
    return lad[[k in chosen for k in zip(*(lad[c] for c in keys), strict=True)]]


def speedup_text(speedup: float) -> str:
    """'0.95x', and two significant digits below 0.1 ('0.0043x', never '0.00x')."""
    return f"{speedup:.2f}x" if speedup >= 0.095 else f"{speedup:.2g}x"


def _panel(ax, g: pd.DataFrame, colors: dict[str, tuple]) -> None:
    g = g.sort_values("tflops")
    vendor = g[g["family"] == "vendor"]
    base = vendor.loc[vendor["latency_ms_median"].idxmin()] if len(vendor) else None
    bar_colors = [
        _VENDOR_COLOR if f == "vendor" else colors.get(p, OTHERS_COLOR)
        for p, f in zip(g["provider"], g["family"], strict=True)
    ]
    bars = ax.barh(g["provider"], g["tflops"], color=bar_colors)
    top = float(g["tflops"].max())
    for bar, r in zip(bars, g.to_dict("records"), strict=True):
        if r["family"] == "vendor":
            bar.set_hatch("//")
            bar.set_edgecolor("white")
        if base is not None:
            text = speedup_text(base["latency_ms_median"] / r["latency_ms_median"])
            if r["tflops"] < _TINY * top:
                text += f" ({r['tflops']:.2g} TFLOP/s)"
        else:
            text = f"{r['tflops']:.3g} TFLOP/s"
        ax.text(
            bar.get_width(), bar.get_y() + bar.get_height() / 2, f" {text}", va="center", fontsize=7
        )
    ax.set_xlim(0, top * 1.35)  # room for the labels right of the longest bar
    title = g["problem"].iloc[0]
    run = f"run {g['run_id'].iloc[0]}; " if "run_id" in g else ""
    if base is not None:
        title += f"\n({run}x: speedup over {base['provider']})"
    else:
        title += f"\n({run}no vendor row: TFLOP/s, no speedup)"
    ax.set_title(title, fontsize=8)
    ax.set_xlabel("TFLOP/s")
    ax.tick_params(axis="y", labelsize=7)


def ladder_figures(rows: pd.DataFrame, out_dir: Path) -> list[FigureFile]:
    """Per device, the ladder problems (MIN_RUNGS rungs or more in one run) in figures of up to
    PANELS_PER_FIGURE bar charts."""
    lad = ladder_panels(rows)
    files = []
    for (name, kind), dev in lad.groupby(["device_name", "device_type"], sort=True):
        device = device_of({"device_name": name, "device_type": kind})
        problems = list(dev.groupby(["op", "problem", "run_id"], sort=True))
        # one colour per own provider across the device's ladder figures
        shown, folded = top_series(dev[dev["family"] == "own"].groupby("provider").size().to_dict())
        colors = series_colors(shown)
        for start in range(0, len(problems), PANELS_PER_FIGURE):
            chunk = problems[start : start + PANELS_PER_FIGURE]
            ncols = 2 if len(chunk) > 1 else 1
            nrows = math.ceil(len(chunk) / ncols)
            # constrained layout: the provider names set the left margin of each panel
            fig = new_figure(5.6 * ncols, 2.5 * nrows + 0.5, constrained=True)
            axes = fig.subplots(nrows, ncols, squeeze=False).ravel()
            for ax, (_, g) in zip(axes, chunk, strict=False):
                _panel(ax, g, colors)
            for ax in axes[len(chunk) :]:
                ax.set_visible(False)
            fig.suptitle(f"{device}: ladder (grey, hatched: vendor libraries)")
            part = f"-{start // PANELS_PER_FIGURE + 1}" if len(problems) > PANELS_PER_FIGURE else ""
            names = "; ".join(f"{problem} ({run})" for (_, problem, run), _ in chunk)
            here = {p for _, g in chunk for p in g["provider"]}
            grey = [p for p in folded if p in here]
            others = f" Own providers in grey: {', '.join(grey)}." if grey else ""
            caption = (
                f"{device}: each own-kernel rung (coloured) and the vendor libraries (grey, "
                f"hatched) on {names} (run in brackets; each panel's bars come from that one "
                "run, the latest run of that problem with its ladder): TFLOP/s of the latest "
                "ok row per provider in the run; the "
                "label is the speedup of median latency over the fastest vendor row "
                "(two significant digits below 0.1x; TFLOP/s where no vendor row "
                f"exists).{others}"
            )
            files.append(save(fig, out_dir, f"ladder-{slug(device)}{part}", caption))
    return files
