"""Terminal tables of a run's rows (reports proper live in harness.report)."""

from __future__ import annotations

import math

import pandas as pd
from tabulate import tabulate

# SI prefixes for throughput; none above T, so a peak reads 1412 TFLOP/s as datasheets write it.
_PREFIXES = (("T", 1e12), ("G", 1e9), ("M", 1e6), ("k", 1e3), ("", 1.0))


def fixed(value: float, digits: int = 4) -> str:
    """`value` to `digits` significant digits in positional notation, never 1.2e-06."""
    if value == 0 or not math.isfinite(value):
        return f"{value:g}"
    decimals = max(0, digits - 1 - math.floor(math.log10(abs(value))))
    return f"{value:.{decimals}f}"


def si(value: float | None, unit: str, scale: float = 1.0) -> str:
    """A rate (value x scale in base units: FLOP/s, B/s) with the SI prefix that leaves 1 to 999
    in front: si(1.173e-6, "FLOP/s", 1e12) == "1.173 MFLOP/s"; "" when there is none (NaN)."""
    if value is None or not math.isfinite(value):
        return ""
    rounded = float(f"{value * scale:.4g}")  # choose the prefix after rounding: 999.96 M is 1.000 G
    prefix, size = next(((p, s) for p, s in _PREFIXES if abs(rounded) >= s), _PREFIXES[-1])
    return f"{fixed(rounded / size)} {prefix}{unit}"


def run_table(df: pd.DataFrame, max_rows: int = 80) -> str:
    """Provider, problem, status and speed per row; non-ok rows show their reason, never a speed.
    Rates carry their SI unit per row (a CPU row in MFLOP/s beside a GPU row in TFLOP/s); the
    stored columns stay tflops and gbps."""
    if df.empty:
        return "(no rows)"
    rows = []
    for r in df.sort_values(["op", "problem", "provider"]).itertuples():
        ok = r.status == "ok"
        rows.append(
            [
                r.provider,
                r.problem,
                r.status,
                fixed(r.latency_ms_median) if ok else "",
                si(r.tflops, "FLOP/s", 1e12) if ok else "",  # tflops: TFLOP/s
                si(r.gbps, "B/s", 1e9) if ok else "",  # gbps: GB/s
                f"{r.rel_err:.1e}" if pd.notna(r.rel_err) else "",
                "" if ok else (r.reason or "")[:70],
            ]
        )
    head = ["provider", "problem", "status", "median ms", "FLOP/s", "bytes/s", "rel err", "reason"]
    align = ("left", "left", "left", "right", "right", "right", "right", "left")
    text = tabulate(
        rows[:max_rows], headers=head, tablefmt="github", colalign=align, disable_numparse=True
    )
    if len(rows) > max_rows:
        text += f"\n... {len(rows) - max_rows} more rows"
    return text


def device_banner(df: pd.DataFrame) -> str:
    if df.empty:
        return ""
    first = df.iloc[0]
    label = (
        "CPU (Triton interpreter / torch CPU): not GPU numbers"
        if first.device_type == "cpu"
        else "GPU"
    )
    return f"device={first.device_type} [{label}]: {first.device_name}; timer={first.timer}, l2={first.l2}"
