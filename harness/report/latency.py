"""Latency versus batch per workload: the per-layer time of each problem, the composed layer
and step, tokens per second, and the roofline bound of the same problems."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from harness.report.compose import GRAPH_TIMER, SELECTIONS, RowIndex, Step, compose, steps_table
from harness.report.data import device_of
from harness.report.figures import FigureFile, log_axes, new_figure, save, slug, widen_log_y
from harness.report.peaks import Peaks
from harness.workloads.derive import CATEGORIES
from harness.workloads.presets import WORKLOADS, Workload

_SELECTION_STYLE: dict[str, dict[str, Any]] = {
    "vendor": {"color": "#1f77b4", "marker": "o"},
    "own": {"color": "#d62728", "marker": "s"},
    "best": {"color": "black", "marker": "D", "ms": 3},
}
_COMPONENT_COLORS = {
    "qkv": "#1f77b4",
    "o": "#ff7f0e",
    "gate_up": "#2ca02c",
    "down": "#9467bd",
    "router": "#8c564b",
    "expert_gate_up": "#2ca02c",
    "expert_down": "#9467bd",
    "attention": "#d62728",
    "lm_head": "#7f7f7f",
    "norms and elementwise": "#17becf",
    "all_reduce": "#bcbd22",
}
LAYER_CATEGORY = "norms and elementwise"
_CATEGORY_COLORS = {"GEMMs": "#1f77b4", "attention": "#d62728", LAYER_CATEGORY: "#17becf",
                    "all-reduce": "#bcbd22", "LM head": "#7f7f7f"}  # fmt: skip


def _breakdown_panel(ax, steps: list[Step]) -> None:
    """Stacked share of the composed step (fastest row per problem) by CATEGORIES."""
    best = [(s.batch, b) for s in steps if s.selection == "best" and (b := s.by_category())]
    x = range(len(best))
    bottom = [0.0] * len(best)
    for cat in [c for c in CATEGORIES if any(b[c] for _, b in best)]:  # no empty legend rows
        share = [100 * b[cat] / sum(b.values()) for _, b in best]
        ax.bar(x, share, bottom=bottom, color=_CATEGORY_COLORS[cat], label=cat, width=0.8)
        bottom = [a + v for a, v in zip(bottom, share, strict=True)]
    ax.set_xticks(list(x), [str(b) for b, _ in best], fontsize=7)
    ax.set_ylim(0, 100)
    ax.set_xlabel("batch (sequences)")
    ax.set_ylabel("% of the composed step")
    ax.legend(fontsize=7, frameon=False, loc="lower left")


@dataclass
class WorkloadReport:
    """A workload on one device: its steps for every selection and batch, and the figure."""

    workload: Workload
    device: str
    steps: list[Step]
    figure: FigureFile
    table: pd.DataFrame
    missing: list[str]  # labels of problems with no ok row at some batch


def _component_ms(s: Step, names: list[str]) -> float | None:
    """count x median summed over the named components of a step (None if one is unmeasured)."""
    total = 0.0
    for c in s.components:
        if c.item.name in names:
            if c.median_ms is None:
                return None
            total += c.median_ms * c.item.count
    return total


def _per_layer_panel(ax, steps: list[Step], w: Workload) -> int:
    """Draws each measured problem's per-layer time, the layer's sum and bound; returns how
    many measured series it drew (0: only the bound, a figure with no measurement in it)."""
    best = [s for s in steps if s.selection == "best"]
    drawn = 0
    items = {c.item.name: c.item for c in best[0].components}
    # The layer ops are drawn as one line (their sum per layer), so a panel keeps ~8 series.
    layer_ops = [n for n, i in items.items() if i.category == LAYER_CATEGORY and i.per_layer]
    series = {n: [n] for n, i in items.items() if i.category != LAYER_CATEGORY}
    if layer_ops:
        series[LAYER_CATEGORY] = layer_ops
    for name, parts in series.items():
        pts = [(s.batch, ms) for s in best if (ms := _component_ms(s, parts)) is not None]
        if pts:
            drawn += 1
            once = name in items and not items[name].per_layer
            ax.plot(
                *zip(*pts, strict=True),
                marker=".",
                lw=1,
                ls=":" if once else "-",
                color=_COMPONENT_COLORS.get(name, "0.5"),
                label=f"{name} (once per step)" if once else name,
            )
    full = [(s.batch, s.layer_ms) for s in best if s.layer_ms is not None]
    if full:
        # parts without rows left out: a lower bound, drawn hollow and named as one
        partial = any(s.omitted for s in best if s.layer_ms is not None)
        ax.plot(
            *zip(*full, strict=True),
            color="black",
            lw=2.2,
            marker="D",
            ms=4,
            mfc="none" if partial else "black",
            label="layer (sum of measured parts: a lower bound)" if partial else "layer (sum)",
        )
    bound = [(s.batch, s.bound_layer_ms) for s in best if s.bound_layer_ms is not None]
    if bound:
        ax.plot(*zip(*bound, strict=True), color="black", lw=1.2, ls="--", label="layer bound")
    for provider, marker, what in (
        ("own-triton-graph", "*", "CUDA graph"),
        ("own-triton", "x", "eager"),
    ):
        whole = [
            (s.batch, s.measured_layer[provider]) for s in best if provider in s.measured_layer
        ]
        if whole:
            ax.plot(*zip(*whole, strict=True), color="#e377c2", lw=0, marker=marker, ms=7,
                    label=f"one layer measured whole ({what})")  # fmt: skip
    log_axes(ax, 2)
    widen_log_y(ax)
    ax.set_xlabel("batch (sequences)")
    ax.set_ylabel("ms per layer (fastest row per problem)")
    # Below the axes: inside, it covered the measured-layer markers at batch 4-64.
    ax.legend(fontsize=7, frameon=False, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2)
    return drawn


def _throughput_panel(ax, steps: list[Step], w: Workload) -> None:
    for selection in SELECTIONS:
        pts = [
            (s.batch, s.tokens_per_s) for s in steps if s.selection == selection and s.tokens_per_s
        ]
        if pts:
            style = _SELECTION_STYLE[selection]
            partial = any(s.omitted for s in steps if s.selection == selection and s.tokens_per_s)
            ax.plot(
                *zip(*pts, strict=True),
                lw=1.6,
                label=f"composed: {selection} rows"
                + (" (parts left out: an upper bound)" if partial else ""),
                color=style["color"],
                marker=style["marker"],
                mfc="none" if partial else style["color"],
                ms=style.get("ms", 4),
            )
    for selection in SELECTIONS:  # per-layer problems all measured, the LM head not yet
        layer_pts = [
            (s.batch, s.layers_tokens_per_s)
            for s in steps
            if s.selection == selection and s.layers_ms and not s.step_ms
        ]
        if layer_pts:
            style = _SELECTION_STYLE[selection]
            ax.plot(
                *zip(*layer_pts, strict=True),
                lw=1,
                ls=":",
                color=style["color"],
                mfc="none",
                marker=style["marker"],
                label=f"layers only (no LM head): {selection} rows",
            )
    bound = [
        (s.batch, s.bound_tokens_per_s)
        for s in steps
        if s.selection == "best" and s.bound_tokens_per_s
    ]
    if bound:
        src = next(s.bound_source for s in steps if s.bound_source)
        ax.plot(
            *zip(*bound, strict=True), color="0.3", ls="--", lw=1.2, label=f"roofline bound ({src})"
        )
    log_axes(ax, 2)
    widen_log_y(ax)
    ax.set_xlabel("batch (sequences)")
    what = "output tokens/s (decode)" if w.phase == "decode" else "prompt tokens/s (prefill)"
    ax.set_ylabel(what)
    ax.legend(fontsize=7, frameon=False)


def _batches(batches: list[int]) -> str:
    return ", ".join(map(str, batches))


def _caption(w: Workload, steps: list[Step], measured: int, total: int) -> tuple[str, bool]:
    """The caption of a workload figure, stating what each panel draws and what is missing, and
    whether the throughput panel has anything to draw (it is dropped when not)."""
    best = [s for s in steps if s.selection == "best"]
    complete = sorted({s.batch for s in steps if s.step_ms is not None})
    layers_only = sorted({s.batch for s in steps if s.layers_ms and s.step_ms is None})
    unmeasured = list(dict.fromkeys(i.name for s in best for i in s.missing))
    per_layer_missing = list(dict.fromkeys(i.name for s in best for i in s.missing if i.per_layer))
    parts = [f"{w.describe()}. {measured} of {total} problems measured"]
    if unmeasured:
        parts[0] += (
            f"; without an ok row at some batch: {', '.join(unmeasured)} "
            f"(`harness run sweep={w.name}` measures them)"
        )
    left = (
        "Left: per-layer time of each measured problem (count x median of the fastest ok "
        "row) and the layer's roofline bound"
    )
    if any(s.layer_ms is not None for s in best):
        left += (
            ", and their sum (layer) where every per-layer GEMM and attention problem is "
            "measured (hollow where layer ops or all-reduces without rows are left out of it)"
        )
    else:
        left += f"; no layer sum (no ok row for {', '.join(per_layer_missing)})"
    parts.append(left)
    composed = [s for s in best if s.layer_ms is not None]  # what a sum left them out of
    omitted = list(dict.fromkeys(i.name for s in composed for i in s.omitted))
    whole = sorted({s.batch for s in best if s.measured_layer})
    if whole:
        parts.append(
            f"Stars and crosses: one layer of own kernels measured whole (decoder_layer rows: "
            f"a CUDA graph, and launched one by one) at batch {_batches(whole)}"
        )
    if w.tp > 1:
        # providers of the all-reduce rows used; none measured: "Parts without rows" names it
        chosen = {
            c.provider
            for s in best
            for c in s.components
            if c.item.op == "collective" and c.provider
        }
        if any(GRAPH_TIMER in p for p in chosen):
            parts.append(
                "The all-reduces come from the collectives sweep replayed from a CUDA graph "
                "(`harness run sweep=collectives_graph`), as a step's graph runs them"
            )
        elif chosen:  # why a composed TP step sits above the measured one at small batch
            parts.append(
                "The all-reduces come from the collectives sweep, each NCCL call timed on its "
                "own with its host launch (a floor of tens of microseconds at small messages), "
                "which a step replayed as a CUDA graph does not pay"
            )
    if omitted:
        parts.append(
            f"Parts without rows ({', '.join(omitted)}) are left out of every sum: those "
            "layers and steps are lower bounds"
        )
    has_throughput = bool(complete or layers_only)
    if has_throughput:
        right = (
            "Right: tokens/s of the composed step by which rows it uses, and the bound; "
            f"composed at batch {_batches(complete)}"
            if complete
            else "Right: tokens/s and the bound; no batch composed (the LM head is unmeasured)"
        )
        if layers_only:
            right += (
                f"; dotted, hollow: all layers without the LM head, at batch "
                f"{_batches(layers_only)}"
            )
        parts.append(right)
    else:
        parts.append(
            "No tokens/s panel: no batch has every per-layer problem measured, so "
            "no step can be composed"
        )
    return ". ".join(parts) + ".", has_throughput


def workload_reports(
    rows: pd.DataFrame, peaks: dict[str, Peaks], out_dir: Path
) -> list[WorkloadReport]:
    """Every (GPU, workload) with at least one measured problem: steps, table and figure."""
    out = []
    for (name, kind), dev_rows in rows.groupby(["device_name", "device_type"], sort=True):
        index = RowIndex(dev_rows)
        device = device_of({"device_name": name, "device_type": kind})
        for w in WORKLOADS:
            items = {i.label(): i for b in w.batches for i in w.items(b)}
            measured = [lbl for lbl, i in items.items() if index.measured(i)]
            if not any(items[lbl].per_layer for lbl in measured):  # an LM head alone says little
                continue
            steps = [
                compose(index, w, b, sel, peaks.get(name)) for sel in SELECTIONS for b in w.batches
            ]
            caption, has_throughput = _caption(w, steps, len(measured), len(items))
            breakdown = any(s.by_category() and not s.omitted for s in steps)
            if has_throughput and breakdown:
                categories = "GEMMs, attention, norms and elementwise, " + (
                    "all-reduce, " if w.tp > 1 else ""
                )
                caption += (
                    f" Third panel: the composed step (fastest rows) split into {categories}and the "
                    "LM head, as shares of the step per batch."
                )
                fig = new_figure(
                    15.5, 4.4, left=0.05, right=0.99, top=0.9, bottom=0.12, wspace=0.25
                )
                left, right, third = fig.subplots(1, 3)
                _throughput_panel(right, steps, w)
                _breakdown_panel(third, [s for s in steps if not s.omitted])
            elif has_throughput:
                fig = new_figure(
                    11.0, 4.4, left=0.07, right=0.98, top=0.9, bottom=0.12, wspace=0.22
                )
                left, right = fig.subplots(1, 2)
                _throughput_panel(right, steps, w)
            else:  # an empty panel says nothing a caption cannot: draw the left one alone
                fig = new_figure(6.0, 4.4, left=0.12, right=0.97, top=0.9, bottom=0.12)
                left = fig.subplots()
            if not _per_layer_panel(left, steps, w) and not has_throughput:
                # its few measured rows are layer ops whose group is never whole: the figure
                # would show the bound alone (H100 Qwen2.5-7B decode: 3 of 100 problems)
                continue
            fig.suptitle(f"{device}: {w.config.name} TP{w.tp} {w.phase}, context {w.context}")
            missing = [lbl for lbl in items if lbl not in measured]
            stem = f"latency-{slug(device)}-{slug(w.name)}"
            memory = _memory_bytes(dev_rows)
            caption += _memory_text(w, memory)
            table = _with_memory(steps_table(steps), w, memory)
            out.append(
                WorkloadReport(w, device, steps, save(fig, out_dir, stem, caption), table, missing)
            )
    return out


def _memory_bytes(rows: pd.DataFrame) -> float | None:
    """The GPU's memory as its rows record it (None where they do not)."""
    if "device_memory_bytes" not in rows:
        return None
    known = pd.to_numeric(rows["device_memory_bytes"], errors="coerce").dropna()
    return float(known.max()) if len(known) else None


