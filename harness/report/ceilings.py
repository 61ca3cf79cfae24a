"""Measured ceilings: the best ok row per metric of a `ceilings` sweep, stored as op="ceiling"
rows in the same run (by `harness ceilings`), and the fraction of them that every measured row
reaches."""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass

import pandas as pd

from harness.report.data import IDENTITY, SPEED_OPS, latest
from harness.report.levels import L2_MIN_BYTES, L2_UNKNOWN_MAX_BYTES

_ELEM_BYTES = {"fp32": 4, "fp16": 2, "bf16": 2, "fp8_e4m3": 1}
HBM_L2_FACTOR = 8  # an HBM stream's working set is >= 8x the L2, so no pass can hit in it
L2_MIN_PASSES = 4  # an L2 probe re-reads its working set at least this often per call
GEMM_DTYPES = {"bf16": "bf16", "fp16": "fp16", "fp8": "fp8_e4m3", "tf32": "tf32"}
CEILING_METRICS = (
    "hbm_read_gbps",
    "hbm_write_gbps",
    "hbm_copy_gbps",
    "l2_read_gbps",
    "tensor_bf16_tflops",
    "tensor_fp16_tflops",
    "tensor_fp8_tflops",
    "tensor_tf32_tflops",
    "fp32_fma_tflops",
)
# The peak each dtype's compute is bounded by (attention and GEMM rows alike).
PEAK_OF_DTYPE = {
    "bf16": "tensor_bf16_tflops",
    "fp16": "tensor_fp16_tflops",
    "fp8_e4m3": "tensor_fp8_tflops",
    "tf32": "tensor_tf32_tflops",
    "fp32": "fp32_fma_tflops",
}
_DEVICE_AND_CONTEXT = (
    "device_type",
    "device_index",
    "device_vendor",
    "device_name",
    "device_uuid",
    "device_arch",
    "device_compute_capability",
    "device_sm_count",
    "device_l2_bytes",
    "device_memory_bytes",
    "device_driver_version",
    "device_runtime_version",
    "git_sha",
    "git_dirty",
    "kernel_source_hash",
    "torch_version",
    "triton_version",
    "python_version",
    "hostname",
)
_FROM_BEST = (
    "provider",
    "family",
    "problem",
    "dtype",
    "m",
    "n",
    "k",
    "layout",
    "working_set_bytes",
    "traffic_bytes",
    "iterations",
    "flops",
    "min_bytes",
    "intensity_flop_per_byte",
    "latency_ms_median",
    "timer",
    "l2",
    "fill",
    "sm_clock_mhz",
    "mem_clock_mhz",
    "power_w",
    "temp_c",
    "throttle_reasons",
)


def unit_column(metric: str) -> str:
    return "gbps" if metric.endswith("_gbps") else "tflops"


def _l2(df: pd.DataFrame) -> pd.Series:
    return pd.to_numeric(df.get("device_l2_bytes"), errors="coerce")


