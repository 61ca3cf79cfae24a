"""Figure plumbing: Agg-only matplotlib figures (no pyplot state), at most SERIES_MAX distinct
colours per figure, and PNG + SVG files cropped to what is drawn and byte-identical when the
rows are (no dates, fixed SVG ids), so a regenerated report diffs cleanly."""

from __future__ import annotations

import io
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import matplotlib
from matplotlib.backends.backend_agg import FigureCanvasAgg  # Agg: no display needed
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, LogFormatter, NullFormatter
from PIL import Image

STYLE = {
    "svg.hashsalt": "kernel-harness",  # deterministic element ids
    "svg.fonttype": "none",  # text stays text: smaller files, searchable
    "font.size": 9,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "axes.spines.top": False,
    "axes.spines.right": False,
}
PNG_DPI = 110
PAD_INCHES = 0.12  # white margin the saved image keeps around its outermost text
# At most this many coloured series in one figure: past eight, colours a reader can tell apart
# run out, so the rest is drawn as one grey "others" series that the caption lists.
SERIES_MAX = 8
# tab10 without its grey (the "others" series) and olive (too close to orange and green once
# markers overlap): eight hues that stay apart on screen and in grey-scale print.
SERIES_COLORS = [tuple(matplotlib.colormaps["tab10"](i)[:3]) for i in (0, 1, 2, 3, 4, 5, 6, 9)]
OTHERS_COLOR = "0.62"
OP_MARKERS = {"gemm": "o", "attention": "^"}


@dataclass(frozen=True)
class FigureFile:
    """One saved figure: its stem under figures/, a caption, and the two files."""

    stem: str
    caption: str
    png: Path
    svg: Path


def styled():
    """The report's rcParams, scoped (reports leave the caller's matplotlib state alone)."""
    return matplotlib.rc_context(STYLE)


def new_figure(
    width: float = 7.0, height: float = 4.5, constrained: bool = False, **margins: float
) -> Figure:
    """A figure with fixed margins (fractions, as subplots_adjust takes them): constrained
    layout would cost about half of the drawing time, so only panels whose tick labels vary in
    length (the ladder's provider names) ask for it."""
    fig = Figure(figsize=(width, height), layout="constrained" if constrained else None)
    FigureCanvasAgg(fig)
    if not constrained:
        fig.subplots_adjust(**{"left": 0.09, "right": 0.97, "bottom": 0.12, "top": 0.9, **margins})
    return fig


def _tick(v: float, _=None) -> str:
    """Plain tick text: 40000, 0.6, 0.002 (no mathtext, no 4e+04)."""
    if v == 0 or 1 <= abs(v) < 1e6:
        return f"{v:.0f}" if float(v).is_integer() else f"{v:.3g}"
    return f"{v:.3g}"


class _DecadeAwareFormatter(LogFormatter):
    """LogFormatter's choice of which minor ticks to label, with plain text."""

    def __call__(self, x, pos=None):
        return _tick(x) if super().__call__(x, pos) else ""


def log_axes(ax, xbase: int = 10) -> None:
    """Log-log axes with plain tick labels: mathtext labels cost most of the drawing time."""
    ax.set_xscale("log", base=xbase)
    ax.set_yscale("log")
    for axis in [ax.yaxis] if xbase != 10 else [ax.xaxis, ax.yaxis]:
        axis.set_major_formatter(
            _DecadeAwareFormatter(labelOnlyBase=False, minor_thresholds=(2, 0.5))
        )
        axis.set_minor_formatter(
            _DecadeAwareFormatter(labelOnlyBase=False, minor_thresholds=(2, 0.5))
        )
    if xbase != 10:  # batch axes: powers of two, written out
        ax.xaxis.set_major_formatter(FuncFormatter(_tick))
        ax.xaxis.set_minor_formatter(NullFormatter())


def widen_log_y(ax, min_ratio: float = 4.0) -> None:
    """Keep a log y axis at least `min_ratio` tall, so a flat line does not look steep."""
    lo, hi = ax.get_ylim()
    if lo > 0 and hi / lo < min_ratio:
        mid = (lo * hi) ** 0.5
        ax.set_ylim(mid / min_ratio**0.5, mid * min_ratio**0.5)


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "x"


def save(fig: Figure, out_dir: Path, stem: str, caption: str) -> FigureFile:
    """Write <out_dir>/figures/<stem>.png and .svg without timestamps, cropped to everything
    drawn (bbox_inches="tight"): a long tick label or an outside legend is never cut off."""
    folder = Path(out_dir) / "figures"
    folder.mkdir(parents=True, exist_ok=True)
    png, svg = folder / f"{stem}.png", folder / f"{stem}.svg"
    tight: dict[str, Any] = {"bbox_inches": "tight", "pad_inches": PAD_INCHES}
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=PNG_DPI, metadata={"Software": None}, **tight)
    # A chart has few colours: a 256-colour palette keeps it crisp at a third of the bytes.
    Image.open(buf).convert("RGB").quantize(256).save(png, optimize=True)
    fig.savefig(svg, metadata={"Date": None, "Creator": None}, **tight)
    return FigureFile(stem, caption, png, svg)


# The headline providers keep one colour in every figure (own Triton blue, own CUTLASS orange,
# the vendor library a figure is measured against green), so a reader who learnt them on one
# figure reads the next; a name whose colour another in the same figure took gets the next free.
PROVIDER_COLOR_INDEX = {
    "own-triton": 0,
    "own-cutlass": 1,
    "own-cutlass-fa3": 1,
    "cublas": 2,
    "cublaslt-fp8": 2,
    "sdpa-cudnn": 2,
    "hipblaslt": 2,
    "cublaslt-fp8-fastaccum": 3,
    "sdpa-efficient": 3,
    "sdpa-flash": 4,
    "flashinfer": 5,
    "flash-attn-4": 6,
}


def series_colors(names) -> dict[str, tuple]:
    """A distinct colour per series name (at most SERIES_MAX names: the caller folds the rest
    into "others", drawn in OTHERS_COLOR): a headline provider's own colour where it is free
    (PROVIDER_COLOR_INDEX), the others in the order given from the colours left."""
    names = list(dict.fromkeys(names))
    if len(names) > SERIES_MAX:
        raise ValueError(f"series: {len(names)}; allowed: at most {SERIES_MAX} (fold the rest)")
    out: dict[str, tuple] = {}
    taken: set[int] = set()
    for n in names:
        i = PROVIDER_COLOR_INDEX.get(n)
        if i is not None and i not in taken:
            out[n] = SERIES_COLORS[i]
            taken.add(i)
    free = (i for i in range(len(SERIES_COLORS)) if i not in taken)
    for n in names:
        if n not in out:
            out[n] = SERIES_COLORS[next(free)]
    return {n: out[n] for n in names}


def top_series(
    counts: dict[str, int],
    keep: int = SERIES_MAX,
    prefer: frozenset[str] = frozenset(),
    then: frozenset[str] = frozenset(),
) -> tuple[list[str], list[str]]:
    """(series to draw, series folded into "others"): all of them when they fit in `keep`, else
    the keep - 1 with the most points (ties by name), those in `prefer` first, then those in
    `then`, and the rest."""
    names = sorted(counts, key=lambda n: (n not in prefer, n not in then, -counts[n], n))
    if len(names) <= keep:
        return sorted(names), []
    return sorted(names[: keep - 1]), sorted(names[keep - 1 :])
