"""Terminal tables of microbenchmark rows (parquet in, text out; no torch, no kernels):
ceilings beside the datasheet, bandwidth versus working set, latency beside Luo et al."""

from __future__ import annotations

import pandas as pd
from tabulate import tabulate

from harness.report.ceilings import (
    CEILING_METRICS,
    attach_ceiling_fraction,
    latest_per_metric,
    readers_per_block,
)
from harness.report.datasheet import datasheet_value, lookup
from harness.report.levels import LEVELS, level_of
from harness.report.published import LUO_2024
from harness.report.roofs_table import cold_read_table, roofs_table
from harness.units import fmt_bytes


def _num(v, fmt: str = ".4g") -> str:
    return "" if v is None or pd.isna(v) else format(float(v), fmt)


def _col(df: pd.DataFrame, name: str) -> pd.Series:
    return df[name] if name in df else pd.Series([None] * len(df), index=df.index, dtype=object)


def ceilings_table(ceilings: pd.DataFrame) -> str:
    """Per device and metric: measured value, datasheet value, their ratio, who achieved it."""
    if ceilings.empty:
        return "(no ceiling rows)"
    rank = {m: i for i, m in enumerate(CEILING_METRICS)}
    ceilings = latest_per_metric(ceilings)
    ceilings = ceilings.sort_values("metric", key=lambda m: m.map(rank))
    lines = []
    for device, rows in ceilings.groupby("device_name", dropna=False):
        first = rows.iloc[0]
        spec = lookup(device, _col(rows, "device_sm_count").iloc[0])
        body = []
        for r in rows.to_dict("records"):
            unit = "GB/s" if r["metric"].endswith("_gbps") else "TFLOP/s"
            value = r.get("gbps") if unit == "GB/s" else r.get("tflops")
            sheet = datasheet_value(spec, r["metric"])
            ok = r["status"] == "ok"
            ratio = float(value) / sheet if ok and sheet else None
            body.append(
                [
                    r["metric"],
                    _num(value) if ok else "",
                    unit,
                    _num(sheet),
                    _num(ratio, ".1%"),
                    r.get("provider") or "" if ok else "",
                    (r.get("problem") or "") if ok else (r.get("reason") or "")[:60],
                ]
            )
        name = spec.name if spec else "no datasheet entry"
        lines.append(f"{first.get('device_type')}:{device}  [datasheet: {name}]")
        head = ["metric", "measured", "unit", "datasheet", "of sheet", "by", "on / why not"]
        lines.append(tabulate(body, headers=head, tablefmt="github"))
    return "\n\n".join(lines)


