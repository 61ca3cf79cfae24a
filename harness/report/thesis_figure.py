"""The original study's two experiments as it drew them, from `sweep=thesis` rows: TFLOP/s
against size, its fp16 square GEMM ladder on the left and its causal FMHA shapes on the right,
one figure per GPU (docs/thesis_study.md).

Each panel is one run, never rows of two runs: of the GPU's thesis runs, the one with the most ok
rows of that experiment (the latest of equals), so a later run of a few providers (the vendors'
wheels carried for their rows alone) does not hide the whole ladder. Own kernels and their rungs
get colours; vendor libraries are grey, one dash pattern each, so the ladder reads against them.
What the drawn run skipped (no AMD GPU, a wheel not installed) is named in the caption with its
reason, not drawn.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from harness.report.figures import (
    OTHERS_COLOR,
    SERIES_MAX,
    FigureFile,
    log_axes,
    new_figure,
    save,
    series_colors,
    slug,
)

SWEEP = "thesis"
PANELS = (  # op, the size axis, its label
    ("gemm", "m", "M = N = K (fp16, both operands row-major)"),
    ("attention", "q_len", "sequence length (causal, batch 1, 32 / 8 heads, D 128, fp16)"),
)
VENDOR_DASHES = ["--", "-.", ":", (0, (5, 1)), (0, (3, 1, 1, 1)), (0, (1, 2))]
VENDOR_GREYS = ["0.15", "0.35", "0.5", "0.25", "0.45", "0.6"]


def thesis_figures(rows: pd.DataFrame, out: Path) -> list[FigureFile]:
    """One figure per GPU with thesis rows, from `rows` (harness.report.data.load's, every
    status: the skipped rows give the caption its reasons)."""
    sweep = rows["sweep"] if "sweep" in rows else pd.Series(None, index=rows.index, dtype=object)
    mine = rows[sweep == SWEEP]
    figures = []
    for device, dev_rows in mine.groupby("device_name", sort=True):
        panels = {op: fullest_run(dev_rows[dev_rows["op"] == op]) for op, _, _ in PANELS}
        if any(panels.values()):
            figures.append(_figure(str(device), dev_rows, panels, out))
    return figures


def fullest_run(rows: pd.DataFrame) -> str | None:
    """The run with the most ok rows among `rows` (ties: the one whose last row is newest, then
    the larger run id); None without an ok row."""
    ok = rows[rows["status"] == "ok"]
    if ok.empty:
        return None
    runs = ok.groupby("run_id").agg(n=("status", "size"), last=("timestamp", "max")).reset_index()
    return str(runs.sort_values(["n", "last", "run_id"]).iloc[-1]["run_id"])


def _figure(device: str, rows: pd.DataFrame, panels: dict, out: Path) -> FigureFile:
    drawn = rows[
        [panels.get(op) == run for op, run in zip(rows["op"], rows["run_id"], strict=True)]
    ]
    ok = drawn[(drawn["status"] == "ok") & drawn["tflops"].notna()]
    fig = new_figure(12.0, 4.8, wspace=0.55, right=0.83, top=0.86)
    for i, (op, axis, label) in enumerate(PANELS):
        ax = fig.add_subplot(1, 2, i + 1)
        _panel(ax, ok[ok["op"] == op], axis, label)
        ax.set_title(f"run {panels[op]}" if panels.get(op) else "", fontsize=8)
    fig.suptitle(f"{device}: the original study's shapes under the protocol")
    clocks = ok["sm_clock_mhz"].dropna() if "sm_clock_mhz" in ok else pd.Series(dtype=float)
    clock = f"SM clocks {clocks.min():,.0f}-{clocks.max():,.0f} MHz. " if len(clocks) else ""
    cards = ", ".join(sorted(str(u)[:12] for u in ok["device_uuid"].dropna().unique()))
    runs = " and ".join(dict.fromkeys(r for r in panels.values() if r))
    ck = ok["provider"].str.startswith("ck-").any()
    check = (
        "Every row was checked before it was timed: against the fp32 reference, CK's rows by "
        "CK's own CPU reference (timed by CK with the L2 hot, so they compare with each other). "
        if ck
        else "Every row was checked against the fp32 reference before it was timed. "
    )
    caption = (
        f"TFLOP/s against size for every ok row of run {runs} on the {device} ({cards}; "
        f"{len(ok)} ok rows): own kernels and their rungs in colour, vendor libraries grey and "
        f"dashed. Causal FLOPs are counted once (the computed half), so the study's TFLOP/s for "
        f"the same time read 2x these. {clock}{check}{_skipped(drawn)}"
    )
    return save(fig, out, f"thesis-{slug(device)}", caption)


def _panel(ax, ok: pd.DataFrame, axis: str, label: str) -> None:
    if ok.empty:
        ax.text(0.5, 0.5, "no ok rows", ha="center", va="center", transform=ax.transAxes)
        ax.set_axis_off()
        return
    vendors = sorted(ok.loc[ok["family"] == "vendor", "provider"].unique())
    owns = _by_speed(ok[ok["family"] != "vendor"])
    shown, folded = owns[:SERIES_MAX], owns[SERIES_MAX:]
    colors = series_colors(shown)
    styles = {p: dict(color=colors[p], lw=1.6, marker="o", ms=3) for p in shown}
    styles |= {p: dict(color=OTHERS_COLOR, lw=0.8, marker=".", ms=2) for p in folded}
    for j, p in enumerate(vendors):
        k = j % len(VENDOR_DASHES)
        styles[p] = dict(color=VENDOR_GREYS[k], ls=VENDOR_DASHES[k], lw=1.4, marker="s", ms=2.5)
    for p in [*vendors, *shown, *folded]:
        line = ok[ok["provider"] == p].groupby(axis)["tflops"].median().sort_index()
        name = p if p not in folded else f"{p} (others)"
        ax.plot(line.index.astype(float), line.values, label=name, **styles[p])
    log_axes(ax, xbase=2)
    sizes = sorted(ok[axis].astype(int).unique())
    ax.set_xticks(sizes, [str(s) for s in sizes], rotation=45 if len(sizes) > 6 else 0)
    ax.set_xlabel(label, fontsize=8)
    ax.set_ylabel("TFLOP/s")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=6.5, frameon=False)
    ax.grid(True, which="major", alpha=0.3)


def _by_speed(rows: pd.DataFrame) -> list[str]:
    """Own providers, fastest first by their median TFLOP/s over the sizes they ran."""
    speed = rows.groupby("provider")["tflops"].median().sort_values(ascending=False)
    return list(speed.index)


def _skipped(rows: pd.DataFrame) -> str:
    """'Not drawn: p (reason); ...' for providers with no ok row in the run."""
    ok = set(rows.loc[rows["status"] == "ok", "provider"])
    rest = rows[~rows["provider"].isin(ok)]
    if rest.empty:
        return ""
    reasons = rest.groupby("provider")["reason"].first() if "reason" in rest else None
    parts = []
    for p in sorted(rest["provider"].unique()):
        why = reasons.get(p) if reasons is not None else None
        why = str(why).split(";")[0] if isinstance(why, str) and why else "no ok row"
        parts.append(f"{p} ({why})")
    return "Not drawn: " + "; ".join(parts) + "."
