"""Cross-vendor table: every GPU normalised to its own ceilings.

A TFLOP/s figure from an MI300X and one from an H200 compare the parts as much as the kernels.
Here each GPU's best own and best vendor result per (op, phase, dtype) is divided by that GPU's
own ceilings: its measured ceilings (op="ceiling" rows in the frame, written by `harness
ceilings`: report.ceilings.measured_ceilings, the ceilings run's values), falling back
metric by metric to the datasheet peak, always labelled with its source.

    % roofline = TFLOP/s / min(compute ceiling of the dtype, intensity x HBM ceiling)
    % compute  = TFLOP/s / compute ceiling of the dtype   (tensor_<dtype>_tflops)
    % HBM      = GB/s / HBM ceiling                        (hbm_read_gbps, else hbm_copy_gbps)

"Best" is the point with the highest % roofline (highest TFLOP/s where no ceiling is known),
among the latest ok row of each (GPU, provider, problem). Pandas only: no torch, no kernel.
"""

from __future__ import annotations

import math

import pandas as pd
from tabulate import tabulate

from harness.report.ceilings import PEAK_OF_DTYPE, measured_ceilings
from harness.report.datasheet import datasheet_value, lookup

SPEED_OPS = ("gemm", "attention")
HBM_METRICS = ("hbm_read_gbps", "hbm_copy_gbps")
GROUP = ["gpu", "vendor", "arch", "op", "phase", "dtype"]
COLUMNS = [
    *GROUP,
    "family",
    "provider",
    "problem",
    "tflops",
    "gbps",
    "pct_roofline",
    "bound",
    "pct_compute",
    "pct_hbm",
    "compute_ceiling_tflops",
    "hbm_ceiling_gbps",
    "ceiling_source",
]


def _num(v) -> float | None:
    return None if v is None or (isinstance(v, float) and math.isnan(v)) else float(v)


class _Ceilings:
    """One GPU's ceilings: measured where the frame has them, else its datasheet's."""

    def __init__(self, name: str, sm_count, measured: dict[tuple[str, str], float]) -> None:
        self.measured = {m: v for (d, m), v in measured.items() if d == name}
        sm = None if sm_count is None or pd.isna(sm_count) else int(sm_count)
        self.spec = lookup(name, sm)  # one GCD / stack of a multi-die package when sm says so

    def get(self, metrics: tuple[str, ...]) -> tuple[float | None, str]:
        for m in metrics:
            if m in self.measured:
                return self.measured[m], "measured"
        for m in metrics:
            if (v := datasheet_value(self.spec, m)) is not None:
                return v, "datasheet"
        return None, "none"


def _latest_ok(rows: pd.DataFrame, include_cpu: bool) -> pd.DataFrame:
    ok = rows[(rows["status"] == "ok") & rows["op"].isin(SPEED_OPS) & rows["tflops"].notna()]
    if not include_cpu:
        ok = ok[ok["device_type"] != "cpu"]
    ok = ok.sort_values("timestamp", kind="stable", na_position="first")
    return ok.drop_duplicates(["device_name", "provider", "problem"], keep="last")


