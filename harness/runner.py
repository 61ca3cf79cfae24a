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

from tqdm import tqdm

from harness import children, inflight, runrecord, store
from harness.collectives import run_collective_points
from harness.device import DeviceInfo
from harness.lock import run_lock
from harness.measure.point import measure_point
from harness.measure.telemetry import Telemetry
from harness.measure.timer import L2Flusher
from harness.plan import RunPlan, RunResult, device_spec
from harness.problems import Problem
from harness.problems.base import world_size_of
from harness.provenance import now_iso, software
from harness.providers import Provider, Registry, load_all
from harness.providers.registry import Prebuild
from harness.shard import run_on_devices, supervise
from harness.sweep import Point
from harness.tune_pass import mark as mark_pretuned
from harness.tune_pass import tune_first


def bind_device(device: DeviceInfo) -> None:
    """Make `device` the current one: CUDA events, streams, graphs and Triton launches all use
    the current device. (Without this a worker on cuda:1 recorded its events on cuda:0's stream
    and timed nothing: found on a 2-GPU H200.)"""
    if device.type == "cuda":
        import torch

        torch.cuda.set_device(device.index)


def prebuild_jobs(points: list[Point], registry: Registry) -> dict:
    """What `points`' providers declare they load (Provider.prebuild): builder -> (what, the
    specs in order), one entry per builder, so each builds its share in one parallel call.
    scripts/prebuild_owed.py asks the same of an owed run, to build its libraries on a CPU."""
    problems: dict[Provider, tuple[Prebuild, list[Problem]]] = {}
    for point in points:
        provider = registry.get(point.problem.op, point.provider)
        if provider.prebuild is not None:
            problems.setdefault(provider, (provider.prebuild, []))[1].append(point.problem)
    jobs: dict = {}
    for hook, wanted in problems.values():
        jobs.setdefault(hook.build, (hook.what, []))[1].extend(hook.needs(wanted))
    return jobs


def prebuild(todo: list, registry: Registry, device: DeviceInfo, out) -> None:
    """Build what the pending points' providers declare (prebuild_jobs) before the first
    point, one parallel call per builder: no build ever runs inside a point (let alone its timed
    window). GPU sweeps only: the CPU runs no compiled library."""
    if not device.is_gpu:
        return
    jobs = prebuild_jobs([point for _, point in todo], registry)
    for build, (what, specs) in jobs.items():
        started = time.perf_counter()
        built = build(list(dict.fromkeys(specs)))
        errors = {k: v for k, v in built.items() if v.startswith("error")}
        print(
            f"harness: {len(built)} {what} ready in {time.perf_counter() - started:.0f} s"
            + (f"; {len(errors)} failed (their points will say why)" if errors else ""),
            file=out,
        )


def set_aside_unreadable(run_path: Path, points: dict[str, Point], out) -> None:
    """Move the run's unreadable row files aside (store.set_aside_unreadable), one warning each
    naming the point: without this a torn file counted as finished and every reader failed."""
    for key, why, moved_to in store.set_aside_unreadable(run_path):
        point = points.get(key)
        then = f"measuring {point.label()} again" if point else "not a point here"
        print(
            f"harness: warning: point {key}: row file unreadable ({why}); moved to {moved_to}, "
            f"{then}",
            file=out,
        )


def _start_up(plan: RunPlan, out) -> None:
    """Under the run's lock, before measuring: set aside unreadable row files, write the points
    a dead process was measuring as error rows (measuring them first again is what wedged a
    resume forever), and delete dead writers' temporaries of this writer's points."""
    set_aside_unreadable(plan.run_path, plan.keyed, out)
    registry = load_all()
    for marker in inflight.leftover_markers(plan.run_path):
        pid = inflight.held_by_live_process(marker)
        if pid is not None:
            print(
                f"harness: warning: pid {pid} (still running) left {marker}; not touched", file=out
            )
            continue
        label = inflight.settle(
            marker,
            plan.run_id,
            plan.mine,
            plan.device,
            plan.protocol,
            registry,
            inflight.PREVIOUS_RUN_DIED,
        )
        if label:
            print(
                f"harness: warning: the previous run died while measuring {label}; it is an "
                "error row now (rerun_failed=true measures it again)",
                file=out,
            )
    store.remove_stale_temporaries(plan.run_path, plan.mine)


