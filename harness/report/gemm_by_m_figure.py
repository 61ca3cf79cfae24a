"""Issue 20.1 at a glance: each own GEMM's speedup over the fastest vendor row (cuBLAS or
cuBLASLt) at every gemm_llama shape, against M, one figure per GPU. The Llama projections share
N and K across M, so what changes along the axis is how many tiles fill the SMs: decode (M <= 64)
is weight-bandwidth-bound, the mid band (M 128-1024) is where partial waves cost most, large M is
compute-bound at the power cap.

Each (shape, own provider) is drawn once, from the latest gemm_llama run that timed it beside a
vendor on the same card (runs ordered by their last row's timestamp; a ratio is never taken
across two cards), so the figure can mix runs but never rows of two runs.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from harness.measure.stats import geomean
from harness.report.data import latest_per_run
from harness.report.figures import FigureFile, new_figure, save, series_colors, slug

SWEEP = "gemm_llama"
SHAPE = ["m", "n", "k", "layout"]
OWN = ("own-triton", "own-cutlass")  # the headline own GEMMs (rungs and fixed configs left out)
DTYPE = "bf16"


def run_ratios(run_rows: pd.DataFrame) -> pd.DataFrame:
    """One line per (shape, own provider) of one run: the fastest ok vendor row's median over
    the own row's (`speedup`), and which vendor; shapes whose rows span two cards have none."""
    ok = run_rows[(run_rows["status"] == "ok") & run_rows["latency_ms_median"].notna()]
    lines = []
    for shape, g in ok.groupby(SHAPE, sort=True):
        vendors = g[g["family"] == "vendor"]
        if vendors.empty:
            continue
        ref = vendors.sort_values(["latency_ms_median", "provider"]).iloc[0]
        for _, own in g[g["provider"].isin(OWN)].iterrows():
            if "device_uuid" in g and own.get("device_uuid") != ref.get("device_uuid"):
                continue  # two cards of one model differ by a few percent: no ratio
            lines.append(
                {
                    **dict(zip(SHAPE, shape, strict=True)),
                    "own": own["provider"],
                    "reference": ref["provider"],
                    "speedup": ref["latency_ms_median"] / own["latency_ms_median"],
                }
            )
    return pd.DataFrame(lines)


def latest_ratios(rows: pd.DataFrame) -> pd.DataFrame:
    """run_ratios of every run of one GPU model, each (shape, own) kept from its latest run."""
    return latest_per_run(rows, run_ratios, [*SHAPE, "own"])


def preset_shapes(sweep: str = SWEEP) -> set[tuple[int, int, int]]:
    """(m, n, k) of the preset's first group (sweeps/<sweep>.yaml: M in its product, N and K
    zipped), read as values: `sweep=gemm_llama` with other shapes (Qwen's, the 405B's, a
    router's N 8) writes rows named gemm_llama too, and those are not the issue's grid."""
    preset = Path(__file__).resolve().parents[2] / "sweeps" / f"{sweep}.yaml"  # no torch here
    group = yaml.safe_load(preset.read_text())["sweep"]
    group = group["groups"][0]
    ms = group.get("product", {}).get("m", [])
    pairs = zip(group["zip"]["n"], group["zip"]["k"], strict=True)
    return {(int(m), int(n), int(k)) for n, k in pairs for m in ms}


def gemm_by_m_figures(df: pd.DataFrame, out: Path) -> list[FigureFile]:
    """One figure per GPU with gemm_llama rows of an own GEMM beside a vendor, from `df`
    (harness.report.data.load's rows, with their `sweep`), at gemm_llama's own shapes only."""
    sweep = df["sweep"] if "sweep" in df else pd.Series(None, index=df.index, dtype=object)
    rows = df[(df["op"] == "gemm") & (sweep == SWEEP) & (df["dtype"] == DTYPE)]
    shapes = preset_shapes()
    mnk = zip(rows["m"], rows["n"], rows["k"], strict=True)
    keep = pd.Series([(int(m), int(n), int(k)) in shapes for m, n, k in mnk], dtype=bool)
    rows = rows[keep.to_numpy()]
    figures = []
    for device, dev_rows in rows.groupby("device_name", sort=True):
        ratios = latest_ratios(dev_rows)
        if not ratios.empty:
            figures.append(_figure(str(device), ratios, out))
    return figures


def _figure(device: str, ratios: pd.DataFrame, out: Path) -> FigureFile:
    fig = new_figure(7.0, 4.4, right=0.74)
    ax = fig.add_subplot()
    owns = [o for o in OWN if o in set(ratios["own"])]
    colors = series_colors(owns)
    # side by side at each M: a small offset in log2(M) per provider, so the two never overlap
    spread = np.linspace(-0.12, 0.12, len(owns)) if len(owns) > 1 else [0.0]
    offsets = dict(zip(owns, spread, strict=True))
    for own in owns:
        mine = ratios[ratios["own"] == own]
        x = np.log2(mine["m"].astype(float)) + offsets[own]
        label = (
            f"{own}: {geomean(mine['speedup']):.3f}x geomean, min {mine['speedup'].min():.3f}, "
            f"{len(mine)} shapes"
        )
        ax.scatter(x, mine["speedup"], s=12, color=colors[own], alpha=0.55, lw=0, label=label)
        by_m = mine.groupby("m")["speedup"].apply(geomean)
        ax.plot(np.log2(by_m.index.astype(float)) + offsets[own], by_m.values, color=colors[own])
    ax.axhline(1.0, color="0.4", lw=0.8, ls="--")
    ms = sorted(ratios["m"].astype(int).unique())
    ax.set_xticks(np.log2(ms), [str(m) for m in ms], rotation=45 if len(ms) > 8 else 0)
    ax.set_xlabel("M (tokens in the batch); N and K of the Llama-3 projections")
    ax.set_ylabel("fastest vendor time / own time")
    ax.set_title(f"{device}: own GEMMs against the fastest vendor row, gemm_llama {DTYPE}")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7, frameon=False)
    runs = ", ".join(sorted(ratios["run"].unique()))
    caption = (
        f"Each own GEMM's speedup over the fastest ok vendor row (cuBLAS or cuBLASLt) at each "
        f"gemm_llama {DTYPE} shape on the {device}, against M (dots; the line: the geomean per "
        f"M). Issue 20.1's bars: own Triton >= 1.00x with none below 0.90x, own CUTLASS >= 1.03x "
        f"with none below 0.95x. Each shape from the latest gemm_llama run that timed it beside "
        f"a vendor on the same card: {runs}."
    )
    return save(fig, out, f"gemm-by-m-{slug(device)}", caption)