def _memory_text(w: Workload, memory: float | None) -> str:
    """' Batch 256, 512: ...' where one rank's weights and KV cache alone exceed the GPU's
    memory: such a step was composed from kernels measured one by one, but could not be served
    with one GPU per rank (Mixtral-8x7B on an H200 from batch 128)."""
    if not memory:
        return ""
    over = [b for b in w.batches if w.resident_bytes(b) > memory]
    if not over:
        return ""
    need = w.resident_bytes(over[0]) / 1e9
    return (
        f" Batch {_batches(over)}: one rank's weights and KV cache alone exceed this GPU's "
        f"{memory / 1e9:.0f} GB ({need:.0f} GB at batch {over[0]}), so those steps could not be "
        "served with one GPU per rank; their kernels were measured one by one all the same."
    )


def _with_memory(table: pd.DataFrame, w: Workload, memory: float | None) -> pd.DataFrame:
    """The steps table with what one rank holds (weights and KV cache, GB) and whether it fits."""
    if table.empty or "batch" not in table:
        return table
    held = [w.resident_bytes(int(b)) / 1e9 for b in table["batch"]]
    out = table.assign(**{"rank GB (weights + KV)": held})
    if memory:
        out["fits one GPU"] = ["yes" if gb * 1e9 <= memory else "no" for gb in held]
    return out
