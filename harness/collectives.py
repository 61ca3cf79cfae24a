"""Measure points of several ranks: one process per device (rank = device index), in lockstep.

Collectives, and any problem with world_size > 1 (a tensor-parallel decoder layer, whose
all-reduces run inside the measured step).

This module is only what is genuinely multi-process: it groups the points by (backend,
world_size), starts world_size ranks per group with torch.multiprocessing.spawn (gloo:
world_size processes on the CPU), sets up the process group, and walks the group's points in
the same order on every rank. Each point is measured by the common point engine
(measure.point.measure_point) with peers=Lockstep (measure.lockstep): check, then time, with the
ranks agreeing on each step's outcome (ok only if every rank's output is right; a rank that
fails to prepare makes the point an error row on every rank); timing gives the slowest rank's
time per call. Only rank 0 writes rows.

A failure inside communication cannot be agreed on (the peers are waiting inside a collective):
the rank raises, the process group's timeout ends any wait, spawn stops the other ranks, and
the parent writes that point as an error row and starts the group again after it. NVLink
multicast stays off (NCCL_NVLS_ENABLE=0) in the parent and every rank.
"""

from __future__ import annotations

import contextlib
import datetime
import importlib
import json
import os
import re
import signal
import socket
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

from harness import store
from harness.children import SAFE_ENV, die_with_parent
from harness.device import DeviceInfo, get_device
from harness.measure.lockstep import Lockstep
from harness.measure.point import clip, first_line, measure_point, unmeasured_row
from harness.measure.protocol import Protocol
from harness.measure.telemetry import Telemetry
from harness.plan import RunPlan
from harness.problems import CollectiveProblem
from harness.problems.base import world_size_of
from harness.providers import REGISTRY, load_all
from harness.providers.collectives import backend_of
from harness.sweep import Point

GROUP_TIMEOUT_S = 300.0  # any single collective or rendezvous; capped by point_timeout_s
MAX_BARREN_LAUNCHES = 2  # launches of one group in a row that finish no point: give up on it


@dataclass(frozen=True)
class _Settings:
    """What every rank needs besides its points (picklable: crosses the spawn)."""

    protocol: Protocol
    run_path: Path
    run_id: str
    point_timeout_s: float | None
    group_timeout_s: float
    modules: tuple[str, ...]  # provider modules to import (the providers of these points)
    progress: bool


def run_collective_points(
    plan: RunPlan, points: list[tuple[str, Point]], out=sys.stderr
) -> dict[str, int]:
    """Measure (point_key, point) pairs of problems with world_size > 1 (collectives and
    tensor-parallel layers) into plan.run_path; returns status counts."""
    os.environ.update(SAFE_ENV)
    run_path, run_id = plan.run_path, plan.run_id
    if plan.shard_count > 1:  # device workers of one host would each start ranks on GPUs 0..n-1
        print(
            f"harness: {len(points)} collective points left for a run without devices= / "
            "shard_count (their ranks take devices 0..n-1 themselves)",
            file=out,
        )
        return {}
    protocol = plan.protocol
    device = plan.device  # rank 0's device: its columns go into parent-written rows
    registry = load_all()
    timeout = min(GROUP_TIMEOUT_S, plan.point_timeout_s or GROUP_TIMEOUT_S)
    statuses: dict[str, int] = {}
    groups: dict[tuple[str, int], list[tuple[str, Point]]] = {}
    for key, point in points:
        provider = registry.get(point.problem.op, point.provider)
        why = provider.why_not(point.problem, device)
        if why:
            _write(run_path, run_id, key, point, provider, device, protocol, "skipped", why)
            statuses["skipped"] = statuses.get("skipped", 0) + 1
            continue
        world = world_size_of(point.problem)
        if world < 2:  # callers pass points of several ranks only
            raise TypeError(f"not a point of several ranks: {point.problem.label()}")
        group = (_backend(point.problem, provider, device), world)
        groups.setdefault(group, []).append((key, point))
    for (backend, world), items in groups.items():
        modules = sorted(
            {registry.get(p.problem.op, p.provider).prepare.__module__ for _, p in items}
        )
        settings = _Settings(
            protocol,
            Path(run_path),
            run_id,
            plan.point_timeout_s,
            timeout,
            tuple(modules),
            plan.progress,
        )
        print(f"harness: collectives on {backend}, {world} ranks: {len(items)} points", file=out)
        for status in _run_group(backend, world, items, settings, registry, device, out):
            statuses[status] = statuses.get(status, 0) + 1
    return statuses


