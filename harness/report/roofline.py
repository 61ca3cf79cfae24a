"""Roofline per device and dtype: attainable TFLOP/s = min(peak, intensity x bandwidth), the
measured ceilings solid, the datasheet dashed, one point per ok GEMM / attention row."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from harness.report.data import SPEED_OPS, device_of, is_speed
from harness.report.figures import OP_MARKERS, FigureFile, log_axes, new_figure, save, slug
from harness.report.peaks import Peaks

_ROOF_STYLE = {
    "measured": {"ls": "-", "color": "black", "lw": 1.6},
    "datasheet": {"ls": "--", "color": "0.45", "lw": 1.2},
}


def plottable(df: pd.DataFrame) -> pd.DataFrame:
    """ok GEMM / attention rows with a positive speed and intensity (what a roofline plots)."""
    keep = is_speed(df) & df["op"].isin(SPEED_OPS)
    keep &= (df["tflops"] > 0) & (df["intensity_flop_per_byte"] > 0)
    return df[keep]


def _roof(ax, x: np.ndarray, peak: float, bw: float, source: str, what: str = "HBM") -> None:
    y = np.minimum(peak, x * bw / 1e3)  # FLOP/B x GB/s = GFLOP/s
    style = dict(_ROOF_STYLE[source])
    if what == "L2":
        style.update(ls=":", lw=1.2)
    label = f"{source}: {peak:.4g} TFLOP/s, {what} {bw:.0f} GB/s"
    ax.plot(x, y, label=label, zorder=2, **style)


def roofline_figure(
    rows: pd.DataFrame, peaks: Peaks | None, dtype: str, device: str, colors: dict[str, str]
):
    """The figure for one device and dtype, and a caption stating which roofs it draws."""
    fig = new_figure(9.0, 4.8, left=0.08, right=0.7, top=0.93, bottom=0.11)
    ax = fig.add_subplot()
    lo = float(rows["intensity_flop_per_byte"].min()) / 2
    hi = float(rows["intensity_flop_per_byte"].max()) * 2
    roofs_at: list[tuple[str, float, float, float | None]] = []  # source, peak, HBM bw, L2 bw
    for source in ("measured", "datasheet"):
        peak = peaks.compute(dtype, source) if peaks else None
        bw = peaks.bandwidth(source) if peaks else None
        if peaks and peak and bw:
            hi = max(hi, 4 * peak * 1e3 / bw)  # show the ridge point and some of the flat roof
            roofs_at.append((source, peak, bw, peaks.l2_bandwidth(source)))
    drawn = [source for source, *_ in roofs_at]
    x = np.geomspace(max(lo, 1e-3), hi, 256)
    for source, peak, bw, l2 in roofs_at:
        _roof(ax, x, peak, bw, source)
        if l2:
            _roof(ax, x, peak, l2, source, "L2")
    for (provider, op), g in rows.groupby(["provider", "op"], sort=True):
        ax.scatter(
            g["intensity_flop_per_byte"],
            g["tflops"],
            s=22,
            alpha=0.85,
            zorder=3,
            color=colors.get(provider, "k"),
            marker=OP_MARKERS.get(op, "s"),
            label=f"{provider} ({op})",
            edgecolors="none",
        )
    log_axes(ax)
    ax.set_xlabel("arithmetic intensity (FLOP / byte of minimum traffic)")
    ax.set_ylabel("TFLOP/s")
    ax.set_title(f"{device}: {dtype} roofline ({len(rows)} rows)")
    ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), fontsize=7, frameon=False)
    if "measured" in drawn and "datasheet" in drawn:
        roofs = "measured ceilings solid, datasheet dashed"
    elif drawn == ["datasheet"]:
        roofs = (
            "datasheet roof dashed; no measured ceilings in these rows "
            "(run `harness ceilings` on this GPU to add the solid roof)"
        )
    elif drawn == ["measured"]:
        roofs = "measured ceilings solid; no datasheet entry for this device"
    else:
        roofs = "no roof: neither measured ceilings nor a datasheet entry for this device"
    if any(l2 for *_, l2 in roofs_at):
        roofs += "; dotted: the L2 bandwidth roof"
    caption = (
        f"{device}, {dtype}: {roofs}. One point per ok row (GEMM o, attention ^), "
        "coloured by provider; rows that are not ok are listed below, never plotted."
    )
    return fig, caption


def roofline_figures(
    df: pd.DataFrame, peaks: dict[str, Peaks], out_dir: Path, colors: dict[str, str]
) -> list[FigureFile]:
    """One roofline per (device, dtype) present among the plottable rows."""
    rows = plottable(df)
    files = []
    for (name, kind, dtype), g in rows.groupby(
        ["device_name", "device_type", "dtype"], dropna=False, sort=True
    ):
        device = device_of({"device_name": name, "device_type": kind})
        fig, caption = roofline_figure(g, peaks.get(name), str(dtype), device, colors)
        files.append(save(fig, out_dir, f"roofline-{slug(device)}-{slug(str(dtype))}", caption))
    return files
