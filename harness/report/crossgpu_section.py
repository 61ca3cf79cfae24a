"""The report's cross-GPU section: for every two GPUs of one vendor in the rows, the speedup of
each point against the roofline's prediction (figure and tables), decode latency versus batch on
both GPUs (figure and tables), and a finding per kernel family (harness.report.crossgpu_tables).
"""

from __future__ import annotations

import dataclasses
import html
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from harness.report import crossgpu_batch as xb
from harness.report.crossgpu import WITHIN, gpu_pairs, predicted
from harness.report.crossgpu_tables import CrossGpu, build
from harness.report.figures import FigureFile, log_axes, new_figure, save, slug, widen_log_y
from harness.report.tables import Table

_FAMILY_COLORS = {"GEMM": "#1f77b4", "attention prefill": "#2ca02c", "attention decode": "#d62728"}
_KIND_MARKERS = {"vendor": "o", "own": "s"}
_GPU_STYLE = ({"color": "#1f77b4", "marker": "o"}, {"color": "#d62728", "marker": "s"})


@dataclass
class Section:
    """One GPU pair's part of the report (or a note saying why it has no comparison)."""

    title: str
    anchor: str
    note: str = ""
    result: CrossGpu | None = None
    figures: list[FigureFile] = field(default_factory=list)
    tables: list[Table] = field(default_factory=list)

    def html(self, figure_html: Callable, table_html: Callable) -> list[str]:
        e = html.escape
        parts = [f'<h2 id="{self.anchor}">{e(self.title)}</h2>']
        if self.note:
            parts.append(f'<p class="note">{e(self.note)}</p>')
        if self.result is None:
            return parts
        parts.append("".join(f'<p class="note">{e(h)}</p>' for h in self.result.header))
        parts.append("<ul>" + "".join(f"<li>{e(f)}</li>" for f in self.result.findings) + "</ul>")
        summary, *batches, dropped, points = self.tables
        parts += [
            table_html(summary),
            *map(figure_html, self.figures),
            *(table_html(t, open_=False) for t in (*batches, dropped, points)),
        ]
        return parts

    def markdown(self) -> list[str]:
        out = [f"## {self.title}", ""]
        if self.note:
            out += [self.note, ""]
        if self.result is None:
            return out
        out += [*self.result.header, "", *(f"- {f}" for f in self.result.findings), ""]
        summary = self.tables[0]
        out += [summary.caption, "", summary.markdown(), ""]
        for f in self.figures:
            out += [f"![{f.stem}](figures/{f.png.name})", "", f.caption, ""]
        out += [f"- [{t.title}](tables/{t.stem}.md)" for t in self.tables[1:]] + [""]
        return out


_DTYPE_DASHES = ("-", "--", "-.", ":")


