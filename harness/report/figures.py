"""Figure plumbing: Agg-only matplotlib figures (no pyplot state), stable colours, and PNG + SVG
files that are byte-identical when the rows are (no dates, fixed SVG ids), so a regenerated
report diffs cleanly."""

from __future__ import annotations

import io
import re
from dataclasses import dataclass
from pathlib import Path

import matplotlib
from matplotlib.backends.backend_agg import FigureCanvasAgg  # Agg: no display needed
from matplotlib.colors import ListedColormap
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


def _listed(name: str) -> list:
    """The colours of a qualitative (listed) colormap, as matplotlib lists them."""
    cmap = matplotlib.colormaps[name]
    colors = cmap.colors if isinstance(cmap, ListedColormap) else None
    if not isinstance(colors, list | tuple):  # tab10, tab20, tab20b: a tuple of RGB tuples
        raise TypeError(f"colormap {name}: not a list of colours")
    return list(colors)


# tab10's saturated colours first, then tab20's light partners and tab20b: 30 distinct colours
_PALETTE = [
    *_listed("tab10"),
    *_listed("tab20")[1::2],
    *_listed("tab20b")[::2],
]
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


def new_figure(width: float = 7.0, height: float = 4.5, **margins: float) -> Figure:
    """A figure with fixed margins (fractions, as subplots_adjust takes them): constrained
    layout would cost about half of the drawing time."""
    fig = Figure(figsize=(width, height))
    FigureCanvasAgg(fig)
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
    """Write <out_dir>/figures/<stem>.png and .svg without timestamps."""
    folder = Path(out_dir) / "figures"
    folder.mkdir(parents=True, exist_ok=True)
    png, svg = folder / f"{stem}.png", folder / f"{stem}.svg"
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=PNG_DPI, metadata={"Software": None})
    # A chart has few colours: a 256-colour palette keeps it crisp at a third of the bytes.
    Image.open(buf).convert("RGB").quantize(256).save(png, optimize=True)
    fig.savefig(svg, metadata={"Date": None, "Creator": None})
    return FigureFile(stem, caption, png, svg)


def provider_colors(providers) -> dict[str, str]:
    """A stable colour per provider name (sorted order, so every figure agrees)."""
    names = sorted({p for p in providers if isinstance(p, str)})
    return {p: _PALETTE[i % len(_PALETTE)] for i, p in enumerate(names)}