def bandwidth_table(rows: pd.DataFrame) -> str:
    """Memory rows by metric and working set: GB/s and the level the set sits in."""
    mem = rows[(rows["op"] == "memory") & (rows["status"] == "ok")]
    if mem.empty:
        return "(no memory rows)"
    body = []
    order = mem.sort_values(["device_name", "metric", "working_set_bytes", "provider"])
    readers = readers_per_block(order)
    for r, shared in zip(order.to_dict("records"), readers > 1, strict=True):
        passes = int(r["traffic_bytes"] // r["working_set_bytes"]) if r.get("traffic_bytes") else 1
        level = level_of(int(r["working_set_bytes"]), r.get("device_l2_bytes"))
        if passes == 1 and level != "global" and r.get("l2") != "hot":
            level = "cold pass"  # read once after the L2 flush: from memory, whatever its size
        elif shared and level == "l2":
            level = "l2, shared lines"  # several programs on one block at once: no L2 ceiling
        body.append(
            [
                r["device_name"],
                r["metric"],
                fmt_bytes(int(r["working_set_bytes"])),
                passes,
                level or "-",
                r["provider"],
                _num(r["gbps"], ".5g"),
            ]
        )
    head = ["device", "metric", "working set", "passes", "level", "provider", "GB/s"]
    return tabulate(body, headers=head, tablefmt="github")


def latency_table(rows: pd.DataFrame) -> str:
    """Pointer-chase rows: ns and cycles per hop, beside Luo et al.'s cycles for that level."""
    lat = rows[(rows["op"] == "latency") & (rows["status"] == "ok")]
    if lat.empty:
        return "(no latency rows)"
    devices = list(LUO_2024.cycles)
    body = []
    order = lat.sort_values(["device_name", "working_set_bytes", "stride_bytes"])
    for r in order.to_dict("records"):
        level = level_of(int(r["working_set_bytes"]), r.get("device_l2_bytes"))
        pub = [_num(LUO_2024.cycles[d].get(level)) if level else "" for d in devices]
        body.append(
            [
                r["device_name"],
                fmt_bytes(int(r["working_set_bytes"])),
                int(r["stride_bytes"]),
                level or "-",
                _num(r.get("latency_ns"), ".1f"),
                _num(r.get("latency_cycles"), ".1f"),
                _num(r.get("sm_clock_mhz"), ".0f"),
                *pub,
            ]
        )
    head = ["device", "working set", "stride", "level", "ns/hop", "cycles/hop", "SM MHz"]
    head += [f"Luo {d}" for d in devices]
    note = f"published cycles: {LUO_2024.citation}"
    return tabulate(body, headers=head, tablefmt="github") + "\n" + note


def latency_by_level(rows: pd.DataFrame) -> pd.DataFrame:
    """Median ns and cycles per hop per device and level, with Luo et al.'s H800 cycles."""
    lat = rows[(rows["op"] == "latency") & (rows["status"] == "ok")].copy()
    if lat.empty:
        return pd.DataFrame(columns=["device_name", "level", "latency_ns", "latency_cycles"])
    lat["level"] = [
        level_of(int(w), l2)
        for w, l2 in zip(lat["working_set_bytes"], _col(lat, "device_l2_bytes"), strict=True)
    ]
    lat = lat[lat["level"].isin(LEVELS)]
    out = lat.groupby(["device_name", "level"])[["latency_ns", "latency_cycles"]].median()
    out = out.reset_index()
    out["luo_h800_cycles"] = [LUO_2024.cycles["H800 PCIe"][lv] for lv in out["level"]]
    return out


def fraction_table(rows: pd.DataFrame) -> str:
    """GEMM, attention and FMA rows with their fraction of the measured roofline bound."""
    kept = rows[rows["op"].isin(["gemm", "attention", "fma"]) & (rows["status"] == "ok")]
    out = attach_ceiling_fraction(kept, rows)
    out = out[out["ceiling_fraction"].notna()]
    if out.empty:
        return "(no GEMM / attention rows on a device with measured ceilings)"
    body = [
        [
            r["device_name"],
            r["problem"],
            r["provider"],
            _num(r["tflops"]),
            _num(r["intensity_flop_per_byte"], ".0f"),
            _num(r["ceiling_fraction"], ".1%"),
        ]
        for r in out.sort_values(["device_name", "problem", "tflops"]).to_dict("records")
    ]
    head = ["device", "problem", "provider", "TFLOP/s", "FLOP/B", "of roofline"]
    return tabulate(body, headers=head, tablefmt="github")


def show(paths: list[str]) -> str:
    """Every table the rows under `paths` support (ceilings, bandwidth, latency)."""
    from harness import store

    df = store.read_rows(*paths)
    if df.empty:
        return f"(no rows under {', '.join(paths)})"
    parts = []
    ceil = df[df["op"] == "ceiling"]
    if not ceil.empty:
        parts.append("## ceilings\n" + ceilings_table(ceil))
    if (df["op"] == "memory").any():
        parts.append("## bandwidth versus working set\n" + bandwidth_table(df))
    cold = cold_read_table(df)
    if not cold.frame.empty:
        fits = roofs_table(df).frame
        fits = fits[fits["roof"] == "one cold read pass"]
        lines = [f"{r.device}: {r.measured} ({r.on})" for r in fits.itertuples()]
        parts.append("## one cold read pass by size\n" + "\n".join([*lines, "", cold.markdown()]))
    if (df["op"] == "latency").any():
        parts.append("## pointer-chase latency\n" + latency_table(df))
    if not ceil.empty and df["op"].isin(["gemm", "attention"]).any():
        parts.append("## fraction of the measured roofline\n" + fraction_table(df))
        roofs = roofs_table(df).frame
        above = roofs[roofs["rows_above"] != ""][["device", "roof", "measured", "rows_above"]]
        if not above.empty:
            parts.append(
                "## kernel rows above a roof (a shape or clock state the ceilings run did not "
                "probe: the roof is low)\n" + tabulate(above, headers="keys", showindex=False)
            )
    return "\n\n".join(parts) or "(no microbenchmark rows)"
