"""Measure a sweep through child processes: one worker per device (devices=), one merged run;
or, for a plain `harness run`, one child on its one device (isolate=true, the default).

Each child is `harness run <same overrides> device=<d> shard_index=i shard_count=n`, so it
measures every n-th point into the shared run folder (rows are files named by point key, so
workers never write the same file). A child that dies (a segfault in a ctypes-loaded kernel,
os._exit, the OOM killer) loses only the point it was measuring: the parent reads the child's
in-flight marker (harness.inflight), writes that point as an error row naming the exit ("process
killed by SIGSEGV (signal 11) while measuring this point"), and starts the child again, which
goes on after the points already written; the sweep completes in the same invocation. The parent
holds the run's lock and stops its children (process groups) when it is stopped; they die with
it when it is killed (harness.children).

Why a child even on one device: measuring in the process that owns the run made a point that
kills the process wedge the sweep (every resume measured it first and died again). The child
costs one interpreter start, torch import and config composition per run (and per crash): about
3.3 s measured on this project's 2-core CPU test machine (smoke sweep, wall time: torch-cpu's
8 points 4.2 s in-process vs 7.5 s isolated, median of 3; all 38 points 13.8 s vs 17.5 s), little against a GPU sweep's minutes. isolate=false measures in-process, where a point that
kills the process becomes an error row on the next run instead (harness.inflight).
"""

from __future__ import annotations

import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from tqdm import tqdm

from harness import children, inflight, runrecord, store
from harness.device import DeviceInfo, get_device
from harness.plan import EXIT_STOPPED, RunPlan, RunResult
from harness.provenance import now_iso, software
from harness.providers import load_all
from harness.sweep import Point

ERROR_PREFIX = "harness: error: "  # cli.main's one-line form
MAX_RESTARTS = 3  # exits that no point can be blamed for (a point that kills: always restarted)
EXIT_BAD_INPUT = 2  # a child that refuses its input would refuse it again: not restarted
TICK_S = 0.05  # how often the parent looks at its children (a finished child is seen at once)
POLL_S = 1.0  # how often the progress bar counts row files
# Overrides the parent sets per worker; the user's own values for these are replaced.
_WORKER_KEYS = ("devices=", "device=", "shard_index=", "shard_count=", "run_id=", "progress=")


@dataclass
class _Worker:
    index: int
    device: str
    log: Path
    name: str  # in messages and error rows: "worker 1 on cuda:1", "child process on cpu"
    proc: subprocess.Popen | None = None
    restarts: int = 0
    blameless: int = 0  # exits that no in-flight point explains
    crashes: list[str] = field(default_factory=list)
    gave_up: bool = False
    error: str | None = None  # the child's own one-line "harness: error: ..." when it exited 2


def _worker_cmd(overrides: list[str], w: _Worker, count: int, run_id: str) -> list[str]:
    keep = [o for o in overrides if not o.startswith(_WORKER_KEYS)]
    return [
        sys.executable,
        "-m",
        "harness.cli",
        "run",
        *keep,
        f"device={w.device}",
        f"shard_index={w.index}",
        f"shard_count={count}",
        f"run_id={run_id}",
        "progress=false",
    ]


def _start(w: _Worker, cmd: list[str], since: float) -> None:
    extra = dict(children.SAFE_ENV)
    if w.device == "cpu":
        extra["TRITON_INTERPRET"] = "1"
    w.proc = children.start(cmd, children.child_env(extra, since), w.log)


def _error_line(log: Path) -> str | None:
    """The last one-line error a child printed (without "harness: error: "), if any."""
    try:
        text = log.read_text(errors="replace").splitlines()
    except OSError:
        return None
    said = [line for line in text if line.startswith(ERROR_PREFIX)]
    return said[-1].removeprefix(ERROR_PREFIX) if said else None


def _log_tail(log: Path, lines: int = 5) -> str:
    try:
        text = log.read_text(errors="replace").strip().splitlines()[-lines:]
    except OSError:
        return ""
    return "".join(f"\n    {line}" for line in text)


@dataclass
class _Run:
    """What the parent needs to turn a child's death into an error row."""

    run_id: str
    run_path: Path
    mine: dict[str, Point]  # this writer's points by key (its cluster shard of the sweep)
    devices: dict[str, DeviceInfo] = field(default_factory=dict)

    def device(self, spec: str) -> DeviceInfo:
        if spec not in self.devices:
            self.devices[spec] = get_device(spec)
        return self.devices[spec]


