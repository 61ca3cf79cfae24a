"""Ladder bar charts: on one problem, every rung of an own kernel (each removes one hardware
feature) beside the vendor libraries, as TFLOP/s with the speedup over the vendor baseline."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from harness.report.data import IDENTITY, device_of, is_speed, latest
from harness.report.figures import FigureFile, new_figure, save, slug
from harness.report.reference import fastest

PANELS_PER_FIGURE = 6


def ladder_problems(rows: pd.DataFrame) -> pd.DataFrame:
    """ok rows (latest per point) of problems that at least two own providers measured."""
    speed = rows[is_speed(rows) & rows["op"].isin(["gemm", "attention"])]
    if speed.empty:  # e.g. a run of collectives only: no ladder
        return speed
    ok = latest(speed, [*IDENTITY, "device_name"])
    own = ok[ok["family"] == "own"].groupby(["device_name", "op", "problem"])["provider"]
    rungs = own.nunique()
    keep = set(rungs[rungs >= 2].index)
    mask = [k in keep for k in zip(ok["device_name"], ok["op"], ok["problem"], strict=True)]
    return ok[mask]


def _panel(ax, g: pd.DataFrame, colors: dict[str, str]) -> None:
    g = g.sort_values("tflops")
    base = fastest(g.to_dict("records"))  # the point's reference: fastest ok vendor row
    bars = ax.barh(
        g["provider"], g["tflops"], color=[colors.get(p, "0.5") for p in g["provider"]], hatch=None
    )
    for bar, fam in zip(bars, g["family"], strict=True):
        if fam == "vendor":
            bar.set_hatch("//")
            bar.set_edgecolor("white")
    if base is not None:
        for bar, ms in zip(bars, g["latency_ms_median"], strict=True):
            speedup = base["latency_ms_median"] / ms
            ax.text(
                bar.get_width(),
                bar.get_y() + bar.get_height() / 2,
                f" {speedup:.2f}x",
                va="center",
                fontsize=7,
            )
        ax.set_xlim(0, g["tflops"].max() * 1.25)
    title = g["problem"].iloc[0]
    if base is not None:
        title += f"\n(x: speedup over {base['provider']})"
    ax.set_title(title, fontsize=8)
    ax.set_xlabel("TFLOP/s")
    ax.tick_params(axis="y", labelsize=7)


def ladder_figures(rows: pd.DataFrame, out_dir: Path, colors: dict[str, str]) -> list[FigureFile]:
    """Per device, the ladder problems in figures of up to PANELS_PER_FIGURE bar charts."""
    lad = ladder_problems(rows)
    files = []
    for (name, kind), dev in lad.groupby(["device_name", "device_type"], sort=True):
        device = device_of({"device_name": name, "device_type": kind})
        problems = list(dev.groupby(["op", "problem"], sort=True))
        for start in range(0, len(problems), PANELS_PER_FIGURE):
            chunk = problems[start : start + PANELS_PER_FIGURE]
            ncols = 2 if len(chunk) > 1 else 1
            nrows = math.ceil(len(chunk) / ncols)
            height = 2.4 * nrows + 0.6  # inches: 2.4 per row of panels, 0.6 for the title
            fig = new_figure(
                5.4 * ncols,
                height,
                left=0.25 / ncols,
                right=0.96,
                bottom=0.45 / height,
                top=1 - 0.85 / height,
                wspace=0.5,
                hspace=0.65,
            )
            axes = fig.subplots(nrows, ncols, squeeze=False).ravel()
            for ax, (_, g) in zip(axes, chunk, strict=False):
                _panel(ax, g, colors)
            for ax in axes[len(chunk) :]:
                ax.set_visible(False)
            fig.suptitle(f"{device}: ladder (hatched: vendor libraries)", y=1 - 0.15 / height)
            part = f"-{start // PANELS_PER_FIGURE + 1}" if len(problems) > PANELS_PER_FIGURE else ""
            caption = (
                f"{device}: each own-kernel rung and the vendor libraries on the same "
                "problem (latest ok row per provider); the label is the speedup of "
                "median latency over the fastest vendor row."
            )
            files.append(save(fig, out_dir, f"ladder-{slug(device)}{part}", caption))
    return files
