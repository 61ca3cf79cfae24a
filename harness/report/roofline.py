"""Roofline per device and dtype: attainable TFLOP/s = min(peak, intensity x bandwidth), the
measured roof solid, the datasheet dashed, one point per GEMM / attention point (its latest ok
row).

The measured roof is the ceilings run's (report.ceilings.measured_ceilings), and a point above
it is a row faster than that run (a short GEMM on a card holding a higher clock, or a shape the
run did not probe): the caption
counts them and gives the fastest's share of the roof, rather than raising the roof to it. Headline rooflines leave out the ladder rungs (own-triton-no-tma
...: each gives up a feature on purpose), drawn in rung rooflines of their own, and the smoke
and CPU rows, which the report sets aside before it gets here. Past SERIES_MAX providers the
least measured fold into one grey "others" series, named in the caption.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.lines import Line2D

from harness.report.data import IDENTITY, SPEED_OPS, device_of, is_speed, ladder_rungs, latest
from harness.report.figures import (
    OP_MARKERS,
    OTHERS_COLOR,
    PROVIDER_COLOR_INDEX,
    FigureFile,
    log_axes,
    new_figure,
    save,
    series_colors,
    slug,
    top_series,
)
from harness.report.peaks import Peaks

_ROOF_STYLE: dict[str, dict[str, Any]] = {
    "measured": {"ls": "-", "color": "black", "lw": 1.6},
    "datasheet": {"ls": "--", "color": "0.45", "lw": 1.2},
}
_OP_NAMES = {"gemm": "GEMM", "attention": "attention"}


def plottable(df: pd.DataFrame) -> pd.DataFrame:
    """ok GEMM / attention rows with a positive speed and intensity (what a roofline plots)."""
    keep = is_speed(df) & df["op"].isin(SPEED_OPS)
    keep &= (df["tflops"] > 0) & (df["intensity_flop_per_byte"] > 0)
    return df[keep]


def points(df: pd.DataFrame) -> pd.DataFrame:
    """The latest plottable row of each point and device: an A/A pair or a re-measured point is
    one marker, as it is one line of the tables."""
    rows = plottable(df)
    return rows if rows.empty else latest(rows, [*IDENTITY, "device_name"])


def _short(origin: str) -> str:
    return origin.split(" (")[0]


def _draw_roofs(ax, rows: pd.DataFrame, peaks: Peaks | None, dtype: str) -> list[str]:
    """The measured and datasheet roofs (and L2 roofs) over the rows' intensity range; returns
    caption phrases, one per roof drawn."""
    lo = float(rows["intensity_flop_per_byte"].min()) / 2
    hi = float(rows["intensity_flop_per_byte"].max()) * 2
    drawn: list[tuple[str, float, float]] = []  # source, peak, HBM bandwidth
    for source in ("measured", "datasheet"):
        peak = peaks.compute(dtype, source) if peaks else None
        bw = peaks.bandwidth(source) if peaks else None
        if peaks and peak and bw:
            hi = max(hi, 4 * peak * 1e3 / bw)  # show the ridge point and some of the flat roof
            drawn.append((source, peak, bw))
    x = np.geomspace(max(lo, 1e-3), hi, 256)
    phrases = []
    for source, peak, bw in drawn:
        assert peaks is not None  # a roof is drawn only from peaks
        o_peak, o_bw = peaks.origin(dtype, source), peaks.origin(None, source)
        style: dict[str, Any] = dict(_ROOF_STYLE[source])
        if source == "measured":
            label = (
                f"measured: {peak:.4g} TFLOP/s ({_short(o_peak)}), "
                f"HBM {bw:.0f} GB/s ({_short(o_bw)})"
            )
            phrases.append(
                f"solid: the measured roof, {peak:.4g} TFLOP/s from the {o_peak} "
                f"and HBM {bw:.0f} GB/s from the {o_bw}"
            )
        else:
            label = f"{o_peak}: {peak:.4g} TFLOP/s, HBM {bw:.0f} GB/s"
            phrases.append(f"dashed: the {o_peak} roof, {peak:.4g} TFLOP/s and HBM {bw:.0f} GB/s")
        ax.plot(x, np.minimum(peak, x * bw / 1e3), label=label, zorder=2, **style)  # GFLOP/s
        l2 = peaks.l2_bandwidth(source)
        if l2:
            style.update(ls=":", lw=1.2)
            ax.plot(
                x,
                np.minimum(peak, x * l2 / 1e3),
                zorder=2,
                **style,
                label=f"{source}: L2 {l2:.0f} GB/s",
            )
            phrases.append(f"dotted: the {source} L2 bandwidth roof ({l2:.0f} GB/s)")
    if not drawn:
        phrases.append("no roof: neither measured ceilings nor a datasheet entry for this device")
    elif not any(s == "measured" for s, _, _ in drawn):
        phrases.append("no measured roof (run `harness ceilings` on this GPU to add it)")
    return phrases


def roofline_figure(
    rows: pd.DataFrame,
    peaks: Peaks | None,
    dtype: str,
    device: str,
    what: str = "roofline",
    left_out: str = "",
):
    """The figure for one device and dtype (`rows`: one row per point), and a caption that says
    what is drawn: the roofs and where each came from, the points, the series, what is left out."""
    fig = new_figure(9.0, 4.8, left=0.08, right=0.7, top=0.93, bottom=0.11)
    ax = fig.add_subplot()
    roofs = _draw_roofs(ax, rows, peaks, dtype)
    counts = rows.groupby("provider").size().to_dict()
    family = rows.drop_duplicates("provider").set_index("provider")["family"]
    # The own kernels are what the figure is about: never folded into "others" for having
    # fewer points than a vendor library (a new kernel measured on one sweep).
    own = frozenset(p for p in counts if family.get(p) == "own")
    # then the vendor libraries the own kernels are held to (the H100's HBM roof is a cuDNN
    # decode row: folded into grey, the point that sets the roof could not be told apart)
    references = frozenset(p for p in counts if PROVIDER_COLOR_INDEX.get(p) in (2, 3))
    shown, others = top_series(counts, prefer=own, then=references)
    order = sorted(shown, key=lambda p: (family.get(p) != "own", p))  # own kernels first
    colors = series_colors(order)
    series = rows["provider"].where(rows["provider"].isin(shown), "others")
    for (name, op), g in rows.groupby([series, "op"], sort=True):
        ax.scatter(
            g["intensity_flop_per_byte"],
            g["tflops"],
            s=22,
            alpha=0.85,
            zorder=3,
            color=colors.get(name, OTHERS_COLOR),
            marker=OP_MARKERS.get(op, "s"),
            edgecolors="none",
        )
    handles, _ = ax.get_legend_handles_labels()  # the roofs
    marker: dict[str, Any] = {"ls": "", "ms": 6}
    handles += [
        Line2D([], [], marker="s", color=colors[p], label=f"{p} ({family.get(p)})", **marker)
        for p in order
    ]
    if others:
        handles.append(
            Line2D(
                [],
                [],
                marker="s",
                color=OTHERS_COLOR,
                **marker,
                label=f"others ({len(others)} providers)",
            )
        )
    ops = sorted(set(rows["op"]))
    handles += [
        Line2D(
            [],
            [],
            marker=OP_MARKERS.get(op, "s"),
            color="0.2",
            **marker,
            label=_OP_NAMES.get(op, op),
        )
        for op in ops
    ]
    log_axes(ax)
    ax.set_xlabel("arithmetic intensity (FLOP / byte of minimum traffic)")
    ax.set_ylabel("TFLOP/s")
    ax.set_title(f"{device}: {dtype} {what} ({len(rows)} points)")
    ax.legend(
        handles=handles, loc="center left", bbox_to_anchor=(1.01, 0.5), fontsize=7, frameon=False
    )
    marks = ", ".join(f"{_OP_NAMES.get(op, op)} {OP_MARKERS.get(op, 's')}" for op in ops)
    folded = f"; grey 'others': {', '.join(others)}" if others else ""
    roofs_text = "; ".join(roofs)
    caption = (
        f"{device}, {dtype} {what}: {len(rows)} points, the latest ok row of each "
        f"({marks}), one colour per provider ({len(counts)}){folded}. "
        f"{roofs_text[0].upper()}{roofs_text[1:]}.{_above_text(rows, peaks, dtype)} {left_out} "
        "Rows that are not ok are listed at the end, never plotted."
    )
    return fig, caption.replace("  ", " ")


def _above_text(rows: pd.DataFrame, peaks: Peaks | None, dtype: str) -> str:
    """' N points sit above the measured roof ...' (or ''): rows faster than the ceilings run,
    which the roof is not raised to (report.ceilings.measured_ceilings says why)."""
    peak = peaks.compute(dtype, "measured") if peaks else None
    bw = peaks.bandwidth("measured") if peaks else None
    if not peak or not bw or rows.empty:
        return ""
    roof = np.minimum(peak, rows["intensity_flop_per_byte"] * bw / 1e3)
    share = rows["tflops"] / roof
    above = share[share > 1.0]
    if above.empty:
        return ""
    return (
        f" {len(above)} point{'s' if len(above) != 1 else ''} sit above the measured roof (up to "
        f"{above.max():.3f}x): rows faster than the ceilings run (a clock state or shape it did "
        "not probe); the roof is not raised to them."
    )


def _groups(rows: pd.DataFrame):
    for (name, kind, dtype), g in rows.groupby(
        ["device_name", "device_type", "dtype"], dropna=False, sort=True
    ):
        yield name, str(dtype), device_of({"device_name": name, "device_type": kind}), g


def _count(frame: pd.DataFrame, name: str, dtype: str) -> int:
    if frame.empty:
        return 0
    return int(((frame["device_name"] == name) & (frame["dtype"] == dtype)).sum())


def roofline_figures(
    df: pd.DataFrame,
    peaks: dict[str, Peaks],
    out_dir: Path,
    set_aside: pd.DataFrame | None = None,
) -> list[FigureFile]:
    """One headline roofline per (device, dtype) with a point other than a ladder rung;
    `set_aside` (the smoke and CPU rows the report keeps out) is only counted in the caption."""
    rows = points(df)
    rungs = ladder_rungs(rows.loc[rows["family"] == "own", "provider"])
    aside = plottable(set_aside) if set_aside is not None else rows.iloc[0:0]
    files = []
    for name, dtype, device, g in _groups(rows):
        rung_rows = g[g["provider"].isin(rungs)]
        g = g[~g["provider"].isin(rungs)]
        if g.empty:
            continue
        left = []
        if len(rung_rows):
            left.append(
                f"{len(rung_rows)} points of {rung_rows['provider'].nunique()} ladder "
                "rungs (their own rooflines, section Ladder)"
            )
        if n := _count(aside, name, dtype):
            left.append(f"{n} smoke or CPU rows (section Smoke and CPU rows)")
        left_out = f"Not drawn: {'; '.join(left)}." if left else ""
        fig, caption = roofline_figure(g, peaks.get(name), dtype, device, left_out=left_out)
        files.append(save(fig, out_dir, f"roofline-{slug(device)}-{slug(dtype)}", caption))
    return files


def rung_roofline_figures(
    df: pd.DataFrame, peaks: dict[str, Peaks], out_dir: Path
) -> list[FigureFile]:
    """Per (device, dtype) with ladder-rung points: the rungs and, on the problems a rung
    measured, the full kernels they strip down, on the same roofs as the headline figure."""
    rows = points(df)
    own = set(rows.loc[rows["family"] == "own", "provider"])
    rungs = ladder_rungs(own)
    bases = {b for b in own if any(r.startswith(b + "-") for r in rungs)}
    rung_rows = rows[rows["provider"].isin(rungs)]
    laddered = set(zip(rung_rows["device_name"], rung_rows["problem"], strict=True))
    pairs = pd.Series(list(zip(rows["device_name"], rows["problem"], strict=True)), rows.index)
    on_ladder = pairs.isin(laddered)
    files = []
    for name, dtype, device, g in _groups(rows[rows["provider"].isin(rungs | bases) & on_ladder]):
        if not g["provider"].isin(rungs).any():
            continue
        note = (
            f"Only the problems a rung measured; the full kernels' other points and the "
            f"vendor libraries are in the headline {dtype} roofline."
        )
        fig, caption = roofline_figure(g, peaks.get(name), dtype, device, "ladder rungs", note)
        stem = f"roofline-rungs-{slug(device)}-{slug(dtype)}"
        files.append(save(fig, out_dir, stem, caption))
    return files


def set_aside_figures(
    aside: pd.DataFrame, peaks: dict[str, Peaks], out_dir: Path
) -> list[FigureFile]:
    """Rooflines of the smoke and CPU rows (data.is_smoke), for their own section only: on a
    CPU-only build (the README's main job) they are the report's only figures."""
    rows = points(aside)
    files = []
    note = (
        "Smoke and CPU rows only: CPU-sized points that time launch overhead or a CPU, not a "
        "GPU kernel; no headline figure or table shows them."
    )
    for name, dtype, device, g in _groups(rows):
        fig, caption = roofline_figure(g, peaks.get(name), dtype, device, "smoke rows", note)
        files.append(save(fig, out_dir, f"smoke-{slug(device)}-{slug(dtype)}", caption))
    return files