def _isolate(plan: RunPlan) -> bool:
    """Measure in a child? isolate=true (the default) and points left of one rank (points of
    more ranks run in rank processes of their own). Never without the overrides, which are
    how a child is told the config: the caller asks that first. A tune_only run times nothing,
    so it prepares here."""
    if not plan.isolate or plan.tune_only:
        return False
    finished = store.finished_keys(plan.run_path, plan.done_statuses)
    return any(world_size_of(p.problem) == 1 for k, p in plan.mine.items() if k not in finished)


def run_sweep(plan: RunPlan, out=None, overrides: list[str] | None = None) -> RunResult:
    """Measure the run `plan` (harness.plan.run_plan, resolved once by the command);
    `overrides` are what composed its config (children are started with them; None: measure
    here)."""
    out = out or sys.stderr  # looked up per call: sys.stderr may be replaced after import
    if children.supervised():  # our parent holds the lock and did the start-up work
        with children.signals_as_exit():
            return _measure_here(plan, out, overrides)
    lock = run_lock(plan.run_path, plan.shard_index, plan.shard_count, out)
    with lock, children.signals_as_exit():
        _start_up(plan, out)
        if plan.devices:
            return _stopped_children(plan, run_on_devices(plan, overrides or [], out))
        if overrides is not None and _isolate(plan):
            meta_name = _meta_name(plan)
            runrecord.begin(plan, _record_meta(plan), overrides, meta_name=meta_name)
            with children.record_kept_here(meta_name):
                result, workers, elapsed = supervise(
                    plan, overrides, [device_spec(plan.device)], out
                )
            runrecord.finish(
                plan.run_path,
                result.measured,
                result.statuses,
                meta_name=meta_name,
                entry={
                    "restarts": sum(w.restarts for w in workers),
                    "crashes": [c for w in workers for c in w.crashes],
                },
            )
            return _stopped_children(plan, result)
        return _measure_here(plan, out, overrides)


def _meta_name(plan: RunPlan) -> str:
    """The run record this writer keeps: run.json, or its cluster shard's."""
    return "run.json" if plan.shard_count == 1 else f"run-shard-{plan.shard_index}.json"


def _record_meta(plan: RunPlan) -> dict:
    """The run record's fields this writer sets (the rest are the run's: runrecord.begin)."""
    return {
        "run_id": plan.run_id,
        "sweep": plan.sweep,
        "points": len(plan.points),
        "shard": [plan.shard_index, plan.shard_count],
        "device": plan.device.as_row(),
        "software": software(),
        "protocol": plan.protocol_key,
        "updated": now_iso(),
    }


def _stopped_children(plan: RunPlan, result: RunResult) -> RunResult:
    """A supervised run's result, marked stopped when its children stopped at stop_after_s
    (they exit 0 with points left; the limit has passed and those points have no row)."""
    left = result.total - result.already_done - result.measured
    if plan.stop_at is not None and time.time() >= plan.stop_at and left > 0:
        result.stopped = True
    return result