def normalised_table(rows: pd.DataFrame, include_cpu: bool = False) -> pd.DataFrame:
    """One line per (GPU, op, phase, dtype, family): the best row as % of that GPU's ceilings.

    `rows` is a store frame (harness.store.read_rows); its op="ceiling" rows supply the measured
    ceilings. CPU rows are left out unless `include_cpu` (they have no ceilings to speak of)."""
    measured = {}
    if (rows["op"] == "ceiling").any():  # the ceilings run's: a faster row may sit above
        measured = {k: c.value for k, c in measured_ceilings(rows).items()}
    ok = _latest_ok(rows, include_cpu)
    ceilings: dict[str, _Ceilings] = {}
    lines = []
    for r in ok.to_dict("records"):
        dev = r["device_name"]
        if dev not in ceilings:
            ceilings[dev] = _Ceilings(dev, r.get("device_sm_count"), measured)
        c = ceilings[dev]
        peak, peak_src = c.get((PEAK_OF_DTYPE.get(r["dtype"], ""),))
        bw, bw_src = c.get(HBM_METRICS)
        tflops, gbps = float(r["tflops"]), _num(r.get("gbps"))
        intensity = _num(r.get("intensity_flop_per_byte"))
        line = {
            "gpu": dev,
            "vendor": r.get("device_vendor"),
            "arch": r.get("device_arch"),
            "op": r["op"],
            "phase": r["phase"] if isinstance(r.get("phase"), str) else "-",
            "dtype": r["dtype"],
            "family": r["family"],
            "provider": r["provider"],
            "problem": r["problem"],
            "tflops": tflops,
            "gbps": gbps,
            "compute_ceiling_tflops": peak,
            "hbm_ceiling_gbps": bw,
            "pct_compute": 100 * tflops / peak if peak else math.nan,
            "pct_hbm": 100 * gbps / bw if bw and gbps is not None else math.nan,
            "pct_roofline": math.nan,
            "bound": None,
        }
        if peak and bw and intensity:
            mem_bound = intensity * bw / 1e3  # FLOP/B x GB/s = GFLOP/s -> TFLOP/s
            line["pct_roofline"] = 100 * tflops / min(peak, mem_bound)
            line["bound"] = "compute" if peak <= mem_bound else "memory"
        sources = {s for s in (peak_src, bw_src) if s != "none"}
        line["ceiling_source"] = (
            sources.pop()
            if len(sources) == 1
            else f"{peak_src} compute, {bw_src} HBM"
            if sources
            else "none"
        )
        lines.append(line)
    table = pd.DataFrame(lines, columns=COLUMNS)
    if table.empty:
        return table
    # Best per group: highest % roofline, TFLOP/s breaking ties and standing in where unknown.
    table["_rank"] = table["pct_roofline"].fillna(-1.0)
    table = table.sort_values(["_rank", "tflops"], ascending=False, kind="stable")
    best = table.drop_duplicates([*GROUP, "family"], keep="first").drop(columns="_rank")
    return best.sort_values([*GROUP, "family"], kind="stable").reset_index(drop=True)


def own_vs_vendor(table: pd.DataFrame) -> pd.DataFrame:
    """Per (GPU, op, phase, dtype): the best own and best vendor % roofline side by side, and
    own / vendor (how close the project's kernels come to the vendor's, on that GPU's terms)."""
    out = []
    for key, g in table.groupby(GROUP, sort=True, dropna=False):
        fam = {r["family"]: r for r in g.to_dict("records")}
        own, ven = fam.get("own", {}), fam.get("vendor", {})
        o, v = own.get("pct_roofline", math.nan), ven.get("pct_roofline", math.nan)
        out.append(
            {
                **dict(zip(GROUP, key, strict=True)),
                "own_provider": own.get("provider"),
                "own_pct_roofline": o,
                "vendor_provider": ven.get("provider"),
                "vendor_pct_roofline": v,
                "own_over_vendor": o / v if v and not math.isnan(v) else math.nan,
                "ceiling_source": "; ".join(sorted({r["ceiling_source"] for r in fam.values()})),
            }
        )
    return pd.DataFrame(out)


def render(table: pd.DataFrame, tablefmt: str = "github") -> str:
    """The table as text, percentages to one decimal."""
    if table.empty:
        return "(no ok GEMM or attention rows on a GPU)"
    shown = table.copy()
    for col in shown.columns:
        if col.startswith("pct_") or col.endswith("_pct_roofline"):
            shown[col] = shown[col].map(lambda v: "" if pd.isna(v) else f"{v:.1f}%")
    shown = shown.astype(object).where(shown.notna(), "")  # unknowns print empty, not "nan"
    return tabulate(shown, headers="keys", tablefmt=tablefmt, showindex=False, floatfmt=".4g")
