"""The decoder layer's memory-bound ops (rmsnorm, add_rmsnorm, silu_mul, rope, kv_append):
achieved GB/s against the device's HBM read bandwidth, per token count, own kernel beside
PyTorch eager and torch.compile. One figure per device (a panel per op) and one table.

GB/s = the problem's min_bytes (each input read once, each output written once) / median.
The bandwidth line is the measured HBM read ceiling where the device has one (its ceilings
run's), else its datasheet, named in the caption.
"""

from __future__ import annotations

import math
import re
from typing import Literal

import pandas as pd
from matplotlib.lines import Line2D

from harness.report.data import IDENTITY, fmt, is_speed, latest, with_device
from harness.report.figures import SERIES_MAX, FigureFile, new_figure, save, series_colors, slug
from harness.report.peaks import Peaks
from harness.report.tables import Table
from harness.workloads.derive import LAYER_OPS

OWN = "own-triton"
LineStyle = Literal["-", "--", ":", "-."]
_STYLES: tuple[LineStyle, ...] = ("-", "--", ":", "-.")  # own first, then the vendors by name
_TOKENS = {"kv_append": "batch"}  # the x axis: tokens (m), or sequences for the cache append
_WIDTH = {"rmsnorm": "n", "add_rmsnorm": "n", "silu_mul": "n"}
_WIDTH_LABEL = {"n": "n"}


def layer_op_rows(df: pd.DataFrame) -> pd.DataFrame:
    """Latest ok row per point and device of the layer ops, with `device`, `tokens` and
    `width` (the axis that tells two shapes of one op apart)."""
    rows = df[is_speed(df) & df["op"].isin(LAYER_OPS)]
    if rows.empty:
        return rows
    rows = with_device(latest(rows, [*IDENTITY, "device_name"]))
    tokens = [r[_TOKENS.get(r["op"], "m")] for r in rows.to_dict("records")]
    return rows.assign(tokens=tokens, width=[_width(r) for r in rows.to_dict("records")])


def _width(row: dict) -> str:
    """What tells two shapes of one op apart in a legend: the row width, the query and KV heads,
    or for the KV append its page, KV heads and cached tokens (the presets shard heads over TP
    ranks and, in prefill, append to an empty cache: one line each, or the lines zig-zag)."""
    if row["op"] == "rope":  # query / KV heads: TP-sharded presets share a query count
        return f"heads {int(row['q_heads'])}/{int(row['kv_heads'])}"
    if row["op"] != "kv_append":
        axis = _WIDTH[row["op"]]
        return f"{_WIDTH_LABEL[axis]} {int(row[axis])}"
    q_len = row.get("q_len")
    new = 1 if q_len is None or pd.isna(q_len) else int(q_len)
    # a prefill appends its whole prompt: q_len tokens per sequence, not one
    appended = "" if new == 1 else f", +{new} tokens each"
    return (
        f"page {int(row['page_size'])}, {int(row['kv_heads'])} KV heads, "
        f"{int(row['kv_len'])} cached{appended}"
    )


def _order(width: str) -> tuple[int, ...]:
    """Legend order of widths: by the numbers in the label, in turn."""
    return tuple(int(n) for n in re.findall(r"\d+", width))


def _bandwidth(peaks: dict[str, Peaks], device_name: str) -> tuple[float | None, str]:
    p = peaks.get(device_name)
    for source in ("measured", "datasheet"):
        bw = p.bandwidth(source) if p else None
        if bw:
            return bw, p.origin(None, source) if p else source
    return None, "none"


def is_rung(provider: str) -> bool:
    """An own kernel's ladder rung (own-triton-weight-late pins one choice of own-triton)."""
    return provider.startswith(OWN + "-")


def figure_rows(df: pd.DataFrame) -> pd.DataFrame:
    """layer_op_rows less the own kernel's rungs: what the figures plot."""
    rows = layer_op_rows(df)
    return rows[~rows["provider"].map(is_rung)] if not rows.empty else rows


