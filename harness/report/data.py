"""Rows in, tidy frames out: loading runs, point identity, latest row per point, axis keys.

A point's identity across runs ignores the run and the device instance: op, provider, problem
and the protocol fields that change what is measured. Where one point appears in several runs
(an A/A pair), tables and compositions use the latest row; rooflines plot every row.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pandas as pd

from harness import store
from harness.workloads.derive import AXES

IDENTITY = ("op", "provider", "problem", "timer", "l2", "fill", "seed")
SPEED_OPS = ("gemm", "attention")  # ops a roofline, a table and a composition speak about
_INT_AXES = {
    "m",
    "n",
    "k",
    "batch",
    "q_heads",
    "kv_heads",
    "q_len",
    "kv_len",
    "head_dim",
    "page_size",
}


class NoRows(ValueError):
    """The paths hold no rows (a ValueError: the CLI turns it into one line, exit 2)."""


def load(paths: list[str | Path]) -> pd.DataFrame:
    """Rows of every run under `paths`; raises ValueError for a missing path or no rows."""
    for p in paths:
        if not Path(p).exists():
            raise ValueError(f"path: '{p}' does not exist; allowed: run folders or their parents")
    df = store.read_rows(*paths)
    if df.empty:
        raise NoRows(f"path: no rows under {', '.join(map(str, paths))}; allowed: run folders")
    return df


def is_speed(df: pd.DataFrame) -> pd.Series:
    """Rows that may be plotted or tabled as speed: status ok with a median."""
    return (df["status"] == "ok") & df["latency_ms_median"].notna()


def latest(df: pd.DataFrame, keys: tuple[str, ...] | list[str]) -> pd.DataFrame:
    """The latest row (by timestamp) of each group of `keys`."""
    if df.empty:
        return df
    keys = list(keys)
    order = df.assign(_ts=df["timestamp"].fillna("")).sort_values("_ts", kind="stable")
    filled = order[keys].astype(str)  # None / NaN group together instead of being dropped
    keep = ~filled.duplicated(keep="last")
    return order[keep].drop(columns="_ts")


def device_of(row: Any) -> str:
    """'NVIDIA H200' for a GPU, 'cpu: <name> (not GPU numbers)' for the CPU path."""
    name = row.get("device_name") if isinstance(row, dict) else getattr(row, "device_name", None)
    kind = row.get("device_type") if isinstance(row, dict) else getattr(row, "device_type", None)
    name = name if isinstance(name, str) and name else "unknown device"
    return f"cpu: {name} (not GPU numbers)" if kind == "cpu" else name


def with_device(df: pd.DataFrame) -> pd.DataFrame:
    out = df.copy()
    out["device"] = [device_of(r) for r in df[["device_name", "device_type"]].to_dict("records")]
    return out


def _cast(axis: str, v: Any) -> Any:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return None
    if axis in _INT_AXES:
        return int(v)
    if axis == "causal":
        return bool(v)
    return str(v)


def axes_key(op: str, values: dict[str, Any]) -> tuple:
    """(op, axis values...) with numbers as ints: rows and WorkItems meet on this key."""
    return (op, *(_cast(a, values.get(a)) for a in AXES[op]))


def row_axes_keys(df: pd.DataFrame) -> list[tuple | None]:
    """axes_key of every row (None for ops without problem axes)."""
    out = []
    for r in df.to_dict("records"):
        out.append(axes_key(r["op"], r) if r.get("op") in AXES else None)
    return out


def fmt(v: Any, spec: str = ".4g") -> str:
    """A number for a table cell; blank for missing."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return ""
    return format(float(v), spec)
