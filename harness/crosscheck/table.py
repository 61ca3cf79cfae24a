"""The crosscheck table: one row per point with the three timings, their ratios, the SM clocks
and the explanation; its markdown form. Plain dicts in, plain dicts out (no torch).

Columns (snake_case, units in the name): harness_* (default protocol), matched_* (the harness
with nvbench's cold-mode flush and stop rule), nvbench_* (cold mode through cuda-bench; the
batch mean when asked for), *_over_* ratios of medians, sm_clock_mhz per timing (NVML medians
over each timed window; nvbench_sm_clock_mhz_own is nvbench's own per-sample measurement).
"""

from __future__ import annotations

import math

from tabulate import tabulate

from harness.crosscheck.explain import PointTimes, explain, ratio, regime
from harness.report.datasheet import datasheet_value, lookup

# Columns of the harness rows copied as <prefix>_<name>.
_TIMING = {
    "latency_ms_median": "ms_median",
    "latency_ms_p10": "ms_p10",
    "latency_ms_p90": "ms_p90",
    "latency_p90_over_p10": "p90_over_p10",
    "n_samples": "samples",
    "stop_reason": "stop_reason",
    "unstable_reason": "unstable_reason",
    "sm_clock_mhz": "sm_clock_mhz",
}


def ridge_flop_per_byte(device_name: str | None, sm_count: int | None, dtype: str) -> float | None:
    """Datasheet tensor peak of `dtype` over HBM bandwidth (FLOP/byte), None when unlisted."""
    spec = lookup(device_name, sm_count)
    metric = "fp32_fma_tflops" if dtype == "fp32" else f"tensor_{dtype}_tflops"
    peak, gbps = datasheet_value(spec, metric), datasheet_value(spec, "hbm_read_gbps")
    return peak * 1e3 / gbps if peak and gbps else None


def _num(x) -> float | None:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return None
    return float(x)


def table_row(
    harness: dict,
    matched: dict | None,
    nvbench: dict | None,
    ridge: float | None,
    skip: str | None = None,
) -> dict:
    """One point: `harness` is measure_point's row (default protocol), `matched` the timing
    columns of the matched protocol (None unless the point was ok; its min_samples too),
    `nvbench` the nvbench_* columns (None when nvbench did not run), `skip` why an ok point
    was not timed further."""
    row = {
        key: harness.get(key)
        for key in ("run_id", "point_key", "op", "provider", "problem", "phase", "dtype")
    }
    row["intensity_flop_per_byte"] = _num(harness.get("intensity_flop_per_byte"))
    row["ridge_flop_per_byte"] = ridge
    row["regime"] = regime(row["intensity_flop_per_byte"], ridge)
    row["status"], row["reason"] = harness.get("status"), harness.get("reason")
    for src, dst in _TIMING.items():
        row[f"harness_{dst}"] = harness.get(src)
        row[f"matched_{dst}"] = (matched or {}).get(src)
    row["matched_min_samples"] = (matched or {}).get("min_samples")
    row.update(nvbench_row(nvbench))
    times = PointTimes(
        harness_ms=_num(row["harness_ms_median"]),
        matched_ms=_num(row["matched_ms_median"]),
        nvbench_ms=_num(row["nvbench_ms_median"]),
        harness_clock_mhz=_num(row["harness_sm_clock_mhz"]),
        matched_clock_mhz=_num(row["matched_sm_clock_mhz"]),
        nvbench_clock_mhz=_num(row["nvbench_sm_clock_mhz"])
        or _num(row["nvbench_sm_clock_mhz_own"]),
        intensity=row["intensity_flop_per_byte"],
        ridge=ridge,
    )
    row["matched_over_nvbench"] = ratio(times.matched_ms, times.nvbench_ms)
    row["harness_over_nvbench"] = ratio(times.harness_ms, times.nvbench_ms)
    row["matched_over_harness"] = ratio(times.matched_ms, times.harness_ms)
    ok = row["status"] == "ok" and times.matched_ms is not None
    why = skip or f"{row['status']}: {row['reason']}"
    row["explanation"] = explain(times) if ok else why
    row["device_name"], row["timestamp"] = harness.get("device_name"), harness.get("timestamp")
    return row


NVBENCH_COLUMNS = (
    "nvbench_status",
    "nvbench_reason",
    "nvbench_ms_median",
    "nvbench_ms_mean",
    "nvbench_ms_p10",
    "nvbench_ms_p90",
    "nvbench_p90_over_p10",
    "nvbench_noise",
    "nvbench_samples",
    "nvbench_sm_clock_mhz",
    "nvbench_sm_clock_mhz_own",
    "nvbench_batch_ms_mean",
)


def nvbench_row(nvbench: dict | None) -> dict:
    """The nvbench_* columns, every one present (None where not measured)."""
    out = {c: (nvbench or {}).get(c) for c in NVBENCH_COLUMNS}
    if nvbench is None:
        out["nvbench_status"] = "skipped"
    return out


def _ms(x) -> str:
    x = _num(x)
    return "" if x is None else f"{x:.4g}"


def _r(x) -> str:
    x = _num(x)
    return "" if x is None else f"{x:.3f}"


def _trio(row: dict, suffix: str, digits: int) -> str:
    """harness / matched / nvbench values of one column ("-" where missing)."""
    vals = (_num(row.get(f"{who}_{suffix}")) for who in ("harness", "matched", "nvbench"))
    return " / ".join("-" if v is None else f"{v:.{digits}f}" for v in vals)


def _explained(row: dict) -> str:
    """The explanation, plus why nvbench has no number where the harness has one."""
    if row["status"] != "ok" or row["nvbench_status"] == "ok":
        return row["explanation"]
    return f"{row['explanation']} (nvbench {row['nvbench_status']}: {row['nvbench_reason']})"


def markdown(rows: list[dict], title: str, nvbench_timeout_s: float) -> str:
    """The table as GitHub markdown under `title`, with what the three timings are."""
    body = [
        [
            r["provider"],
            r["problem"],
            _ms(r["harness_ms_median"]),
            _ms(r["matched_ms_median"]),
            _ms(r["nvbench_ms_median"]),
            _r(r["matched_over_nvbench"]),
            _r(r["harness_over_nvbench"]),
            _trio(r, "p90_over_p10", 2),
            _trio(r, "sm_clock_mhz", 0),
            _explained(r),
        ]
        for r in rows
    ]
    headers = [
        "provider",
        "problem",
        "harness ms",
        "matched ms",
        "nvbench ms",
        "matched/nv",
        "harness/nv",
        "p90/p10 h/m/n",
        "SM MHz h/m/n",
        "explanation",
    ]
    legend = (
        "harness: default protocol (read flush of 2x the LLC, 300 ms warm-up, stream hold). "
        "matched: the harness with nvbench's cold mode (write flush of 1x the L2, one warm-up "
        "call, 10 samples and 0.5 s of GPU time, noise 0.5%, "
        f"{nvbench_timeout_s:g} s cap). nvbench: cold mode through cuda-bench on the same "
        "closure. Medians; SM clocks are NVML medians over each timed window."
    )
    table = tabulate(body, headers=headers, tablefmt="github", disable_numparse=True)
    return f"## {title}\n\n{legend}\n\n{table}\n"
