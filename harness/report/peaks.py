"""Peaks per device: measured ceilings (op="ceiling" rows) and the datasheet.

The one adapter between the report pages and report/ceilings.py and report/datasheet.py:
everything a page needs from ceilings and the datasheet goes through this file.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import pandas as pd

from harness.report.ceilings import (
    CEILING_METRICS,
    PEAK_OF_DTYPE,
    attach_ceiling_fraction,
    measured_ceilings,
)
from harness.report.datasheet import datasheet_value, lookup

SOURCES = ("measured", "datasheet")
BANDWIDTH_METRICS = ("hbm_read_gbps", "hbm_copy_gbps")  # what bounds a kernel's min_bytes


@dataclass
class Peaks:
    """Compute peaks (TFLOP/s) and bandwidths (GB/s) of one device by metric and source;
    `measured_from` says where each measured value came from (ceilings.Ceiling.source)."""

    device_name: str
    measured: dict[str, float] = field(default_factory=dict)
    datasheet: dict[str, float] = field(default_factory=dict)
    sheet_name: str | None = None
    measured_from: dict[str, str] = field(default_factory=dict)
    vendor: str | None = None  # the datasheet entry's (nvidia, amd, intel), None when not listed

    def values(self, source: str) -> dict[str, float]:
        return self.measured if source == "measured" else self.datasheet

    def compute(self, dtype: str, source: str) -> float | None:
        return self.values(source).get(PEAK_OF_DTYPE.get(dtype, ""))

    def bandwidth(self, source: str) -> float | None:
        v = self.values(source)
        return next((v[m] for m in BANDWIDTH_METRICS if m in v), None)

    def origin(self, dtype: str | None, source: str) -> str:
        """Where the dtype's compute peak (dtype None: the HBM bandwidth) of `source` came from:
        'datasheet <part>', 'ceilings sweep (run <run>)' or 'ok row <provider> <problem> (run
        <run>)'."""
        if source != "measured":
            return f"datasheet {self.sheet_name or ''}".strip()
        metrics = [PEAK_OF_DTYPE.get(dtype or "", "")] if dtype else list(BANDWIDTH_METRICS)
        metric = next((m for m in metrics if m in self.measured), None)
        return self.measured_from.get(metric, "ceilings sweep") if metric else "none"

    def l2_bandwidth(self, source: str) -> float | None:
        return self.values(source).get("l2_read_gbps")

    def bound_s(self, flops: float, min_bytes: float, dtype: str, source: str) -> float | None:
        """Roofline time: the larger of flops at the dtype's peak and min_bytes at HBM speed."""
        peak, bw = self.compute(dtype, source), self.bandwidth(source)
        if not peak or not bw:
            return None
        return max(flops / (peak * 1e12), min_bytes / (bw * 1e9))

    def best_source(self, dtype: str) -> str | None:
        """measured when the device has both ceilings for this dtype, else the datasheet."""
        for source in SOURCES:
            if self.compute(dtype, source) and self.bandwidth(source):
                return source
        return None


def device_peaks(df: pd.DataFrame) -> dict[str, Peaks]:
    """{device_name: Peaks} for every device in the rows (ceiling rows of any run count, the
    latest per metric: ceilings.measured_ceilings)."""
    measured = measured_ceilings(df) if (df["op"] == "ceiling").any() else {}
    out: dict[str, Peaks] = {}
    devices = df[["device_name", "device_sm_count"]].drop_duplicates("device_name")
    for r in devices.itertuples():
        if not isinstance(r.device_name, str):
            continue
        sm = None if pd.isna(r.device_sm_count) else int(r.device_sm_count)
        spec = lookup(r.device_name, sm)
        sheet = {m: datasheet_value(spec, m) for m in CEILING_METRICS}
        mine = {m: c for (d, m), c in measured.items() if d == r.device_name}
        out[r.device_name] = Peaks(
            r.device_name,
            {m: c.value for m, c in mine.items()},
            {m: v for m, v in sheet.items() if v is not None},
            spec.name if spec else None,
            {m: c.source for m, c in mine.items()},
            spec.vendor if spec else None,
        )
    return out


def measured_hbm_read(peaks: dict[str, Peaks]) -> tuple[dict[str, float], dict[str, str]]:
    """Each device's measured HBM read ceiling (GB/s), where one was measured, and where each
    came from (its ceilings run)."""
    metric = "hbm_read_gbps"
    have = {d: p for d, p in peaks.items() if metric in p.measured}
    return (
        {d: p.measured[metric] for d, p in have.items()},
        {d: p.measured_from[metric] for d, p in have.items() if metric in p.measured_from},
    )


def _as_ceiling_rows(peaks: dict[str, Peaks], source: str) -> pd.DataFrame:
    """Peaks of one source dressed as ceiling rows, so one formula gives both fractions."""
    rows = []
    for p in peaks.values():
        for metric, value in p.values(source).items():
            unit = "gbps" if metric.endswith("_gbps") else "tflops"
            rows.append(
                {
                    "op": "ceiling",
                    "status": "ok",
                    "device_name": p.device_name,
                    "metric": metric,
                    "timestamp": "",
                    unit: value,
                }
            )
    cols = ["op", "status", "device_name", "metric", "timestamp", "gbps", "tflops"]
    return pd.DataFrame(rows, columns=cols)


def roofline_fraction(rows: pd.DataFrame, all_rows: pd.DataFrame, source: str) -> pd.Series:
    """achieved / min(dtype peak, intensity x HBM bandwidth) per row (NaN where unknown); the
    measured peaks are device_peaks' (a row faster than the ceilings run reads above 1)."""
    ceilings = _as_ceiling_rows(device_peaks(all_rows), source)
    if ceilings.empty or rows.empty:
        return pd.Series(math.nan, index=rows.index, dtype="float64")
    return attach_ceiling_fraction(rows, ceilings)["ceiling_fraction"]