def _measure_here(plan: RunPlan, out, overrides: list[str] | None) -> RunResult:
    """Measure this process's points of the sweep (plan.mine) in this process; `overrides`
    only go into the run's record."""
    device, protocol, run_path = plan.device, plan.protocol, plan.run_path
    registry = load_all()
    bind_device(device)
    finished = store.finished_keys(run_path, plan.done_statuses)
    since = os.environ.get(children.SINCE_ENV) if children.supervised() else None
    if since and plan.done_statuses:  # a restarted child: what this invocation wrote is done
        finished |= store.written_since(run_path, float(since))
    todo = [(k, p) for k, p in plan.mine.items() if k not in finished]
    meta_name = _meta_name(plan)
    owner = children.parents_record() != meta_name  # else the supervisor keeps the entry
    runrecord.begin(  # refuses a resume with another sweep, providers or protocol
        plan, _record_meta(plan), overrides, meta_name=meta_name, append=owner
    )
    prebuild(todo, registry, device, out)
    telemetry = Telemetry(device.vendor, device.index) if device.is_gpu else None
    flusher = (
        L2Flusher(
            device.torch_device, device.flush_bytes, protocol.l2_flush, protocol.l2_flush_factor
        )
        if device.is_gpu
        else None
    )
    marker = inflight.marker_path(run_path, plan.shard_index)
    statuses: dict[str, int] = {}
    pending = len(todo)
    # Points of more than one rank (collectives, a tensor-parallel layer) run as one process per
    # device, launched by harness.collectives; rank 0 writes their rows. The rest go through
    # the loop below.
    # (tune_only times nothing: points of more ranks have no tuner, so they are left pending.)
    if not plan.tune_only and any(world_size_of(p.problem) > 1 for _, p in todo):
        ranked = [(k, p) for k, p in todo if world_size_of(p.problem) > 1]
        todo = [(k, p) for k, p in todo if world_size_of(p.problem) == 1]
        statuses.update(run_collective_points(plan, ranked, out=out))
    bar = tqdm(
        total=len(plan.mine),
        initial=len(plan.mine) - len(todo),
        disable=not plan.progress,
        file=out,
        dynamic_ncols=True,
        unit="pt",
    )
    done_here, left = 0, 0  # points timed by the loop below; left untimed at stop_after_s
    tune_record: dict = {}  # the tune pass's points and seconds, for run.json's history
    try:
        pretuned = tune_first(
            todo,
            registry,
            device,
            protocol,
            run_path,
            plan.shard_index,
            out,
            plan.point_timeout_s,
            force=plan.tune_only,
            stop_at=plan.stop_at,
            compile_workers=plan.compile_workers,
            processes_here=plan.shard_count,
            record=tune_record,
        )
        for key, point in [] if plan.tune_only else todo:
            if plan.stop_at is not None and time.time() >= plan.stop_at:
                left = len(todo) - done_here  # stop_after_s: these stay pending; a resume
                break
            bar.set_postfix_str(point.label(), refresh=True)
            inflight.write_marker(run_path, plan.shard_index, key, point.label())
            row = measure_point(
                point.problem,
                registry.get(point.problem.op, point.provider),
                device,
                protocol,
                telemetry=telemetry,
                flusher=flusher,
                timeout_s=plan.point_timeout_s,
            )
            row.update(run_id=plan.run_id, point_key=key)
            store.write_row(run_path, mark_pretuned(row) if key in pretuned else row)
            statuses[row["status"]] = statuses.get(row["status"], 0) + 1
            done_here += 1
            bar.update(1)
    finally:  # only a process that dies leaves its marker: an exception or a signal is no crash
        marker.unlink(missing_ok=True)
        bar.close()
    done = len(plan.mine) - pending
    if plan.tune_only:  # nothing timed: the points stay pending for the run that times them
        runrecord.finish(  # its overrides say tune_only
            run_path, 0, {}, meta_name=meta_name, entry=_tune_entry(tune_record), counts=owner
        )
        # stop_after_s passed: the tune pass may have left points untuned (it says how many)
        stopped = plan.stop_at is not None and time.time() >= plan.stop_at
        return RunResult(run_path, len(plan.mine), 0, done, {}, stopped=stopped)
    runrecord.finish(
        run_path,
        pending - left,
        statuses,
        meta_name=meta_name,
        entry=_tune_entry(tune_record),
        counts=owner,
    )
    return RunResult(run_path, len(plan.mine), pending - left, done, statuses, stopped=left > 0)


def _tune_entry(record: dict) -> dict | None:
    """The history entry's `tune_pass` field: what the pass did, where it ran at all."""
    return {"tune_pass": record} if record else None
