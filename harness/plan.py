"""What a run will measure, resolved from its config once, before anything is measured (RunPlan:
the sweep's points and their keys, the device and device workers, the protocol, this writer's
shard, the run's id and folder, what a resume must share); and what a run reports (RunResult).

`harness run` builds one RunPlan per process (run_plan) and hands it to the runner, which
hands it to the device workers' parent (harness.shard) and the collective ranks' parent
(harness.collectives): nothing below the command reads the config or plans again. They all
take these from here, so none of them imports another to learn the plan (they used to: a
runner <-> shard <-> collectives import circle).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import re
import time
from dataclasses import dataclass, field
from pathlib import Path

from omegaconf import DictConfig, OmegaConf

from harness import children
from harness.config import protocol_of
from harness.device import DeviceInfo, get_device
from harness.measure.lockstep import check_protocol
from harness.measure.protocol import Protocol
from harness.problems import CollectiveProblem
from harness.problems.base import world_size_of
from harness.provenance import kernel_source_hash
from harness.providers import load_all
from harness.store import run_dir
from harness.sweep import Point, expand, point_key


@dataclass
class RunResult:
    run_path: Path
    total: int
    measured: int
    already_done: int
    statuses: dict[str, int]
    gave_up: list[str] = field(default_factory=list)  # children that died with no point to blame
    errors: list[str] = field(default_factory=list)  # their one-line errors (exit 2), if said
    stopped: bool = False  # stop_after_s was reached with points (or, tune_only, tuning) left


# `harness run` exits so when stop_after_s ended it with points left (sysexits' EX_TEMPFAIL: not
# finished, try again; the same command resumes). A measuring child exits so too: not a crash.
EXIT_STOPPED = 75


def stop_time(stop_after_s: float | None) -> float | None:
    """The epoch time after which this invocation starts no new point (stop_after_s=). Counted
    from when the invocation began: a measuring child started by a supervising parent counts
    from the parent's start (children.SINCE_ENV), so a restarted child keeps the same end."""
    if stop_after_s is None:
        return None
    if stop_after_s <= 0:
        raise ValueError(f"stop_after_s: {stop_after_s:g} is not positive; allowed: seconds > 0")
    since = os.environ.get(children.SINCE_ENV) if children.supervised() else None
    return (float(since) if since else time.time()) + float(stop_after_s)


def default_run_id(sweep: str, device: DeviceInfo) -> str:
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%S")
    short = re.sub(r"[^a-z0-9]+", "-", device.name.lower()).strip("-")[:24] or device.type
    return f"{sweep}-{short}-{stamp}"


def device_identity(device: DeviceInfo) -> str:
    """The part of the point key that names the device: its model, not the card, so every shard
    of a multi-GPU run and a resumed run on another card of the model agree on keys (each row
    still records its card's index and UUID)."""
    return f"{device.vendor}|{device.name}"


def device_spec(device: DeviceInfo) -> str:
    """The device= value that names `device` in a child: cpu, cuda:N, xpu:N."""
    return "cpu" if device.type == "cpu" else f"{device.type}:{device.index}"


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


def plan(cfg: DictConfig) -> tuple[list[Point], DeviceInfo]:
    """Validate and expand the sweep on cfg.device; raises ValueError naming the bad key."""
    points, device, _ = _expand(cfg, cfg.device)
    return points, device


def _expand(cfg: DictConfig, device_spec: str) -> tuple[list[Point], DeviceInfo, Protocol]:
    """The sweep's points, the device and the protocol, each resolved once and checked against
    the others; raises ValueError naming the bad key."""
    device = get_device(device_spec)
    protocol = protocol_of(cfg)
    if not device.is_gpu and protocol.timer in ("cuda-events", "cuda-graph"):
        raise ValueError(
            f"protocol.timer: '{protocol.timer}' needs a GPU; allowed on cpu: auto, host"
        )
    groups = OmegaConf.to_container(cfg.sweep.groups, resolve=True)
    if not isinstance(groups, list):  # SweepConfig.groups is a list: composition sees to it
        raise ValueError(f"sweep.groups: a {type(groups).__name__}; allowed: a list of groups")
    only = list(cfg.providers) if cfg.providers is not None else None
    points = expand(groups, load_all(), only)
    ranked = [p for p in points if world_size_of(p.problem) > 1]
    if ranked:  # what lockstep timing cannot honour is refused
        plain = all(isinstance(p.problem, CollectiveProblem) for p in ranked)
        check_protocol(protocol, device.type, collectives_only=plain)
    limit = cfg.max_points or cfg.sweep.max_points
    if len(points) > limit:
        raise ValueError(
            f"max_points: sweep '{cfg.sweep.name}' has {len(points)} points, over its limit {limit}; "
            f"allowed: max_points>={len(points)} or fewer providers/axes"
        )
    return points, device, protocol


def protocol_key(protocol: Protocol, device: DeviceInfo) -> dict:
    """The protocol fields that enter every point key, with the timer `auto` resolves to."""
    return {**protocol.key_fields(), "timer": protocol.resolved_timer(device.type)}


