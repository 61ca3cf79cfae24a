"""The report's roofs per GPU, as tables: the measured ceilings the rooflines and `harness gaps`
use (the latest ceilings run's, beside the datasheet), and one cold read pass by size with its
fit, time = fixed + bytes / rate.

The fit is what a memory-bound kernel's floor looks like: on the committed rows a cold read pass
costs 4.75 us (H100) / 4.82 us (H200) plus its bytes at 3.12 / 4.65 TB/s, within 4% of every
probe from 16 MiB and 1.3% from 48 MiB to 4 GiB, so a 32 MiB decode GEMM's weight read cannot
take less than about 15 / 12 us."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from harness.report import read_once
from harness.report.ceilings import (
    CEILING_METRICS,
    above_roof,
    latest_per_metric,
    measured_ceilings,
)
from harness.report.data import fmt
from harness.report.peaks import device_peaks
from harness.report.tables import Table
from harness.units import fmt_bytes

# The smallest probe size the fit takes: below it the rate still climbs steeply and the probes
# differ in how they fill the SMs (torch.sum's grid; own Triton's before 8ed8bc0).
FIT_MIN_BYTES = 16 << 20


@dataclass(frozen=True)
class ReadFit:
    """A cold read pass of N bytes takes fixed_us + N / gbps (least squares over the sizes)."""

    fixed_us: float
    gbps: float
    sizes: int
    lo_bytes: int
    hi_bytes: int
    max_rel_err: float  # the largest |fit - measured| / measured over the fitted sizes

    def us(self, nbytes: float) -> float:
        return self.fixed_us + nbytes / self.gbps / 1e3

    def text(self) -> str:
        return (
            f"{self.fixed_us:.2f} us + bytes / {self.gbps:,.0f} GB/s (fit over {self.sizes} "
            f"sizes, {fmt_bytes(self.lo_bytes)}-{fmt_bytes(self.hi_bytes)}, within "
            f"{self.max_rel_err:.1%})"
        )


def read_fit(curve: pd.Series, min_bytes: int = FIT_MIN_BYTES) -> ReadFit | None:
    """The fit of a read-once curve (GB/s by bytes, read_once.curve) over its sizes from
    `min_bytes`; None with fewer than three sizes there."""
    sizes = curve[curve.index >= min_bytes]
    if len(sizes) < 3:
        return None
    nbytes = sizes.index.to_numpy(dtype=float)
    us = nbytes / sizes.to_numpy(dtype=float) / 1e3
    design = np.vstack([np.ones_like(nbytes), nbytes]).T
    (fixed, per_byte), *_ = np.linalg.lstsq(design, us, rcond=None)
    if per_byte <= 0:
        return None
    err = np.abs(design @ np.array([fixed, per_byte]) - us) / us
    return ReadFit(
        float(fixed),
        float(1 / per_byte / 1e3),
        len(sizes),
        int(nbytes.min()),
        int(nbytes.max()),
        float(err.max()),
    )


def _num(v: float | None) -> str:
    """Thousands with separators, smaller values to four figures."""
    if v is None or v != v:
        return ""
    return fmt(v, ",.0f") if abs(v) >= 1000 else fmt(v, ".4g")


def _unit(metric: str) -> str:
    return "GB/s" if metric.endswith("_gbps") else "TFLOP/s"


def _above_text(line: dict) -> str:
    """How many kernel rows beat a roof and the fastest: a roof the rows outrun is one the
    ceilings run did not find (session 92: gemm_llama's one-wave 1024x4096x14336 ran 1.075x
    the H100's fp8 roof, a shape the ceilings sweep then gained)."""
    n = int(line["rows_above"])
    return f"{n} row{'s' if n != 1 else ''}, up to {line['of_roof']:.3f}x: {line['row']}"


def _ceiling_lines(df: pd.DataFrame) -> list[dict]:
    ceil = latest_per_metric(df[(df["op"] == "ceiling") & (df["status"] == "ok")])
    peaks = device_peaks(df)
    rank = {m: i for i, m in enumerate(CEILING_METRICS)}
    above = {
        (a["device_name"], a["metric"]): _above_text(a)
        for a in above_roof(df, measured_ceilings(df)).to_dict("records")
    }
    lines = []
    for r in sorted(ceil.to_dict("records"), key=lambda r: (r["device_name"], rank[r["metric"]])):
        metric, device = r["metric"], r["device_name"]
        value = r["gbps"] if _unit(metric) == "GB/s" else r["tflops"]
        p = peaks.get(device)
        sheet = p.datasheet.get(metric) if p else None
        lines.append(
            {
                "device": device,
                "roof": metric,
                "measured": _num(value),
                "unit": _unit(metric),
                "datasheet": _num(sheet),
                "of_sheet": fmt(value / sheet, ".1%") if sheet else "",
                "by": r.get("provider") or "",
                "on": r.get("problem") or "",
                "run": r.get("run_id") or "",
                "date": str(r.get("timestamp") or "")[:10],
                "rows_above": above.get((device, metric), ""),
            }
        )
    return lines


def roofs_table(df: pd.DataFrame) -> Table:
    """Per GPU the roofs the report reads: each measured ceiling of the latest ceilings run, and
    the fit of one cold read pass where a probes_read_once run is among the rows."""
    lines = _ceiling_lines(df)
    for device, curve in sorted(read_once.curves_by_device(df).items()):
        fit = read_fit(curve)
        if fit is None:
            continue
        lines.append(
            {
                "device": device,
                "roof": "one cold read pass",
                "measured": f"{fit.fixed_us:.2f} us + bytes / {fit.gbps:,.0f} GB/s",
                "unit": "",
                "on": f"{fit.sizes} sizes, {fmt_bytes(fit.lo_bytes)}-{fmt_bytes(fit.hi_bytes)}, "
                f"within {fit.max_rel_err:.1%}",
            }
        )
    columns = ["device", "roof", "measured", "unit", "datasheet", "of_sheet", "by", "on", "run"]
    columns += ["date", "rows_above"]
    frame = pd.DataFrame([{c: line.get(c, "") for c in columns} for line in lines], columns=columns)
    caption = (
        "The roofs every fraction in this report is taken against: per GPU the latest ceilings "
        "run's best ok row per metric (`harness ceilings`; a faster kernel row sits above its "
        "roof and is counted, never absorbed: 'rows_above' gives how many of the latest rows "
        "outrun it and the fastest, a roof the ceilings run did not find), beside the "
        "datasheet; the L2 roof counts only "
        "re-read sets with one program per block. 'one cold read pass': the time of one read "
        "pass over N bytes after the L2 flush, fitted as fixed + N / rate over the probed sizes "
        f"from {fmt_bytes(FIT_MIN_BYTES)} (`harness run sweep=probes_read_once`): the floor of "
        "a memory-bound kernel that reads its operands once, the launch, first bytes and last "
        "wave included."
    )
    return Table("roofs", "Roofs: measured ceilings and one cold read", caption, frame)


def cold_read_table(df: pd.DataFrame) -> Table:
    """One cold read pass by size per GPU: the fastest probe's time and rate, its share of the
    measured HBM read ceiling, and the fit's time."""
    peaks = device_peaks(df)
    lines = []
    for device, curve in sorted(read_once.curves_by_device(df).items()):
        fit = read_fit(curve)
        p = peaks.get(device)
        ceiling = p.measured.get("hbm_read_gbps") if p else None
        for nbytes, gbps in curve.items():
            us = nbytes / gbps / 1e3
            lines.append(
                {
                    "device": device,
                    "bytes": fmt_bytes(int(nbytes)),
                    "us": fmt(us, ".2f"),
                    "GB/s": fmt(gbps, ",.0f"),
                    "of_ceiling": fmt(gbps / ceiling, ".3f") if ceiling else "",
                    "fit_us": fmt(fit.us(nbytes), ".2f") if fit else "",
                    "fitted": "yes" if fit and nbytes >= FIT_MIN_BYTES else "",
                }
            )
    caption = (
        "One read pass over N bytes after the L2 flush, the fastest probe per size (own Triton's "
        "stream read or torch.sum), beside the measured HBM read ceiling and the fit of the "
        "roofs table; `harness gaps` and `harness goals` take a memory-bound point's roof from "
        "this curve at its own bytes (linear in log bytes between sizes, none below the "
        "smallest)."
    )
    frame = pd.DataFrame(
        lines, columns=["device", "bytes", "us", "GB/s", "of_ceiling", "fit_us", "fitted"]
    )
    return Table("cold_read", "One cold read pass by size", caption, frame)
