"""The reference a ratio is taken against: per point, the fastest ok vendor-library row.

A point (device, op, problem) often has several vendor rows: cuBLAS and cuBLASLt for a GEMM;
SDPA's cuDNN, flash, efficient and math backends, the gathered paged baseline and the
FlashAttention / FlashInfer libraries for attention. Every own/vendor ratio of the report and of
`harness gaps` is taken against the fastest of them and names it, so a ratio never flatters an
own kernel by standing it beside a slow backend. No vendor row is left out for being a strawman:
the name of the reference says which one it was.

The family comes from the row's `family` column (the provider registry writes it): the report
reads rows only. Only ok rows with a finite median count. Ties go to the lower median, then
the provider name, so the same rows always give the same reference.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

import pandas as pd

POINT = ("device", "op", "problem")  # what a reference is picked per
NO_VENDOR = "(no ok vendor row)"  # the reference column of a point that has none


def _median(row: Mapping) -> float | None:
    raw = row.get("latency_ms_median")
    if raw is None:
        return None
    try:
        v = float(raw)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) and v > 0 else None


def fastest(rows: Iterable[Mapping], family: str | None = "vendor") -> dict | None:
    """The ok row of `family` (None: any) with the lowest median latency, ties to the provider
    name; None when there is none. `rows` are the rows of one point."""
    ok = [
        r
        for r in rows
        if r.get("status") == "ok"
        and _median(r) is not None
        and (family is None or r.get("family") == family)
    ]
    if not ok:
        return None
    best = min(ok, key=lambda r: (_median(r), str(r.get("provider"))))
    return dict(best)


def references(rows: pd.DataFrame, keys: tuple[str, ...] = POINT) -> pd.DataFrame:
    """One line per point of `rows` (grouped by `keys`): `reference` (the fastest ok vendor
    provider, NO_VENDOR where none) and `reference_ms` (its median, NaN where none)."""
    lines = []
    for key, g in rows.groupby(list(keys), sort=True):
        ref = fastest(g.to_dict("records"))
        lines.append(
            {
                **dict(zip(keys, key, strict=True)),
                "reference": ref["provider"] if ref else NO_VENDOR,
                "reference_ms": _median(ref) if ref else math.nan,
            }
        )
    return pd.DataFrame(lines, columns=[*keys, "reference", "reference_ms"])
