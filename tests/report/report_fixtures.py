"""Synthetic rows for report tests, written through the store (torch-free).

Two GPUs: an "NVIDIA H200" with measured ceilings and the whole llama3_8b_decode workload
(every batch composes, except own-triton's 512 which is `wrong`), and an "NVIDIA H100 80GB HBM3"
with batches 1..16 only and no ceilings; a ladder problem on the H200; skipped and error rows.
Latencies are the datasheet roofline time over an efficiency per provider, samples lognormal.
"""

from __future__ import annotations

import hashlib

import numpy as np

from harness import store
from harness.workloads import get_workload, problem_flops, problem_label, problem_min_bytes

DEVICES = {
    "h200": {
        "device_name": "NVIDIA H200",
        "device_type": "cuda",
        "device_sm_count": 132,
        "device_l2_bytes": 60 << 20,
        "device_uuid": "GPU-h200",
        "device_vendor": "nvidia",
    },
    "h100": {
        "device_name": "NVIDIA H100 80GB HBM3",
        "device_type": "cuda",
        "device_sm_count": 132,
        "device_l2_bytes": 50 << 20,
        "device_uuid": "GPU-h100",
        "device_vendor": "nvidia",
    },
    "cpu": {
        "device_name": "x86_64",
        "device_type": "cpu",
        "device_sm_count": 2,
        "device_uuid": None,
        "device_vendor": "cpu",
    },
}
PEAK = {"h200": (989.4, 4800.0), "h100": (989.4, 3350.0), "cpu": (1.0, 50.0)}  # TFLOP/s, GB/s
EFFICIENCY = {
    "cublas": 0.8,
    "own-triton": 0.7,
    "sdpa-flash": 0.75,
    "own-triton-no-tma": 0.55,
    "own-triton-no-pipeline": 0.4,
    "torch-eager": 0.2,
}
FAMILY = {"cublas": "vendor", "sdpa-flash": "vendor", "torch-eager": "vendor"}
PROTOCOL = {"timer": "cuda-events", "l2": "cold", "fill": "randn", "seed": 0}


def speed_row(
    dev: str,
    op: str,
    problem: dict,
    provider: str,
    run_id: str,
    *,
    median_ms=None,
    scale: float = 1.0,
    noise: float = 0.01,
    n: int = 40,
    seed: int = 0,
    status: str = "ok",
    reason: str | None = None,
    timestamp: str = "2026-01-01T00:00:00+00:00",
) -> dict:
    """One row as the harness writes it; samples lognormal around the median."""
    flops, nbytes = problem_flops(op, problem), problem_min_bytes(op, problem)
    peak, bw = PEAK[dev]
    if median_ms is None:
        bound_ms = max(flops / (peak * 1e12), nbytes / (bw * 1e9)) * 1e3
        median_ms = bound_ms / EFFICIENCY.get(provider, 0.5) + 0.004  # + launch overhead
    median_ms *= scale
    label = problem_label(op, problem)
    key_src = f"{run_id}|{dev}|{op}|{label}|{provider}"
    row = {c: None for c in store.COLUMNS}
    row.update({**DEVICES[dev], **PROTOCOL, **problem})
    row.update(
        run_id=run_id,
        point_key=hashlib.sha256(key_src.encode()).hexdigest()[:20],
        op=op,
        provider=provider,
        family=FAMILY.get(provider, "own"),
        status=status,
        reason=reason,
        problem=label,
        flops=float(flops),
        min_bytes=float(nbytes),
        intensity_flop_per_byte=flops / nbytes,
        timestamp=timestamp,
        git_sha="0123456789abcdef",
    )
    if status == "ok":
        rng = np.random.default_rng(seed + int(key_src.encode().hex()[:8], 16) % 100000)
        samples = median_ms * np.exp(rng.normal(0.0, noise, n))
        med = float(np.median(samples))
        row.update(
            samples_ms=[float(s) for s in samples],
            latency_ms_median=med,
            n_samples=n,
            latency_ms_p10=float(np.percentile(samples, 10)),
            latency_ms_p90=float(np.percentile(samples, 90)),
            tflops=flops / (med * 1e-3) / 1e12,
            gbps=nbytes / (med * 1e-3) / 1e9,
        )
    return row


def ceiling_row(dev: str, metric: str, value: float, run_id: str) -> dict:
    row = {c: None for c in store.COLUMNS}
    row.update(
        DEVICES[dev],
        run_id=run_id,
        op="ceiling",
        metric=metric,
        status="ok",
        point_key=hashlib.sha256(f"{dev}{metric}".encode()).hexdigest()[:20],
        timestamp="2026-01-01T00:00:00+00:00",
        provider="cublas",
    )
    row["gbps" if metric.endswith("_gbps") else "tflops"] = value
    return row


def read_once_row(dev: str, nbytes: int, gbps: float, run_id: str) -> dict:
    """One cold one-pass read of nbytes at gbps, as probes_read_once writes it."""
    row = ceiling_row(dev, "hbm_read_gbps", gbps, run_id)
    row.update(
        op="memory",
        metric="read",
        traffic_bytes=nbytes,
        working_set_bytes=nbytes,
        l2="cold",
        provider="triton-stream",
        point_key=f"{run_id}-{nbytes}",
    )
    return row


def write_run(root, run_id: str, rows: list[dict], sweep: str | None = None):
    """The rows under <root>/<run_id>, with a run.json naming `sweep` when one is given."""
    path = store.run_dir(root, run_id)
    for r in rows:
        store.write_row(path, r)
    if sweep is not None:
        device = {k: v for k, v in rows[0].items() if k.startswith("device_")}
        meta = {"run_id": run_id, "sweep": sweep, "device": device}
        store.write_run_meta(path, f"sweep:\n  name: {sweep}\n", meta)
    return path


TINY = {"m": 1, "n": 64, "k": 64, "layout": "nn", "batch": 1}  # sweeps/smoke.yaml's first GEMM


def smoke_rows(dev: str, run_id: str, dtypes=("fp32", "bf16")) -> list[dict]:
    """Smoke-sized GEMM rows: cuBLAS and own Triton at 1x64x64 per dtype (launch overhead)."""
    return [
        speed_row(dev, "gemm", {**TINY, "dtype": d}, p, run_id)
        for d in dtypes
        for p in ("cublas", "own-triton")
    ]


def workload_rows(dev: str, run_id: str, batches, wrong_at: int | None = None) -> list[dict]:
    w = get_workload("llama3_8b_decode")
    rows, seen = [], set()
    for b in batches:
        for item in w.items(b):
            vendor = {"gemm": "cublas", "attention": "sdpa-flash"}.get(item.op, "torch-eager")
            providers = (vendor, "own-triton")
            for p in providers:
                if (item.label(), p) in seen:
                    continue
                seen.add((item.label(), p))
                bad = p == "own-triton" and b == wrong_at and item.name == "down"
                rows.append(
                    speed_row(
                        dev,
                        item.op,
                        item.problem,
                        p,
                        run_id,
                        status="wrong" if bad else "ok",
                        reason="rel_err 0.5 > tol 0.01" if bad else None,
                    )
                )
    return rows


LADDER = {"m": 8192, "n": 8192, "k": 8192, "dtype": "bf16", "layout": "nn", "batch": 1}
