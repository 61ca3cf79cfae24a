"""Tables a thesis can paste: cross-GPU, cross-vendor, composed steps and rows that are not ok,
each written as markdown, LaTeX (booktabs) and HTML."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
from tabulate import tabulate

from harness.measure.stats import bootstrap_median_ratio
from harness.report.data import (
    IDENTITY,
    SPEED_OPS,
    fmt,
    is_speed,
    latest,
    smoke_reason,
    with_device,
)
from harness.report.peaks import roofline_fraction
from harness.report.reference import NO_VENDOR, fastest

# Row strings (device names, reasons, problems) land in files other tools render: in a markdown
# cell a '|' ends the cell and '<b>' is live HTML, so both are escaped (backslash first, so an
# escaped pipe cannot be undone by a backslash before it); a newline would end the table row.
_MD_ESCAPES = str.maketrans(
    {"\\": "\\\\", "|": "\\|", "&": "&amp;", "<": "&lt;", ">": "&gt;", "\n": " ", "\r": " "}
)
_ONE_LINE = str.maketrans({"\n": " ", "\r": " "})

N_BOOT = 500  # bootstrap resamples per speedup CI (on 2000-sample H200 rows the bounds move < 0.01% up to 4000)


@dataclass
class Table:
    """A table of display strings with the files it is written to."""

    stem: str
    title: str
    caption: str
    frame: pd.DataFrame

    def markdown(self) -> str:
        if self.frame.empty:
            return "(none)"
        return tabulate(
            _cells(self.frame, _MD_ESCAPES), headers="keys", tablefmt="github", showindex=False
        )

    def latex(self) -> str:
        # latex_booktabs escapes LaTeX's specials (& % $ # _ { } ~ ^ \\ < >) in cells and headers
        # itself (latex_raw would not); a blank line inside a tabular is an error, so one line.
        frame = _cells(self.frame, _ONE_LINE)
        body = tabulate(frame, headers="keys", tablefmt="latex_booktabs", showindex=False)
        comment = f"{self.title}: {self.caption}".translate(_ONE_LINE)
        return f"% {comment}\n% needs \\usepackage{{booktabs}}\n{body}\n"

    def html(self) -> str:
        if self.frame.empty:
            return "<p>(none)</p>"
        return self.frame.to_html(index=False, escape=True, border=0, classes="data", na_rep="")

    def write(self, out_dir: Path) -> dict[str, Path]:
        folder = Path(out_dir) / "tables"
        folder.mkdir(parents=True, exist_ok=True)
        paths = {}
        for ext, text in (
            ("md", self.markdown() + "\n"),
            ("tex", self.latex()),
            ("html", self.html() + "\n"),
        ):
            paths[ext] = folder / f"{self.stem}.{ext}"
            paths[ext].write_text(text)
        return paths


def _cells(frame: pd.DataFrame, table: dict[int, str]) -> pd.DataFrame:
    """The frame with str.translate(table) applied to its string cells and column names."""

    def one(v):
        return v.translate(table) if isinstance(v, str) else v

    return frame.rename(columns=lambda c: one(str(c))).map(one)


def _pct(v) -> str:
    return "" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{100 * v:.1f}%"


def speed_rows(df: pd.DataFrame) -> pd.DataFrame:
    """Latest ok GEMM / attention row per point and device, with both roofline fractions."""
    ok = df[is_speed(df) & df["op"].isin(SPEED_OPS)]
    ok = with_device(latest(ok, [*IDENTITY, "device_name"]))
    ok["roof_measured"] = roofline_fraction(ok, df, "measured")
    ok["roof_datasheet"] = roofline_fraction(ok, df, "datasheet")
    return ok.sort_values(["op", "problem", "provider", "device"], kind="stable")


def cross_gpu_table(df: pd.DataFrame) -> Table:
    """One line per (problem, provider); per device its TFLOP/s and fraction of the roofline."""
    ok = speed_rows(df)
    devices = sorted(ok["device"].unique())
    lines = []
    for (op, problem, provider), g in ok.groupby(["op", "problem", "provider"], sort=True):
        line = {"op": op, "problem": problem, "provider": provider}
        by_dev = {r["device"]: r for r in g.to_dict("records")}
        for d in devices:
            r = by_dev.get(d, {})
            line[f"{d} TFLOP/s"] = fmt(r.get("tflops"))
            line[f"{d} % roof (measured)"] = _pct(r.get("roof_measured"))
            line[f"{d} % roof (datasheet)"] = _pct(r.get("roof_datasheet"))
        lines.append(line)
    frame = pd.DataFrame(lines)
    if not frame.empty:  # a device without measured ceilings leaves its column empty: drop it
        frame = frame.loc[:, (frame != "").any(axis=0)]
    caption = (
        "Latest ok row per point. % roof: TFLOP/s over min(dtype peak, intensity x HBM "
        "bandwidth), from measured ceilings (op=ceiling rows) or the datasheet."
    )
    return Table("cross_gpu", "Cross-GPU", caption, frame)


def _speedup(row: dict, base: dict) -> tuple[float, float, float]:
    """reference median / row median with a bootstrap 95% CI from the raw samples."""
    a, b = row.get("samples_ms"), base.get("samples_ms")
    if a is not None and b is not None and len(a) >= 3 and len(b) >= 3:
        return bootstrap_median_ratio(list(a), list(b), n_boot=N_BOOT)
    r = base["latency_ms_median"] / row["latency_ms_median"]
    return math.nan, r, math.nan


def cross_vendor_table(df: pd.DataFrame) -> Table:
    """Per device and point: each provider's speed and its speedup over the reference
    (harness.report.reference: the fastest ok vendor row of the point, named in the `reference`
    column). A point without a vendor row lists its rows with no speedup; a point whose only
    row is a vendor row is left out."""
    ok = speed_rows(df)
    lines = []
    for (device, op, problem), g in ok.groupby(["device", "op", "problem"], sort=True):
        base = fastest(g.to_dict("records"))
        if base is not None and g["provider"].nunique() < 2:
            continue  # a lone vendor row: a speedup over itself says nothing
        for r in g.sort_values(["latency_ms_median", "provider"]).to_dict("records"):
            speedup = ""
            if base is not None:
                lo, s, hi = _speedup(r, base)
                speedup = f"{s:.3f}" + (f" [{lo:.3f}, {hi:.3f}]" if not math.isnan(lo) else "")
            roof = r["roof_measured"] if not pd.isna(r["roof_measured"]) else r["roof_datasheet"]
            src = "m" if not pd.isna(r["roof_measured"]) else "ds"
            lines.append(
                {
                    "device": device,
                    "op": op,
                    "problem": problem,
                    "provider": r["provider"],
                    "family": r["family"],
                    "median ms": fmt(r["latency_ms_median"]),
                    "TFLOP/s": fmt(r["tflops"]),
                    "GB/s": fmt(r["gbps"]),
                    "% roof": f"{_pct(roof)} ({src})" if _pct(roof) else "",
                    "speedup (95% CI)": speedup,
                    "reference": base["provider"] if base is not None else NO_VENDOR,
                }
            )
    caption = (
        "Speedup = reference median latency / provider median latency, CI by bootstrap "
        "of the raw samples; reference = the fastest ok vendor-library row of the point "
        f"on that device, named per line ('{NO_VENDOR}': none measured, no speedup). "
        "% roof (m): of the measured roofline, (ds): of the datasheet's."
    )
    return Table("cross_vendor", "Cross-vendor", caption, pd.DataFrame(lines))


def own_vs_vendor_table(df: pd.DataFrame) -> Table:
    """Per GPU, op, phase and dtype: the best own and best vendor row as % of that GPU's own
    roofline (harness.report.crossvendor), so GPUs of different vendors compare fairly."""
    from harness.report.crossvendor import normalised_table, own_vs_vendor

    table = own_vs_vendor(normalised_table(df))
    if table.empty:  # no GPU rows (a CPU run) or nothing with a roofline: an empty table, no crash
        return Table(
            "own_vs_vendor",
            "Own vs vendor, each GPU on its own roofline",
            "No ok GEMM or attention rows on a GPU.",
            pd.DataFrame(),
        )
    out = table.astype(object).where(table.notna(), "")
    for col in ("own_pct_roofline", "vendor_pct_roofline"):
        out[col] = [f"{v:.1f}%" if v != "" else "" for v in out[col]]
    out["own_over_vendor"] = [fmt(v, ".3f") if v != "" else "" for v in out["own_over_vendor"]]
    caption = (
        "Best own and best vendor row per (GPU, op, phase, dtype), each as % of min(dtype "
        "peak, intensity x HBM) of that GPU: measured ceilings, else its datasheet "
        "(ceiling_source says which); own_over_vendor = own % / vendor %."
    )
    return Table("own_vs_vendor", "Own vs vendor, each GPU on its own roofline", caption, out)


def status_table(df: pd.DataFrame) -> tuple[Table, Table]:
    """Rows whose status is not ok: a count per (status, provider, reason), and every row."""
    bad = with_device(df[(df["status"] != "ok") & (df["op"] != "ceiling")])
    cols = ["status", "provider", "reason"]
    counts = bad.fillna({"reason": ""}).groupby(cols, sort=True).size().reset_index(name="rows")
    every = bad.sort_values(["run_id", "op", "problem", "provider"])[
        ["run_id", "device", "op", "provider", "problem", "status", "reason"]
    ].fillna("")
    return (
        Table("not_ok_summary", "Rows not ok (counts)", "never plotted as speed", counts),
        Table("not_ok_rows", "Rows not ok", "every row whose status is not ok", every),
    )


def unstable_table(df: pd.DataFrame) -> Table:
    """Ok rows the spread guard flagged: their median stands in the plots, but their samples
    were spread or bimodal after every attempt (or a stream hold expired), so read them so."""
    cols = [
        "run_id",
        "device",
        "op",
        "provider",
        "problem",
        "latency_ms_median",
        "latency_p90_over_p10",
        "timing_attempts",
        "unstable_reason",
    ]
    ok = df[(df["status"] == "ok") & (df["op"] != "ceiling")]
    flagged = ok[ok.get("unstable", pd.Series(False, index=ok.index)).fillna(False).astype(bool)]
    out = with_device(flagged).sort_values(["run_id", "op", "problem", "provider"])[cols].copy()
    out["latency_ms_median"] = [fmt(v, ".4g") for v in out["latency_ms_median"]]
    out["latency_p90_over_p10"] = [fmt(v, ".3f") for v in out["latency_p90_over_p10"]]
    caption = (
        "ok rows whose samples stayed spread (p90/p10 above the protocol's max_spread) "
        "or whose stream hold expired, after every timing attempt; "
        f"{len(out)} of {len(ok)} ok rows"
    )
    return Table("unstable_rows", "Rows with unstable samples", caption, out.fillna(""))


def set_aside_table(aside: pd.DataFrame) -> Table:
    """Smoke and CPU rows (data.is_smoke), which no headline figure or table shows: one line per
    run and device with why it was set aside and how many of its rows are ok."""
    cols = ["run", "sweep", "device", "why", "rows", "ok", "ops"]
    lines = []
    if not aside.empty:
        rows = with_device(aside).assign(why=[smoke_reason(r) for r in aside.to_dict("records")])
        for (run, device, why), g in rows.groupby(["run_id", "device", "why"], sort=True):
            sweep = g["sweep"].dropna()
            lines.append(
                {
                    "run": run,
                    "sweep": sweep.iloc[0] if len(sweep) else "",
                    "device": device,
                    "why": why,
                    "rows": len(g),
                    "ok": int((g["status"] == "ok").sum()),
                    "ops": ", ".join(sorted(set(g["op"].dropna()))),
                }
            )
    caption = (
        "Rows kept out of every figure and table but the Runs table and Rows not ok "
        "(which lists those that are not ok): CPU rows, rows of a smoke sweep (smoke, "
        "microbench_smoke, collectives_smoke: CPU-sized points that time launch "
        "overhead, not kernels), and GEMM / attention rows of a run that names no sweep "
        "whose problem moves under 1 MiB."
    )
    return Table("set_aside", "Smoke and CPU rows", caption, pd.DataFrame(lines, columns=cols))


def composed_table(frame: pd.DataFrame, stem: str, title: str, caption: str) -> Table:
    """A compose.steps_table frame with its numbers formatted."""
    out = frame.copy()
    for col, spec in (
        ("layer ms", ".4g"),
        ("layers ms", ".4g"),
        ("step ms", ".4g"),
        ("ms/token", ".4g"),
        ("tokens/s", ".4g"),
        ("bound tokens/s", ".4g"),
        ("% of bound", ".1f"),
        ("measured layer ms (graph)", ".4g"),
        ("measured layer ms (eager)", ".4g"),
        ("PyTorch layer ms (eager)", ".4g"),
        ("PyTorch layer ms (compiled)", ".4g"),
        ("composed / measured", ".3f"),
    ):
        out[col] = [fmt(v, spec) for v in out[col]]
    return Table(stem, title, caption, out)