def speedup_figure(x: CrossGpu, out_dir: Path, stem: str) -> FigureFile:
    """Measured speedup per point against arithmetic intensity, with the predicted ratio."""
    p, pts = x.pairing, x.pairing.points
    fig = new_figure(9.0, 4.8, left=0.08, right=0.7, top=0.93, bottom=0.11)
    ax = fig.add_subplot()
    for (family, kind), g in pts.groupby(["family", "kind"], sort=True):
        ax.scatter(
            g["intensity"],
            g["speedup"],
            s=18,
            alpha=0.8,
            zorder=3,
            edgecolors="none",
            color=_FAMILY_COLORS.get(family, "0.4"),
            marker=_KIND_MARKERS.get(kind, "^"),
            label=f"{family}, {kind} ({len(g)})",
        )
    known = pts["intensity"].dropna()
    lo, hi = (float(known.min()) / 2, float(known.max()) * 2) if len(known) else (1.0, 1e4)
    grid = np.geomspace(max(lo, 1e-2), hi, 400)
    for n, dtype in enumerate(sorted(set(pts["dtype"].dropna()))):
        y = [predicted(i, p.a, p.b, dtype) for i in grid]
        if not np.isfinite(y).any():
            continue
        dash = _DTYPE_DASHES[n % len(_DTYPE_DASHES)]  # a dash per dtype: lines and ridges alike
        ax.plot(
            grid, y, color="black", lw=1.4, ls=dash, zorder=2, label=f"predicted ({dtype} roofline)"
        )
        ax.fill_between(
            grid,
            np.multiply(y, 1 - WITHIN),
            np.multiply(y, 1 + WITHIN),
            color="0.85",
            zorder=1,
            lw=0,
        )
        for gpu, style in zip((p.a, p.b), _GPU_STYLE, strict=True):
            ridge = gpu.ridge(dtype)
            if ridge:
                ax.axvline(
                    ridge,
                    color=style["color"],
                    ls=dash,
                    lw=1.1,
                    zorder=1,
                    label=f"{gpu.short} {dtype} ridge ({ridge:.0f} FLOP/B)",
                )
    ax.axhline(1.0, color="0.5", lw=0.8, zorder=1)
    log_axes(ax)
    ax.set_yscale("linear")  # speedups span well under one decade: plain ticks read better
    ax.set_xlabel("arithmetic intensity (FLOP per byte of min_bytes)")
    ax.set_ylabel(f"speedup {p.label} ({p.a.short} latency / {p.b.short} latency)")
    ax.legend(fontsize=7, frameon=False, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    ax.set_title(f"{p.b.name} against {p.a.name}: {len(pts)} points, one protocol", fontsize=9)
    caption = (
        f"Each marker is one point measured on both GPUs under the same protocol: its "
        f"speedup {p.label} against its arithmetic intensity; colour = kernel family, "
        "shape = own kernel or vendor library. Black: the speedup the two GPUs' measured "
        f"rooflines predict (HBM read ratio left of both ridges, compute-ceiling ratio "
        f"right of both), grey band +-{WITHIN:.0%}; vertical lines: each GPU's ridge point "
        "in its colour, dashed as its dtype's predicted line."
    )
    return save(fig, out_dir, stem, caption)


def latency_figure(x: CrossGpu, out_dir: Path, stem: str) -> FigureFile | None:
    """ms per token against batch for each decode workload on both GPUs, with crossovers."""
    if not x.curves:
        return None
    n = len(x.curves)
    fig = new_figure(5.2 * n + 1.0, 4.4, left=0.07, right=0.98, top=0.9, bottom=0.12, wspace=0.25)
    axes = np.atleast_1d(fig.subplots(1, n))
    for ax, pair in zip(axes, x.curves, strict=True):
        for c, style in zip(pair, _GPU_STYLE, strict=True):
            pts = [(s.batch, s.ms_per_token) for s in c.steps if s.ms_per_token]
            if pts:
                ax.plot(
                    *zip(*pts, strict=True), lw=1.6, ms=4, label=f"{c.gpu.short} measured", **style
                )
            bound = [(s.batch, s.bound_step_ms) for s in c.steps if s.bound_step_ms]
            if bound:
                ax.plot(
                    *zip(*bound, strict=True),
                    lw=1.0,
                    ls="--",
                    color=style["color"],
                    label=f"{c.gpu.short} roofline bound",
                )
            if c.roofline_crossover:
                ax.axvline(
                    c.roofline_crossover,
                    ls=":",
                    lw=1.1,
                    color=style["color"],
                    label=f"{c.gpu.short} GEMMs compute-bound (~{c.roofline_crossover:.0f})",
                )
        log_axes(ax, 2)
        widen_log_y(ax)
        w = pair[0].workload
        ax.set_title(f"{w.config.name} decode, TP{w.tp}, KV {w.context}", fontsize=9)
        ax.set_xlabel("batch (sequences)")
        ax.set_ylabel("ms per output token (composed step)")
        ax.legend(fontsize=7, frameon=False)
    a, b = x.curves[0][0].gpu.short, x.curves[0][1].gpu.short
    caption = (
        f"Decode step on the {a} and the {b}, composed from each GPU's fastest ok row per "
        "problem (solid) and its roofline bound (dashed). Dotted: the batch where the "
        "step's GEMMs turn compute-bound by the roofline (their time at the compute "
        "ceiling overtakes their time at HBM read bandwidth). "
        + " ".join(
            f"{c[0].workload.config.name}: {a} {xb.knee_text(c[0])}; {b} {xb.knee_text(c[1])}."
            for c in x.curves
        )
    )
    return save(fig, out_dir, stem, caption)


def _renamed(t: Table, prefix: str) -> Table:
    return dataclasses.replace(t, stem=f"{prefix}-{t.stem}")


def cross_gpu_sections(df: pd.DataFrame, out_dir: Path) -> list[Section]:
    """A section per GPU pair of one vendor (none when the rows hold fewer than two GPUs)."""
    sections = []
    for a, b in gpu_pairs(df):
        rows_a = df[df["device_name"] == a]
        rows_b = df[df["device_name"] == b]
        tag = slug(f"{b}-vs-{a}")
        s = Section(f"GPU against GPU: {b} vs {a}", f"crossgpu-{tag}")
        try:
            s.result = build(rows_a, rows_b)
        except ValueError as e:  # a GPU without measured ceilings: no prediction to set beside
            why = str(e).split("; allowed")[0]
            s.note = (
                f"No comparison: {why}. Run `harness ceilings` on both GPUs and build the "
                "report from both results folders."
            )
            sections.append(s)
            continue
        s.tables = [_renamed(t, tag) for t in s.result.tables]
        figs = [
            speedup_figure(s.result, out_dir, f"crossgpu-{tag}-speedup"),
            latency_figure(s.result, out_dir, f"crossgpu-{tag}-decode"),
        ]
        s.figures = [f for f in figs if f is not None]
        sections.append(s)
    return sections
