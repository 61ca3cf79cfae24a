"""`harness crosscheck`: time a few points with the harness and with nvbench, in one process on
one GPU, and say why the numbers differ.

Per point of the preset (sweeps/crosscheck.yaml, composed with overrides as `harness run` is):
  harness  measure_point under the composed protocol (the default: read flush, stream hold)
           checks the point and times it; its row is stored as any run's row is;
  matched  the same closure under the protocol matched to nvbench's cold mode
           (measure.matched_protocol: a write flush of 1x the L2, nvbench's warm-up and stop rule);
  nvbench  the same closure in nvbench's cold mode (and batch, with batch=true) through
           cuda-bench, launched on nvbench's stream.
The three run back to back per point: nvbench may run only once per process, so when it is
there its benchmark functions drive the loop and the harness times each point inside them.
The table (medians, ratios, p90/p10, SM clocks, explanation) goes to
<results_dir>/<run_id>/crosscheck.{parquet,md}, nvbench's own output to _nvbench/, and the
markdown table is printed last.
"""

from __future__ import annotations

import sys
from functools import partial
from pathlib import Path

from omegaconf import DictConfig

from harness import store
from harness.crosscheck import nvbench
from harness.crosscheck.measure import HarnessPart, time_point
from harness.crosscheck.table import ridge_flop_per_byte, table_row
from harness.device import DeviceInfo
from harness.measure.telemetry import Telemetry
from harness.measure.timer import L2Flusher
from harness.plan import RunPlan
from harness.provenance import now_iso, software
from harness.providers import load_all
from harness.runner import bind_device
from harness.sweep import Point


def skip_reason(device: DeviceInfo) -> str | None:
    """Why this machine cannot crosscheck at all (one line), or None on a CUDA device."""
    if device.type == "cuda":
        return None
    reasons = [f"no CUDA device (device {device.type}: {device.name})"]
    if not nvbench.importable():
        reasons.append(f"cuda-bench not installed: {nvbench.INSTALL_HINT}")
    return "; ".join(reasons)


def validate(cfg: DictConfig, plan: RunPlan) -> None:
    if cfg.devices or cfg.shard_count != 1:
        raise ValueError("devices: crosscheck runs on one GPU; allowed: device=cuda:N")
    device = plan.device
    timer = plan.protocol.resolved_timer(device.type)
    if device.type == "cuda" and timer != "cuda-events":
        raise ValueError(
            f"protocol.timer: '{timer}' times no single closure per call; allowed: auto, cuda-events"
        )


def _meta(plan: RunPlan, why_nv, batch, timeout_s) -> dict:
    protocol, device = plan.protocol, plan.device
    return {
        "run_id": plan.run_id,
        "command": "crosscheck",
        "sweep": plan.sweep,
        "points": len(plan.points),
        "device": device.as_row(),
        "software": software(),
        "protocol": {**protocol.key_fields(), "timer": protocol.resolved_timer(device.type)},
        "matched_protocol": "write flush of 1x L2, 1 warm-up call, >= 10 samples and 0.5 s of "
        f"GPU time, rse 0.5%, time cap {timeout_s:g} s, stream hold",
        "nvbench": {
            "cuda_bench_version": nvbench.version(),
            "unavailable": why_nv,
            "batch": batch,
            "timeout_s": timeout_s,
        },
        "updated": now_iso(),
    }


def _progress(i: int, n: int, point: Point, part: HarnessPart, out) -> None:
    row, m = part.row, part.matched
    if m is None:
        said = f"{row['status']}: {row.get('reason')}" if row["status"] != "ok" else part.skip
    else:
        said = f"harness {row['latency_ms_median']:.4g} ms, matched {m['latency_ms_median']:.4g} ms"
    print(f"crosscheck [{i + 1}/{n}] {point.label()}: {said}", file=out, flush=True)


def crosscheck(
    plan: RunPlan,
    *,
    batch: bool,
    nvbench_timeout_s: float,
    out=None,
) -> tuple[Path, list[dict]]:
    """Measure every point of `plan` (config resolved once, by run_plan) three ways on its
    device (a CUDA GPU); (run folder, table rows)."""
    out = out or sys.stderr
    protocol, device, run_id, run_path = plan.protocol, plan.device, plan.run_id, plan.run_path
    bind_device(device)
    keyed = list(plan.keyed.items())  # sweep order
    why_nv = nvbench.unavailable(device)
    if why_nv:
        print(f"crosscheck: nvbench skipped: {why_nv}", file=out, flush=True)
    meta = _meta(plan, why_nv, batch, nvbench_timeout_s)
    store.write_run_meta(run_path, plan.config_yaml, meta)
    registry, telemetry = load_all(), Telemetry(device.vendor, device.index)
    dev = device.torch_device
    default_flusher = L2Flusher(
        dev, device.flush_bytes, protocol.l2_flush, protocol.l2_flush_factor
    )
    # nvbench memsets exactly the L2 (cudaDevAttrL2CacheSize); L2Flusher streams 2x its argument.
    half_l2 = device.l2_bytes // 2 if device.l2_bytes else None
    matched_flusher = L2Flusher(dev, half_l2, "write")
    parts: dict[str, HarnessPart] = {}

    def harness_of(i: int, key: str, point: Point):
        def run() -> tuple[object | None, str | None]:
            part = time_point(
                point.problem,
                registry.get(point.problem.op, point.provider),
                device,
                protocol,
                telemetry=telemetry,
                default_flusher=default_flusher,
                matched_flusher=matched_flusher,
                timeout_s=plan.point_timeout_s,
                nvbench_timeout_s=nvbench_timeout_s,
            )
            store.write_row(run_path, {**part.row, "run_id": run_id, "point_key": key})
            parts[key] = part
            _progress(i, len(keyed), point, part, out)
            return part.closure, part.why_not()

        return run

    def release(key: str) -> None:  # the closure holds the point's inputs: free them
        if key in parts:
            parts[key].closure = None

    jobs = [
        nvbench.Job(
            f"{i:02d} {p.provider} {p.problem.label()}", harness_of(i, k, p), partial(release, k)
        )
        for i, (k, p) in enumerate(keyed)
    ]
    results: dict[str, dict] = {}
    if why_nv is None:
        results = nvbench.run(
            jobs,
            device.index,
            run_path / "_nvbench",
            batch=batch,
            timeout_s=nvbench_timeout_s,
            telemetry=telemetry,
        )
    for job, (key, _) in zip(jobs, keyed, strict=True):
        if key not in parts:  # no nvbench, or it stopped before this point: the harness only
            job.harness()
            job.done()
    rows = []
    for job, (key, point) in zip(jobs, keyed, strict=True):
        part = parts[key]
        nv = results.get(job.name) or (
            {"nvbench_status": "skipped", "nvbench_reason": why_nv}
            if why_nv
            else {"nvbench_status": "error", "nvbench_reason": "nvbench stopped before it"}
        )
        dtype = point.problem.axes().get("dtype")  # a pointer chase (op latency) has none
        ridge = ridge_flop_per_byte(device.name, device.sm_count, dtype) if dtype else None
        harness_row = {**part.row, "run_id": run_id, "point_key": key}
        rows.append(table_row(harness_row, part.matched, nv, ridge, part.skip))
    return run_path, rows
