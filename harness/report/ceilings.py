"""Measured ceilings: the best ok row per metric of a `ceilings` sweep, stored as op="ceiling"
rows in the same run (by `harness ceilings`), and the fraction of them that every measured row
reaches."""

from __future__ import annotations

import hashlib
import json
import math

import pandas as pd

from harness.report.levels import L2_MIN_BYTES, L2_UNKNOWN_MAX_BYTES

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
        return df[keep & (traffic >= L2_MIN_PASSES * ws)]
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