def readers_per_block(df: pd.DataFrame) -> pd.Series:
    """How many stream-read programs walk one block of the set at once (1 where unknown).

    A set of fewer blocks than programs is read as shared lines: on the H100 and H200 the 2 and
    4 MiB sets (128 and 256 blocks of 16 KiB, 512 programs) read at 16-17 TB/s where 8-16 MiB
    with one program per block read 9-14, and an L2 roof is the rate of SMs reading their own
    lines (as the Empirical Roofline Toolkit measures it). Rows before the key was recorded are
    judged from their programs, BLOCK and dtype."""
    out = pd.Series(1, index=df.index, dtype="int64")
    if "provider_config" not in df:
        return out
    dtypes = df["dtype"] if "dtype" in df else pd.Series([None] * len(df), index=df.index)
    columns = (df["provider_config"], df["working_set_bytes"], dtypes)
    for i, (text, ws, dtype) in enumerate(zip(*columns, strict=True)):
        try:
            cfg = json.loads(text) if isinstance(text, str) else {}
        except ValueError:
            continue
        if not isinstance(cfg, dict) or cfg.get("kernel") != "stream_read":
            continue
        if "readers_per_block" in cfg:
            out.iloc[i] = int(cfg["readers_per_block"])
            continue
        elem = _ELEM_BYTES.get(dtype)
        if not (elem and cfg.get("BLOCK") and cfg.get("programs") and ws and ws == ws):
            continue
        blocks = max(1, int(ws) // (int(cfg["BLOCK"]) * elem))
        out.iloc[i] = -(-int(cfg["programs"]) // blocks)
    return out


def candidates(df: pd.DataFrame, metric: str) -> pd.DataFrame:
    """Rows (any status) that measure `metric`."""
    op = df["op"]
    if metric.startswith("hbm_"):
        kind = metric.split("_")[1]
        ws, traffic, l2 = df["working_set_bytes"], df["traffic_bytes"], _l2(df)
        big = l2.isna() | (ws >= HBM_L2_FACTOR * l2)
        return df[(op == "memory") & (df["metric"] == kind) & (traffic == ws) & big]
    if metric == "l2_read_gbps":
        ws, traffic, l2 = df["working_set_bytes"], df["traffic_bytes"], _l2(df)
        fits = ws <= l2.fillna(2 * L2_UNKNOWN_MAX_BYTES) / 2
        keep = (op == "memory") & (df["metric"] == "read") & (ws >= L2_MIN_BYTES) & fits
        return df[keep & (traffic >= L2_MIN_PASSES * ws) & (readers_per_block(df) <= 1)]
    if metric.startswith("tensor_"):
        return df[(op == "gemm") & (df["dtype"] == GEMM_DTYPES[metric.split("_")[1]])]
    if metric == "fp32_fma_tflops":
        return df[op == "fma"]
    raise ValueError(f"metric: unknown '{metric}'; allowed: {', '.join(CEILING_METRICS)}")


def _point_key(metric: str, device_name: str, device_uuid: str | None) -> str:
    payload = f"ceiling|{metric}|{device_name}|{device_uuid or ''}"
    return hashlib.sha256(payload.encode()).hexdigest()[:20]


def _plain(v):
    """numpy scalars and NaN -> Python values / None, as the store expects."""
    if v is None:
        return None
    if hasattr(v, "item"):
        v = v.item()
    if isinstance(v, float) and math.isnan(v):
        return None
    return v


def ceiling_rows(df: pd.DataFrame, run_id: str) -> list[dict]:
    """One op="ceiling" row per device and metric: the best ok candidate's value (provider,
    problem and telemetry copied from it), or status skipped with the reason none counted."""
    from harness.provenance import now_iso

    measured = df[df["op"].isin(["memory", "gemm", "fma"])]
    out = []
    for device_name, dev_rows in measured.groupby("device_name", dropna=False):
        any_row = dev_rows.iloc[0]
        base = {c: _plain(any_row.get(c)) for c in _DEVICE_AND_CONTEXT}
        for metric in CEILING_METRICS:
            col = unit_column(metric)
            cand = candidates(dev_rows, metric)
            ok = cand[(cand["status"] == "ok") & cand[col].notna()]
            row = {
                **base,
                "run_id": run_id,
                "point_key": _point_key(metric, str(device_name), base["device_uuid"]),
                "op": "ceiling",
                "metric": metric,
                "timestamp": now_iso(),
            }
            if ok.empty:
                counts = cand["status"].value_counts().to_dict()
                seen = ", ".join(f"{k}={v}" for k, v in sorted(counts.items())) or "none"
                first = cand["reason"].dropna()
                why = f"; e.g. {first.iloc[0]}" if len(first) else ""
                row.update(
                    status="skipped",
                    reason=f"no ok row among {len(cand)} candidates ({seen}){why}"[:500],
                )
                out.append(row)
                continue
            best = ok.loc[ok[col].idxmax()]
            row.update({c: _plain(best.get(c)) for c in _FROM_BEST})
            row.update(
                status="ok",
                reason=None,
                gbps=_plain(best.get("gbps")),
                tflops=_plain(best.get("tflops")),
                provider_config=json.dumps(
                    {
                        "value": float(best[col]),
                        "unit": col,
                        "candidates": int(len(cand)),
                        "ok_candidates": int(len(ok)),
                        "source_point_key": best.get("point_key"),
                        "source_run_id": best.get("run_id"),
                    },
                    sort_keys=True,
                    default=str,
                ),
            )
            out.append(row)
    return out


def latest_per_metric(ceilings: pd.DataFrame) -> pd.DataFrame:
    """The latest ceiling row per (device_name, metric): a later ceilings run replaces an
    earlier one whatever their values."""
    ordered = ceilings.sort_values("timestamp", na_position="first")
    return ordered.drop_duplicates(["device_name", "metric"], keep="last")


def ceiling_table(ceilings: pd.DataFrame) -> dict[tuple[str, str], float]:
    """{(device_name, metric): value} from ok ceiling rows; the latest row wins."""
    c = ceilings[(ceilings["op"] == "ceiling") & (ceilings["status"] == "ok")]
    c = c.sort_values("timestamp", na_position="first")
    table: dict[tuple[str, str], float] = {}
    for r in c.itertuples():
        value = getattr(r, unit_column(r.metric))
        if value is not None and not pd.isna(value):
            table[(r.device_name, r.metric)] = float(value)
    return table


@dataclass(frozen=True)
class Ceiling:
    """A measured ceiling and where it came from: `run` is the ceilings run of its row."""

    value: float
    run: str | None

    @property
    def source(self) -> str:
        return f"ceilings sweep (run {self.run})" if self.run else "ceilings sweep"


# The bandwidth a GEMM / attention row's min_bytes stand against (as the rooflines take it).
_ROOF_BANDWIDTH = ("hbm_read_gbps", "hbm_copy_gbps")


def measured_ceilings(df: pd.DataFrame) -> dict[tuple[str, str], Ceiling]:
    """{(device_name, metric): Ceiling}: each ok ceiling row's value, the latest per metric.

    The roof is the ceilings run's, not raised to faster rows (above_roof lists those). Until
    session 90 it was raised to the fastest ok GEMM / attention row of the device model, so no
    point sat above it; but that row is the maximum of a thousand medians from some seventy
    cards, a burst outlier more than a roof: the H200's bf16 roof had become 785 TFLOP/s, one
    cuBLAS row at 1,890 MHz on one card, where the ceilings run read 726 and four other cards
    ran the same GEMM at 742-756; every compute-bound fraction read 7.6% low, and the cross-GPU
    compute-bound prediction 1.03x where the two ceilings runs give 0.99x. A row above the
    ceilings run is kept above it and counted, so the reader sees it."""
    table: dict[tuple[str, str], Ceiling] = {}
    c = df[(df["op"] == "ceiling") & (df["status"] == "ok")]
    for r in c.sort_values("timestamp", na_position="first").to_dict("records"):
        value = r.get(unit_column(r["metric"]))
        if value is not None and not pd.isna(value):
            run = r.get("run_id") if isinstance(r.get("run_id"), str) else None
            table[(r["device_name"], r["metric"])] = Ceiling(float(value), run)
    return table


def card_hbm_reads(df: pd.DataFrame) -> dict[str, dict[str, tuple[str, float]]]:
    """{device name: {card UUID: (ceilings run, HBM read GB/s)}}: each card's latest ok
    hbm_read_gbps ceiling row (rows without a UUID left out)."""
    c = df[(df["op"] == "ceiling") & (df["status"] == "ok") & (df["metric"] == "hbm_read_gbps")]
    out: dict[str, dict[str, tuple[str, float]]] = {}
    for r in c.sort_values("timestamp", na_position="first").to_dict("records"):
        card, value = r.get("device_uuid"), r.get("gbps")
        if not isinstance(card, str) or not card or card == "None" or pd.isna(value):
            continue
        out.setdefault(str(r["device_name"]), {})[card] = (str(r.get("run_id") or ""), float(value))
    return out


def row_ceilings(
    uuids: pd.Series, card_gbps: dict[str, float], fallback: float | None
) -> pd.Series:
    """Each row's HBM read ceiling: its card's own (`card_gbps`, {card UUID: GB/s}) where that
    card read one, else `fallback`, the model's latest (NaN without one). Cards of one model
    differ by up to 3%, so `harness goals` and the report's serving table both read a row
    against its own card first."""
    return uuids.map(card_gbps).astype(float).fillna(fallback or math.nan)


def above_roof(df: pd.DataFrame, table: dict[tuple[str, str], Ceiling]) -> pd.DataFrame:
    """The latest ok GEMM / attention rows faster than their device's measured roof: a compute
    rate above the dtype's peak, or (cold L2) a read rate above the HBM ceiling. One line per
    (device, metric): rows above, the fastest one's value and its share of the roof, and it.
    A ceilings run measures a few shapes in one clock and power state; a short GEMM on a card
    that holds a higher clock, or a shape it did not probe, can beat it (gemm_llama's one-wave
    1024x4096x14336 ran 1.09x / 1.05x the 4096^3 cube's fp8 rate in one run on an H100 / H200,
    which is why sweeps/ceilings.yaml now probes that shape too)."""
    cols = ["device_name", "metric", "roof", "rows_above", "fastest", "of_roof", "row"]
    speed = df[(df["status"] == "ok") & df["op"].isin(SPEED_OPS) & df["tflops"].notna()]
    if speed.empty or not table:
        return pd.DataFrame(columns=cols)
    speed = latest(speed, [c for c in (*IDENTITY, "device_name") if c in speed])
    found: dict[tuple[str, str], list[tuple[float, str]]] = {}
    for r in speed.to_dict("records"):
        dev = r["device_name"]
        hot = r.get("l2") == "hot"  # a hot-L2 row may out-read HBM: no claim on its roof
        bw_metric = None if hot else next((m for m in _ROOF_BANDWIDTH if (dev, m) in table), None)
        for metric, value in (
            (PEAK_OF_DTYPE.get(r.get("dtype"), ""), r.get("tflops")),
            (bw_metric, r.get("gbps")),
        ):
            roof = table.get((dev, metric)) if metric else None
            if roof is None or value is None or pd.isna(value) or value <= roof.value:
                continue
            label = f"{r['provider']} {r['problem']} (run {r.get('run_id')})"
            found.setdefault((dev, str(metric)), []).append((float(value), label))
    lines = []
    for (dev, metric), hits in sorted(found.items()):
        value, label = max(hits)
        ceiling = table[(dev, metric)].value
        lines.append([dev, metric, ceiling, len(hits), value, value / ceiling, label])
    return pd.DataFrame(lines, columns=cols)


def _bound_and_achieved(r: dict, peaks: dict) -> tuple[float | None, float | None]:
    dev, op = r.get("device_name"), r.get("op")
    if op == "memory":
        bw = peaks.get((dev, f"hbm_{r.get('metric')}_gbps"))
        return bw, r.get("gbps")
    flops = r.get("flops")
    if op not in ("gemm", "attention", "fma") or not flops or pd.isna(flops):
        return None, None
    peak = peaks.get((dev, PEAK_OF_DTYPE.get(r.get("dtype") or "", "")))
    if op == "fma":
        return peak, r.get("tflops")
    bw = peaks.get((dev, "hbm_read_gbps")) or peaks.get((dev, "hbm_copy_gbps"))
    intensity = r.get("intensity_flop_per_byte")
    if peak is None or bw is None or intensity is None or pd.isna(intensity):
        return None, None
    return min(peak, intensity * bw / 1e3), r.get("tflops")  # FLOP/B x GB/s = GFLOP/s


def attach_ceiling_fraction(rows: pd.DataFrame, ceilings: pd.DataFrame) -> pd.DataFrame:
    """A copy of `rows` whose ceiling_fraction is achieved / roofline bound for each ok row of a
    device with measured ceilings: bound = min(peak of the dtype, intensity x HBM read
    bandwidth) for GEMM and attention, the fp32 FMA peak for fma rows, and the HBM ceiling of
    the same metric for memory rows (above 1 when the working set sits in a cache).
    Other rows (latency, inspect, ceilings, not ok, no ceiling for the device) get NaN."""
    peaks = ceiling_table(ceilings)
    fractions = []
    for r in rows.to_dict("records"):
        bound, achieved = (None, None)
        if r.get("status") == "ok":
            bound, achieved = _bound_and_achieved(r, peaks)
        if bound and achieved is not None and not pd.isna(achieved):
            fractions.append(float(achieved) / bound)
        else:
            fractions.append(math.nan)
    out = rows.copy()
    out["ceiling_fraction"] = pd.Series(fractions, index=rows.index, dtype="float64")
    return out