def _backend(problem, provider, device: DeviceInfo) -> str:
    """A collective's provider names its backend; other problems' ranks use the device's
    (gloo on the CPU, NCCL or RCCL on GPUs)."""
    if isinstance(problem, CollectiveProblem):
        return backend_of(provider)
    return "gloo" if device.type == "cpu" else "nccl"


def _progress_path(run_path: Path) -> Path:
    """Rank 0's progress through a launch's points; a crash leaves it behind for the parent."""
    return Path(run_path) / "_collectives" / "progress.json"


def _rank_error_path(run_path: Path, rank: int) -> Path:
    return Path(run_path) / "_collectives" / f"rank-{rank}-error.json"


_ECHO = re.compile(r"closed by peer|connection reset|broken pipe|remote worker crash", re.I)


def _first_failure(run_path: Path, processes: list, spawn_error: str) -> str:
    """The cause, not its echoes: a rank that died without a Python exception (exit code other
    than 1, or a signal other than spawn's SIGTERM), else the earliest exception a rank recorded
    (a rank that times out is followed by its peers failing on the closed connection), else
    what spawn reported."""
    seen = []
    for rank in range(len(processes)):
        path = _rank_error_path(run_path, rank)
        if path.exists():
            seen.append(json.loads(path.read_text()))
            path.unlink()
    for rank, proc in enumerate(processes):
        code = proc.exitcode
        if code is not None and code not in (0, 1, -signal.SIGTERM):
            how = (
                f"killed by {signal.Signals(-code).name}"
                if code < 0
                else f"exited with code {code}"
            )
            return f"rank {rank} {how}"
    if not seen:
        return spawn_error
    # A peer that lost its connection is an echo of the real failure (a timeout, an exception)
    # elsewhere; which of the two is recorded first is a race, so echoes only speak last.
    causes = [e for e in seen if not _ECHO.search(e["error"])] or seen
    first = min(causes, key=lambda e: e["time"])
    return clip(f"rank {first['rank']}: {first['error']}")


def _mark(run_path: Path, done: int, started: bool) -> None:
    """Points [0, done) have rows; `started`: point `done` is being measured."""
    store.write_text(_progress_path(run_path), json.dumps({"done": done, "started": started}))


def _run_group(backend, world, items, settings, registry, device, out) -> list[str]:
    """Launch the group's ranks until every point has a row: a launch that fails inside a point
    costs that point (an error row) and the next launch starts after it; one that fails before
    any point (rendezvous, communicator set-up) is retried, then its points become error rows."""
    statuses, barren = [], 0
    while items:
        _mark(settings.run_path, 0, False)
        port = _free_port()
        args = (world, backend, port, items, settings)
        ranks = mp.start_processes(_rank_main, args, nprocs=world, join=False, start_method="spawn")
        try:
            while not ranks.join():
                pass
            failure = None
        except Exception as e:  # a rank raised or died; join has stopped the others
            failure = _first_failure(settings.run_path, ranks.processes, _spawn_failure(e))
        progress = json.loads(_progress_path(settings.run_path).read_text())
        done = progress["done"]
        statuses += _statuses_of(settings.run_path, items[:done])
        _progress_path(settings.run_path).unlink(missing_ok=True)
        if failure is None:
            break
        print(f"harness: collective ranks failed: {failure}", file=out)
        if progress["started"]:
            barren, lost = 0, items[done : done + 1]
        else:
            barren = 0 if done else barren + 1
            lost = items[done:] if barren >= MAX_BARREN_LAUNCHES else []
        for key, point in lost:
            provider = registry.get(point.problem.op, point.provider)
            when = (
                "during this point" if progress["started"] else f"{barren} times before any point"
            )
            reason = f"ranks of world {world} failed {when}: {failure}"
            _write(
                settings.run_path,
                settings.run_id,
                key,
                point,
                provider,
                device,
                settings.protocol,
                "error",
                reason,
            )
            statuses.append("error")
        items = items[done + len(lost) :]
    with contextlib.suppress(OSError):
        _progress_path(settings.run_path).parent.rmdir()  # only if empty
    return statuses