def resume_record(cfg: DictConfig, points: list[Point], device: DeviceInfo | None = None) -> dict:
    """What a resume must share with the run (run.json's `plan`): sweep name, its points
    (problems x providers, as a digest), the provider set, every protocol field (not only
    those in the point key), the kernel sources (their hash, as every row records it) and the
    device model (device_identity: another card of the model may resume, another model not)."""
    pairs = sorted(
        json.dumps([p.problem.op, p.problem.axes(), p.provider], sort_keys=True) for p in points
    )
    return {
        "sweep": cfg.sweep.name,
        "points": len(points),
        "points_digest": hashlib.sha256("\n".join(pairs).encode()).hexdigest()[:16],
        "providers": sorted({p.provider for p in points}),
        "protocol": OmegaConf.to_container(cfg.protocol, resolve=True),
        "kernel_source_hash": kernel_source_hash(),
        **({"device": device_identity(device)} if device is not None else {}),
    }


def keyed_points(
    cfg: DictConfig, points: list[Point], device: DeviceInfo
) -> list[tuple[str, Point]]:
    """(point_key, point) for every point of the sweep, in sweep order."""
    return _keyed(points, protocol_of(cfg), device)


def _keyed(points: list[Point], protocol: Protocol, device: DeviceInfo) -> list[tuple[str, Point]]:
    proto_key, dev_id = protocol_key(protocol, device), device_identity(device)
    return [(point_key(p.problem, p.provider, proto_key, dev_id), p) for p in points]


def shard_of(keyed: list, index: int, count: int) -> list:
    """This shard's points: whole problems round-robin, so every provider of a problem runs on the
    same card (comparisons within a problem never cross GPUs) and neighbouring problems, which
    cost about the same, spread over the shards."""
    if not 0 <= index < count:
        raise ValueError(
            f"shard_index: {index} outside 0..{count - 1}; allowed: 0 <= shard_index < shard_count"
        )
    order: dict = {}
    for item in keyed:
        point = item[1] if isinstance(item, tuple) else item
        order.setdefault((point.problem.op, point.problem), len(order))

    def problem_slot(item) -> int:
        point = item[1] if isinstance(item, tuple) else item
        return order[(point.problem.op, point.problem)]

    return [item for item in keyed if problem_slot(item) % count == index]


@dataclass(frozen=True)
class RunPlan:
    """A run's config resolved once (run_plan): what the runner, the device workers' parent and
    the collective ranks' parent take instead of the config."""

    sweep: str
    points: tuple[Point, ...]  # the whole sweep, in sweep order
    keyed: dict[str, Point]  # point_key -> point, the whole sweep
    mine: dict[str, Point]  # this writer's shard of `keyed` (every point when unsharded)
    device: DeviceInfo  # where this process measures (devices=: the first worker's device)
    devices: tuple[str, ...]  # devices=: one worker per device ("cuda:1", "cpu"); () without
    protocol: Protocol
    run_id: str
    run_path: Path
    shard_index: int
    shard_count: int
    point_timeout_s: float | None
    progress: bool
    isolate: bool  # measure in a child process (harness.shard.supervise)
    done_statuses: tuple[str, ...] | None  # row statuses that count as finished; None: any
    record: dict  # what a resume must share with the run (resume_record; run.json's plan)
    allow_mixed: bool  # a resume whose record differs is allowed (and recorded as mixed)
    tune_only: bool  # prepare the pending own points (their tuners fill the disk cache); time none
    # stop_after_s=: no point (tuned or timed) starts after this epoch time; None: no limit
    stop_at: float | None
    compile_workers: int | None  # compile_workers=: harness.compile_ahead's processes; None: auto
    config_yaml: str  # the resolved config, written beside the rows as config.yaml

    @property
    def protocol_key(self) -> dict:
        return protocol_key(self.protocol, self.device)


def run_plan(cfg: DictConfig) -> RunPlan:
    """Resolve `cfg` once: devices= (a parent plans on its first worker's device), the sweep's
    points and keys, this writer's shard, the run id; raises ValueError naming the bad key."""
    devices = tuple(resolve_devices(cfg.devices)) if cfg.devices else ()
    points, info, protocol = _expand(cfg, devices[0] if devices else cfg.device)
    run_id = cfg.run_id or default_run_id(cfg.sweep.name, info)
    keyed = _keyed(points, protocol, info)
    return RunPlan(
        sweep=cfg.sweep.name,
        points=tuple(points),
        keyed=dict(keyed),
        mine=dict(shard_of(keyed, cfg.shard_index, cfg.shard_count)),
        device=info,
        devices=devices,
        protocol=protocol,
        run_id=run_id,
        run_path=run_dir(cfg.results_dir, run_id),
        shard_index=cfg.shard_index,
        shard_count=cfg.shard_count,
        point_timeout_s=cfg.point_timeout_s,
        progress=bool(cfg.progress),
        isolate=bool(cfg.isolate),
        done_statuses=None if cfg.rerun_failed is False else ("ok", "wrong", "skipped"),
        record=resume_record(cfg, points, info),
        allow_mixed=bool(cfg.allow_mixed),
        tune_only=bool(cfg.tune_only),
        stop_at=stop_time(cfg.stop_after_s),
        compile_workers=cfg.compile_workers,
        config_yaml=OmegaConf.to_yaml(cfg, resolve=True),
    )