def _on_exit(w: _Worker, rc: int, run: _Run, protocol, registry, out) -> bool:
    """Handle a child's non-zero exit: its in-flight point becomes an error row naming the exit;
    returns whether to start it again."""
    marker = inflight.marker_path(run.run_path, w.index)
    why = children.describe_exit(rc)
    reason = f"process {why} while measuring this point ({w.name})"
    lost = None
    if marker.exists():
        lost = inflight.settle(
            marker, run.run_id, run.mine, run.device(w.device), protocol, registry, reason
        )
    store.remove_stale_temporaries(run.run_path, run.mine)  # the dead child's half-written row
    w.crashes.append(why + (f" during {lost}" if lost else ""))
    if lost:
        print(
            f"harness: {w.name}: process {why} during {lost}; that point is an error row, "
            "measuring on",
            file=out,
        )
        return True
    w.blameless += 1
    said = _error_line(w.log) if rc == EXIT_BAD_INPUT else None
    if said:  # a full disk, a read-only folder, a refused resume: the child said it in one line
        w.gave_up, w.error = True, said
        return False
    if rc != EXIT_BAD_INPUT and w.blameless <= MAX_RESTARTS:
        print(f"harness: {w.name}: process {why}; starting it again", file=out)
        return True
    w.gave_up = True
    print(
        f"harness: error: {w.name}: process {why} without a point to blame, "
        f"{w.blameless} time(s); gave up; last lines of {w.log}:{_log_tail(w.log)}",
        file=out,
    )
    return False


def supervise(
    plan: RunPlan, overrides: list[str], devices: list[str] | tuple[str, ...], out
) -> tuple[RunResult, list[_Worker], float]:
    """Measure plan.mine (this writer's points, by key) through one child per device, started
    with `overrides`, restarting a child that dies. The caller holds the run's lock and did the
    start-up work. Returns the result (counting rows written since the children started), the
    workers, and seconds."""
    protocol, registry = plan.protocol, load_all()
    run_id, run_path, mine = plan.run_id, plan.run_path, plan.mine
    run = _Run(run_id, run_path, mine)
    n = len(devices) * plan.shard_count  # nested: a cluster job's shard split again per device
    logs = run_path / "_workers"
    logs.mkdir(parents=True, exist_ok=True)
    # Local worker i of cluster shard s takes shard s + i * shard_count of n: problem slots that
    # are s modulo shard_count, split again over this host's devices.
    workers = []
    for i, d in enumerate(devices):
        index = plan.shard_index + i * plan.shard_count
        name = f"worker {index} on {d}" if len(devices) > 1 else f"child process on {d}"
        workers.append(_Worker(index, d, logs / f"worker-{i}.log", name))
    keys = set(mine)
    since = time.time()
    before = store.finished_keys(run_path) & keys
    for w in workers:
        _start(w, _worker_cmd(overrides, w, n, run_id), since)
    bar = tqdm(total=len(mine), disable=not plan.progress, file=out, unit="pt", dynamic_ncols=True)
    counted = 0.0
    try:
        while any(w.proc is not None for w in workers):
            time.sleep(TICK_S)
            if time.monotonic() - counted >= POLL_S:
                counted = time.monotonic()
                bar.n = len(store.finished_keys(run_path) & keys)
                bar.refresh()
            for w in workers:
                rc = None if w.proc is None else w.proc.poll()
                if rc is None:
                    continue
                w.proc = None
                # EXIT_STOPPED: stop_after_s ended the child between points; it is done
                if rc not in (0, EXIT_STOPPED) and _on_exit(w, rc, run, protocol, registry, out):
                    w.restarts += 1
                    _start(w, _worker_cmd(overrides, w, n, run_id), since)
    finally:
        bar.close()
        stopped = [(w, w.proc) for w in workers if w.proc is not None]
        children.stop([proc for _, proc in stopped])
        for w, _ in stopped:  # stopped on purpose (Ctrl-C, SIGTERM, an error here): not a crash
            inflight.marker_path(run_path, w.index).unlink(missing_ok=True)
    new = store.written_since(run_path, since) & keys
    df = store.read_rows(run_path, columns=["point_key", "status"])
    statuses = df[df.point_key.isin(new)].status.value_counts().to_dict()
    gave_up = [w.name for w in workers if w.gave_up]
    errors = [w.error for w in workers if w.error]
    result = RunResult(run_path, len(mine), len(new), len(before - new), statuses, gave_up, errors)
    return result, workers, time.time() - since


def run_on_devices(plan: RunPlan, overrides: list[str], out) -> RunResult:
    """devices=: one worker per device of plan.devices; run.json records the invocation
    (devices, workers, their crashes) in the run's history (harness.runrecord)."""
    # A cluster job's parent gets its own record: run-shard-<i>.json is its worker 0's.
    meta_name = "run.json" if plan.shard_count == 1 else f"run-host-{plan.shard_index}.json"
    devices = list(plan.devices)
    runrecord.begin(  # before the workers: they compare their plan with this record
        plan,
        {
            "run_id": plan.run_id,
            "sweep": plan.sweep,
            "points": len(plan.points),
            "devices": devices,
            "shards": len(devices) * plan.shard_count,
            "software": software(),
            "updated": now_iso(),
        },
        overrides,
        meta_name=meta_name,
    )
    with children.record_kept_here(meta_name):  # a lone worker writes the same record
        result, workers, elapsed = supervise(plan, overrides, devices, out)
    runrecord.finish(
        plan.run_path,
        result.measured,
        result.statuses,
        meta_name=meta_name,
        wall_s=round(elapsed, 1),
        workers=[
            {"index": w.index, "device": w.device, "restarts": w.restarts, "crashes": w.crashes}
            for w in workers
        ],
    )
    return result
