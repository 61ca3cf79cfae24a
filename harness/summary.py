"""Terminal tables of a run's rows (reports proper live in harness.report)."""

from __future__ import annotations

import pandas as pd
from tabulate import tabulate


def run_table(df: pd.DataFrame, max_rows: int = 80) -> str:
    """Provider, problem, status and speed per row; non-ok rows show their reason, never a speed."""
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
                f"{r.latency_ms_median:.4g}" if ok else "",
                f"{r.tflops:.4g}" if ok else "",
                f"{r.gbps:.4g}" if ok else "",
                f"{r.rel_err:.1e}" if pd.notna(r.rel_err) else "",
                "" if ok else (r.reason or "")[:70],
            ]
        )
    head = ["provider", "problem", "status", "median ms", "TFLOP/s", "GB/s", "rel err", "reason"]
    text = tabulate(rows[:max_rows], headers=head, tablefmt="github")
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
