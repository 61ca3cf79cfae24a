"""Run a sweep: expand points, skip those already in the run, measure the rest, write rows.

The process that owns a run (not a supervised child) holds its lock (harness.lock) and, before
anything is measured, sets aside unreadable row files, turns points a dead process was measuring
into error rows (harness.inflight) and deletes dead writers' temporaries; then it measures
through child processes (harness.shard: devices=, or isolate=true) or here (isolate=false).
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from omegaconf import DictConfig, OmegaConf
from tqdm import tqdm

from harness import children, inflight, runrecord, store
from harness.collectives import run_collective_points
from harness.config import protocol_of
from harness.device import DeviceInfo
from harness.lock import run_lock
from harness.measure.point import measure_point
from harness.measure.telemetry import Telemetry
from harness.measure.timer import L2Flusher
from harness.plan import (
    RunResult,
    default_run_id,
    device_spec,
    keyed_points,
    plan,
    shard_of,
)
from harness.provenance import now_iso, software
from harness.providers import Provider, Registry, load_all
from harness.shard import resolve_devices, run_on_devices, supervise
from harness.sweep import Point


def bind_device(device: DeviceInfo) -> None:
    """Make `device` the current one: CUDA events, streams, graphs and Triton launches all use
    the current device. (Without this a worker on cuda:1 recorded its events on cuda:0's stream
    and timed nothing: found on a 2-GPU H200.)"""
    if device.type == "cuda":
        import torch

        torch.cuda.set_device(device.index)


def prebuild(todo: list, registry: Registry, device: DeviceInfo, out) -> None:
    """Build what the pending points' providers declare (Provider.prebuild) before the first
    point, one parallel call per builder: no build ever runs inside a point (let alone its timed
    window). GPU sweeps only: the CPU runs no compiled library."""
    if not device.is_gpu:
        return
    problems: dict[Provider, list] = {}
    for _, point in todo:
        provider = registry.get(point.problem.op, point.provider)
        if provider.prebuild is not None:
            problems.setdefault(provider, []).append(point.problem)
    jobs: dict = {}  # builder -> (what, specs in order)
    for provider, wanted in problems.items():
        hook = provider.prebuild
        jobs.setdefault(hook.build, (hook.what, []))[1].extend(hook.needs(wanted))
    for build, (what, specs) in jobs.items():
        started = time.perf_counter()
        built = build(list(dict.fromkeys(specs)))
        errors = {k: v for k, v in built.items() if v.startswith("error")}
        print(f"harness: {len(built)} {what} ready in {time.perf_counter() - started:.0f} s"
              + (f"; {len(errors)} failed (their points will say why)" if errors else ""), file=out)  # fmt: skip


def set_aside_unreadable(run_path: Path, points: dict[str, Point], out) -> None:
    """Move the run's unreadable row files aside (store.set_aside_unreadable), one warning each
    naming the point: without this a torn file counted as finished and every reader failed."""
    for key, why, moved_to in store.set_aside_unreadable(run_path):
        point = points.get(key)
        then = f"measuring {point.label()} again" if point else "not a point here"
        print(f"harness: warning: point {key}: row file unreadable ({why}); moved to {moved_to}, "
              f"{then}", file=out)  # fmt: skip


def _done_statuses(cfg: DictConfig) -> tuple[str, ...] | None:
    return None if cfg.rerun_failed is False else ("ok", "wrong", "skipped")


def _start_up(cfg, run_path: Path, run_id: str, keyed: dict, mine: dict, device, out) -> None:
    """Under the run's lock, before measuring: set aside unreadable row files, write the points
    a dead process was measuring as error rows (measuring them first again is what wedged a
    resume forever), and delete dead writers' temporaries of this writer's points."""
    set_aside_unreadable(run_path, keyed, out)
    protocol, registry = protocol_of(cfg), load_all()
    for marker in inflight.leftover_markers(run_path):
        pid = inflight.held_by_live_process(marker)
        if pid is not None:
            print(f"harness: warning: pid {pid} (still running) left {marker}; not touched",
                  file=out)  # fmt: skip
            continue
        label = inflight.settle(
            marker, run_id, mine, device, protocol, registry, inflight.PREVIOUS_RUN_DIED
        )
        if label:
            print(f"harness: warning: the previous run died while measuring {label}; it is an "
                  "error row now (rerun_failed=true measures it again)", file=out)  # fmt: skip
    store.remove_stale_temporaries(run_path, mine)


def _isolate(cfg, overrides, run_path: Path, mine: dict) -> bool:
    """Measure in a child? isolate=true (the default) and points left that are not collectives
    (collectives run in rank processes of their own); never without the overrides, which are
    how a child is told the config."""
    if not cfg.isolate or overrides is None:
        return False
    finished = store.finished_keys(run_path, _done_statuses(cfg))
    return any(p.problem.op != "collective" for k, p in mine.items() if k not in finished)


def run_sweep(cfg: DictConfig, out=None, overrides: list[str] | None = None) -> RunResult:
    """Measure the sweep `cfg` into its run; `overrides` are what composed `cfg` (children are
    started with them; None: measure here)."""
    out = out or sys.stderr  # looked up per call: sys.stderr may be replaced after import
    if children.supervised():  # our parent holds the lock and did the start-up work
        with children.signals_as_exit():
            return _measure_here(cfg, out, overrides)
    devices = None
    if cfg.devices:
        devices = resolve_devices(cfg.devices)
    points, device = plan(OmegaConf.merge(cfg, {"device": devices[0]}) if devices else cfg)
    run_id = cfg.run_id or default_run_id(cfg.sweep.name, device)
    run_path = store.run_dir(cfg.results_dir, run_id)
    keyed = dict(keyed_points(cfg, points, device))
    mine = dict(shard_of(list(keyed.items()), cfg.shard_index, cfg.shard_count))
    with run_lock(run_path, cfg.shard_index, cfg.shard_count, out), children.signals_as_exit():
        _start_up(cfg, run_path, run_id, keyed, mine, device, out)
        if devices:
            return run_on_devices(
                cfg, overrides or [], devices, run_id, run_path, points, mine, out
            )
        if _isolate(cfg, overrides, run_path, mine):
            spec = device_spec(device)
            return supervise(cfg, overrides, [spec], run_id, run_path, mine, out)[0]
        return _measure_here(cfg, out, overrides, run_id)


def _measure_here(
    cfg: DictConfig, out, overrides: list[str] | None, run_id: str | None = None
) -> RunResult:
    """Measure this process's points of the sweep in this process."""
    points, device = plan(cfg)
    protocol = protocol_of(cfg)
    registry = load_all()
    bind_device(device)
    run_id = run_id or cfg.run_id or default_run_id(cfg.sweep.name, device)
    run_path = store.run_dir(cfg.results_dir, run_id)
    keyed = shard_of(keyed_points(cfg, points, device), cfg.shard_index, cfg.shard_count)
    finished = store.finished_keys(run_path, _done_statuses(cfg))
    since = os.environ.get(children.SINCE_ENV) if children.supervised() else None
    if since and cfg.rerun_failed:  # a restarted child: what this invocation wrote is done
        finished |= store.written_since(run_path, float(since))
    todo = [(k, p) for k, p in keyed if k not in finished]
    meta_name = "run.json" if cfg.shard_count == 1 else f"run-shard-{cfg.shard_index}.json"
    runrecord.begin(  # refuses a resume with another sweep, providers or protocol
        run_path,
        cfg,
        points,
        {
            "run_id": run_id,
            "sweep": cfg.sweep.name,
            "points": len(points),
            "shard": [cfg.shard_index, cfg.shard_count],
            "device": device.as_row(),
            "software": software(),
            "protocol": {**protocol.key_fields(), "timer": protocol.resolved_timer(device.type)},
            "updated": now_iso(),
        },
        overrides,
        meta_name=meta_name,
    )
    prebuild(todo, registry, device, out)
    telemetry = Telemetry(device.vendor, device.index) if device.is_gpu else None
    flusher = (
        L2Flusher(device.torch_device, device.flush_bytes, protocol.l2_flush)
        if device.is_gpu
        else None
    )
    marker = inflight.marker_path(run_path, cfg.shard_index)
    statuses: dict[str, int] = {}
    pending = len(todo)
    # Collectives (op "collective") run as one process per device, launched by
    # harness.collectives; rank 0 writes their rows. The rest go through the loop below.
    if any(p.problem.op == "collective" for _, p in todo):
        coll = [(k, p) for k, p in todo if p.problem.op == "collective"]
        todo = [(k, p) for k, p in todo if p.problem.op != "collective"]
        statuses.update(run_collective_points(cfg, coll, run_path, run_id, out=out))
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
            inflight.write_marker(run_path, cfg.shard_index, key, point.label())
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
    finally:  # only a process that dies leaves its marker: an exception or a signal is no crash
        marker.unlink(missing_ok=True)
        bar.close()
    runrecord.finish(run_path, pending, statuses, meta_name=meta_name)
    return RunResult(run_path, len(keyed), pending, len(keyed) - pending, statuses)