def layer_ops_figures(df: pd.DataFrame, peaks: dict[str, Peaks], out_dir) -> list[FigureFile]:
    """Per device: a panel per op, GB/s against tokens, a line per provider and shape; the own
    kernel's rungs are left to the table (a line each would bury the headline's)."""
    rows = figure_rows(df)
    files: list[FigureFile] = []
    for device_name, g in rows.groupby("device_name", sort=True):
        device = g["device"].iloc[0]
        ops = [op for op in LAYER_OPS if op in set(g["op"])]
        fig = new_figure(3.3 * min(len(ops), 3), 3.0 * math.ceil(len(ops) / 3), constrained=True)
        axes = fig.subplots(math.ceil(len(ops) / 3), min(len(ops), 3), squeeze=False).flatten()
        bw, origin = _bandwidth(peaks, device_name)
        providers = sorted(g["provider"].unique(), key=lambda p: (p != OWN, p))
        styles: dict[str, LineStyle] = {
            p: _STYLES[i % len(_STYLES)] for i, p in enumerate(providers)
        }
        for ax, op in zip(axes, ops, strict=False):
            mine = g[g["op"] == op]
            # a colour per shape, a line style per provider: the legend names each once
            widths = sorted(mine["width"].unique(), key=_order)[:SERIES_MAX]
            colors = series_colors(widths)
            mine = mine[mine["width"].isin(widths)]
            for (provider, width), line in mine.groupby(["provider", "width"], sort=True):
                line = line.sort_values("tokens")
                ax.plot(
                    line["tokens"], line["gbps"], color=colors[width], linestyle=styles[provider],
                    marker=".", markersize=3, linewidth=1.1,
                )  # fmt: skip
            shown = [p for p in providers if p in set(mine["provider"])]
            handles = [Line2D([], [], color="0.2", linestyle=styles[p], label=p) for p in shown]
            handles += [Line2D([], [], color=colors[w], label=w) for w in widths]
            ax.legend(handles=handles, fontsize=5.5, frameon=False, loc="upper left")
            if bw:
                ax.axhline(bw, color="0.4", linewidth=0.8, linestyle=":")
            ax.set_xscale("log", base=2)
            ax.set_title(op, fontsize=9)
            ax.set_xlabel("sequences" if op in _TOKENS else "tokens", fontsize=8)
            ax.set_ylabel("GB/s", fontsize=8)
            ax.tick_params(labelsize=7)
            ax.grid(True, alpha=0.3)
        for ax in axes[len(ops) :]:
            ax.set_visible(False)
        line = f"dotted line: HBM read {bw:,.0f} GB/s ({origin})" if bw else "no bandwidth known"
        caption = (
            f"{device}: decoder-layer memory-bound ops, achieved GB/s (each input read and each "
            f"output written once, over the median) against tokens (KV append: sequences, one "
            f"new token each unless the legend says '+N tokens each', a prefill's prompt "
            f"appended to an empty cache); {line}. A line per provider (line style) and shape "
            "(colour: row width; rotary: query / KV heads; KV append: page, KV heads and cached "
            "tokens). The own kernel's rungs are in the table below."
        )
        files.append(save(fig, out_dir, f"layer-ops-{slug(device)}", caption))
    return files


def layer_ops_table(df: pd.DataFrame, peaks: dict[str, Peaks]) -> Table:
    """One line per device and problem: each provider's microseconds and GB/s, the own
    kernel's share of the HBM read bandwidth and its speedup over the fastest vendor row."""
    rows = layer_op_rows(df)
    lines = []
    for (device_name, op, problem), g in rows.groupby(["device_name", "op", "problem"]):
        by = {r["provider"]: r for r in g.to_dict("records")}
        bw, _ = _bandwidth(peaks, device_name)
        line = {"device": g["device"].iloc[0], "op": op, "problem": problem}
        for provider in sorted(by):
            r = by[provider]
            line[f"{provider} us"] = fmt(r["latency_ms_median"] * 1e3, ".3g")
            line[f"{provider} GB/s"] = fmt(r["gbps"], ".4g")
        own = by.get(OWN)
        vendor = [r["latency_ms_median"] for p, r in by.items() if r["family"] == "vendor"]
        line["own % of HBM read"] = fmt(100 * own["gbps"] / bw, ".3g") if own and bw else ""
        line["own speedup vs fastest vendor"] = (
            fmt(min(vendor) / own["latency_ms_median"], ".3g") if own and vendor else ""
        )
        lines.append(line)
    frame = pd.DataFrame(lines)
    if not frame.empty:
        order = [c for c in frame.columns if not c.endswith((" us", " GB/s"))][:3]
        rest = sorted(c for c in frame.columns if c.endswith((" us", " GB/s")))
        tail = ["own % of HBM read", "own speedup vs fastest vendor"]
        frame = frame[order + rest + tail].fillna("")
    caption = (
        "decoder-layer ops per device and problem: median microseconds and GB/s per provider "
        "(torch-eager: Hugging Face Llama's formulation; torch-compile: the same through "
        "Inductor), the own kernel's GB/s as a share of the HBM read bandwidth (measured "
        "where the device has it, else the datasheet) and its speedup over the fastest vendor row"
    )
    return Table("layer-ops", "Decoder-layer ops", caption, frame)
