"""One sweep over several devices of a host: one worker process per device, one merged run.

Each worker is `harness run <same overrides> device=<d> shard_index=i shard_count=n`, so it
measures every n-th point into the shared run folder (rows are files named by point key, so
workers never write the same file). A worker that dies (segfault, OOM-kill, a hung kernel
killed from outside) loses only the point it was measuring: the parent reads the worker's
in-flight marker, writes that point as an error row naming the crash, and restarts the worker,
which resumes after the points already written.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from omegaconf import DictConfig, OmegaConf
from tqdm import tqdm

from harness import runrecord, store
from harness.device import get_device
from harness.provenance import now_iso, software

MAX_RESTARTS = 3
POLL_S = 1.0
# Overrides the parent sets per worker; the user's own values for these are replaced.
_WORKER_KEYS = ("devices=", "device=", "shard_index=", "shard_count=", "run_id=", "progress=")
# NVLink multicast stays off in everything the harness starts (it can take a shared host's GPUs
# out of service); workers inherit these.
SAFE_ENV = {
    "NCCL_NVLS_ENABLE": "0",
    "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1",
    "NVSHMEM_DISABLE_NVLS": "1",
}


def resolve_devices(spec) -> list[str]:
    """all | [0, 2] | [cpu, cpu] -> worker device strings; raises ValueError naming allowed values."""
    import torch

    count = torch.cuda.device_count()
    if spec == "all":
        if count == 0:
            raise ValueError(
                "devices: 'all' but torch sees no GPU; allowed: [cpu,cpu] (CPU workers)"
            )
        return [f"cuda:{i}" for i in range(count)]
    parts = [spec] if isinstance(spec, str | int) else list(spec)
    out = []
    for part in (str(p).strip() for p in parts):
        if part == "cpu":
            out.append("cpu")
        elif part.isdigit() and int(part) < count:
            out.append(f"cuda:{part}")
        else:
            allowed = f"all, or indices 0..{count - 1}" if count else "cpu (no GPU visible)"
            raise ValueError(f"devices: unknown '{part}'; allowed: {allowed}")
    return out


@dataclass
class _Worker:
    index: int
    device: str
    log: Path
    proc: subprocess.Popen | None = None
    restarts: int = 0
    crashes: list[str] | None = None


def _worker_cmd(overrides: list[str], w: _Worker, count: int, run_id: str) -> list[str]:
    keep = [o for o in overrides if not o.startswith(_WORKER_KEYS)]
    return [sys.executable, "-m", "harness.cli", "run", *keep, f"device={w.device}",
            f"shard_index={w.index}", f"shard_count={count}", f"run_id={run_id}", "progress=false"]  # fmt: skip


def _start(w: _Worker, cmd: list[str]) -> None:
    env = {**os.environ, **SAFE_ENV}
    if w.device == "cpu":
        env["TRITON_INTERPRET"] = "1"
    with open(w.log, "a") as log:
        w.proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env)


def _record_crash(run_path: Path, run_id: str, w: _Worker, rc: int, keyed: dict) -> str | None:
    """Turn the crashed worker's in-flight point into an error row; returns its label."""
    from harness.runner import inflight_path

    marker = inflight_path(run_path, w.index)
    if not marker.exists():
        return None
    info = json.loads(marker.read_text())
    point = keyed.get(info["point_key"])
    marker.unlink(missing_ok=True)
    if point is None or (run_path / "rows" / f"{info['point_key']}.parquet").exists():
        return None
    problem = point.problem
    row = {
        "run_id": run_id, "point_key": info["point_key"], "op": problem.op,
        "provider": point.provider, "status": "error",
        "reason": f"worker {w.index} on {w.device} crashed (exit {rc}) while measuring this point",
        **{k: v for k, v in problem.axes().items()}, "problem": problem.label(),
        **get_device(w.device).as_row(), **software(), "timestamp": now_iso(),
    }  # fmt: skip
    store.write_row(run_path, {k: v for k, v in row.items() if k in store.COLUMNS})
    return info["label"]


def run_on_devices(cfg: DictConfig, overrides: list[str], out=None):
    """Shard the sweep over `cfg.devices`; returns the merged run's RunResult."""
    out = out or sys.stderr
    from harness import runner
    from harness.runner import RunResult, default_run_id, keyed_points, plan, shard_of

    devices = resolve_devices(cfg.devices)
    points, device = plan(OmegaConf.merge(cfg, {"device": devices[0]}))
    run_id = cfg.run_id or default_run_id(cfg.sweep.name, device)
    run_path = store.run_dir(cfg.results_dir, run_id)
    keyed = dict(keyed_points(cfg, points, device))
    runner.set_aside_unreadable(run_path, keyed, out)  # before the workers start: they would race
    before = store.finished_keys(run_path)
    n = len(devices) * cfg.shard_count  # nested: a cluster job's shard split again per device
    # A cluster job's parent gets its own record: run-shard-<i>.json is its worker 0's.
    meta_name = "run.json" if cfg.shard_count == 1 else f"run-host-{cfg.shard_index}.json"
    runrecord.begin(  # before the workers: they compare their plan with this record
        run_path, cfg, points,
        {"run_id": run_id, "sweep": cfg.sweep.name, "points": len(points), "devices": devices,
         "shards": n, "software": software(), "updated": now_iso()},
        overrides, meta_name=meta_name,
    )  # fmt: skip
    logs = run_path / "_workers"
    logs.mkdir(parents=True, exist_ok=True)
    # Local worker i of cluster shard s takes shard s + i * shard_count of n: problem slots that
    # are s modulo shard_count, split again over this host's devices.
    workers = [_Worker(cfg.shard_index + i * cfg.shard_count, d, logs / f"worker-{i}.log", crashes=[])
               for i, d in enumerate(devices)]  # fmt: skip
    started = time.perf_counter()
    for w in workers:
        _start(w, _worker_cmd(overrides, w, n, run_id))
    mine = {k for k, _ in shard_of(list(keyed.items()), cfg.shard_index, cfg.shard_count)}
    bar = tqdm(total=len(mine), disable=not cfg.progress, file=out, unit="pt", dynamic_ncols=True)
    try:
        while any(w.proc is not None for w in workers):
            time.sleep(POLL_S)
            bar.n = len(store.finished_keys(run_path) & mine)
            bar.refresh()
            for w in workers:
                rc = None if w.proc is None else w.proc.poll()
                if rc is None:
                    continue
                w.proc = None
                if rc == 0:
                    continue
                lost = _record_crash(run_path, run_id, w, rc, keyed)
                w.crashes.append(f"exit {rc}" + (f" during {lost}" if lost else ""))
                print(f"harness: worker {w.index} ({w.device}) crashed: {w.crashes[-1]}", file=out)
                if w.restarts < MAX_RESTARTS:
                    w.restarts += 1
                    _start(w, _worker_cmd(overrides, w, n, run_id))
    finally:
        bar.close()
        for w in workers:
            if w.proc is not None:
                w.proc.terminate()
    elapsed = time.perf_counter() - started
    df = store.read_rows(run_path, columns=["point_key", "status"])
    df = df[df.point_key.isin(mine)]
    statuses = df.status.value_counts().to_dict()
    measured = len(set(df.point_key) - before)
    runrecord.finish(
        run_path, measured, statuses, meta_name=meta_name, wall_s=round(elapsed, 1),
        workers=[{"index": w.index, "device": w.device, "restarts": w.restarts,
                  "crashes": w.crashes} for w in workers],
    )  # fmt: skip
    return RunResult(run_path, len(mine), measured, len(mine) - measured, statuses)