def _statuses_of(run_path: Path, items: list) -> list[str]:
    if not items:
        return []
    df = store.read_rows(
        *[Path(run_path) / "rows" / f"{k}.parquet" for k, _ in items], columns=["status"]
    )
    return list(df["status"])


def _spawn_failure(e: Exception) -> str:
    """One line for a failed spawn: the rank's exception (last traceback line) or its exit."""
    text = str(e).strip().splitlines()
    msg = next((ln for ln in reversed(text) if ln.strip()), type(e).__name__)
    rank = getattr(e, "error_index", None)
    return clip(f"rank {rank}: {msg.strip()}" if rank is not None else msg.strip())


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _write(run_path, run_id, key, point, provider, device, protocol, status, reason) -> None:
    """A row the parent writes itself (skipped, or error after a failed launch)."""
    row = unmeasured_row(point.problem, provider, device, protocol, status, reason)
    store.write_row(Path(run_path), {**row, "run_id": run_id, "point_key": key})


# ---------------------------------------------------------------------------------------------
# In each rank
# ---------------------------------------------------------------------------------------------


def _rank_main(rank: int, world: int, backend: str, port: int, items: list, s: _Settings) -> None:
    die_with_parent()  # a killed parent leaves no rank waiting in a collective
    os.environ.update(SAFE_ENV)
    try:
        for mod in s.modules:  # only the providers of these points: the ranks start faster
            importlib.import_module(mod)
        device = get_device("cpu" if backend == "gloo" else f"cuda:{rank}")
        if device.type == "cuda":
            torch.cuda.set_device(device.index)
        dist.init_process_group(
            backend,
            init_method=f"tcp://127.0.0.1:{port}",
            rank=rank,
            world_size=world,
            timeout=datetime.timedelta(seconds=s.group_timeout_s),
        )
        _walk(rank, items, device, s)
    except BaseException as e:  # recorded with its time: the parent reports the first one
        err = {"rank": rank, "time": time.time(), "error": first_line(e)}
        store.write_text(_rank_error_path(s.run_path, rank), json.dumps(err))
        raise
    finally:
        if dist.is_initialized():
            dist.destroy_process_group()


def _walk(rank: int, items: list, device: DeviceInfo, s: _Settings) -> None:
    """Every point in order, in step with the other ranks; rank 0 writes the rows."""
    tel = Telemetry(device.vendor, device.index) if rank == 0 and device.is_gpu else None
    peers = Lockstep(device)
    for i, (key, point) in enumerate(items):
        if rank == 0:
            _mark(s.run_path, i, True)
        # No rank starts point i before rank 0 has written row i - 1 and marked point i, so a
        # rank that dies in point i is blamed on point i.
        peers.barrier()
        provider = REGISTRY.get(point.problem.op, point.provider)
        row = measure_point(
            point.problem,
            provider,
            device,
            s.protocol,
            telemetry=tel,
            timeout_s=s.point_timeout_s,
            peers=peers,
        )
        if rank == 0:
            row.update(run_id=s.run_id, point_key=key)
            store.write_row(s.run_path, row)
            _mark(s.run_path, i + 1, False)
            if s.progress:
                print(f"  {row['status']:7s} {point.label()}", file=sys.stderr, flush=True)
    peers.barrier()
