"""Run a sweep: expand points, skip those already in the run, measure the rest, write rows."""

from __future__ import annotations

import datetime as dt
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from omegaconf import DictConfig, OmegaConf
from tqdm import tqdm

from harness import store
from harness.config import protocol_of
from harness.device import DeviceInfo, get_device
from harness.measure.point import measure_point
from harness.measure.telemetry import Telemetry
from harness.measure.timer import L2Flusher
from harness.provenance import now_iso, software
from harness.providers import load_all
from harness.sweep import Point, expand, point_key


@dataclass
class RunResult:
    run_path: Path
    total: int
    measured: int
    already_done: int
    statuses: dict[str, int]


def default_run_id(sweep: str, device: DeviceInfo) -> str:
    stamp = dt.datetime.now(dt.timezone.utc).strftime("%Y%m%dT%H%M%S")
    short = re.sub(r"[^a-z0-9]+", "-", device.name.lower()).strip("-")[:24] or device.type
    return f"{sweep}-{short}-{stamp}"


def device_identity(device: DeviceInfo) -> str:
    """The part of the point key that names the device: a result belongs to one card."""
    return f"{device.vendor}|{device.name}|{device.uuid or software()['hostname']}"


def plan(cfg: DictConfig) -> tuple[list[Point], DeviceInfo]:
    """Validate and expand the sweep; raises ValueError naming the bad key."""
    device = get_device(cfg.device)
    protocol = protocol_of(cfg)
    if not device.is_gpu and protocol.timer in ("cuda-events", "cuda-graph"):
        raise ValueError(
            f"protocol.timer: '{protocol.timer}' needs a GPU; allowed on cpu: auto, host"
        )
    groups = OmegaConf.to_container(cfg.sweep.groups, resolve=True)
    only = list(cfg.providers) if cfg.providers is not None else None
    points = expand(groups, load_all(), only)
    limit = cfg.max_points or cfg.sweep.max_points
    if len(points) > limit:
        raise ValueError(
            f"max_points: sweep '{cfg.sweep.name}' has {len(points)} points, over its limit {limit}; "
            f"allowed: max_points>={len(points)} or fewer providers/axes"
        )
    return points, device


def run_sweep(cfg: DictConfig, out=sys.stderr) -> RunResult:
    points, device = plan(cfg)
    protocol = protocol_of(cfg)
    registry = load_all()
    run_id = cfg.run_id or default_run_id(cfg.sweep.name, device)
    run_path = store.run_dir(cfg.results_dir, run_id)
    store.remove_stale_temporaries(run_path)
    proto_key = {**protocol.key_fields(), "timer": protocol.resolved_timer(device.type)}
    dev_id = device_identity(device)
    keyed = [(point_key(p.problem, p.provider, proto_key, dev_id), p) for p in points]
    done_statuses = None if cfg.rerun_failed is False else ("ok", "wrong", "skipped")
    finished = store.finished_keys(run_path, done_statuses)
    todo = [(k, p) for k, p in keyed if k not in finished]
    store.write_run_meta(
        run_path,
        OmegaConf.to_yaml(cfg, resolve=True),
        {
            "run_id": run_id,
            "sweep": cfg.sweep.name,
            "points": len(points),
            "device": device.as_row(),
            "software": software(),
            "protocol": proto_key,
            "updated": now_iso(),
        },
    )
    telemetry = Telemetry(device.vendor, device.index) if device.is_gpu else None
    flusher = L2Flusher(device.torch_device, device.flush_bytes) if device.is_gpu else None
    statuses: dict[str, int] = {}
    bar = tqdm(
        total=len(keyed),
        initial=len(keyed) - len(todo),
        disable=not cfg.progress,
        file=out,
        dynamic_ncols=True,
        unit="pt",
    )
    try:
        for key, point in todo:
            bar.set_postfix_str(point.label(), refresh=True)
            row = measure_point(
                point.problem,
                registry.get(point.problem.op, point.provider),
                device,
                protocol,
                telemetry=telemetry,
                flusher=flusher,
                timeout_s=cfg.point_timeout_s,
            )
            row.update(run_id=run_id, point_key=key)
            store.write_row(run_path, row)
            statuses[row["status"]] = statuses.get(row["status"], 0) + 1
            bar.update(1)
    finally:
        bar.close()
    return RunResult(run_path, len(keyed), len(todo), len(keyed) - len(todo), statuses)
