"""What a run will measure, resolved from its config once, before anything is measured (RunPlan:
the sweep's points and their keys, the device, the protocol, this writer's shard, the run's id
and folder); and what a run reports (RunResult).

The runner, the device workers (harness.shard) and the collective ranks (harness.collectives)
all take these from here, so none of them imports another to learn the plan (they used to: a
runner <-> shard <-> collectives import circle).
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field
from pathlib import Path

from omegaconf import DictConfig, OmegaConf

from harness.config import protocol_of
from harness.device import DeviceInfo, get_device
from harness.measure.lockstep import check_protocol
from harness.measure.protocol import Protocol
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
    if any(p.problem.op == "collective" for p in points):
        check_protocol(protocol, device.type)  # what lockstep timing cannot honour is refused
    limit = cfg.max_points or cfg.sweep.max_points
    if len(points) > limit:
        raise ValueError(
            f"max_points: sweep '{cfg.sweep.name}' has {len(points)} points, over its limit {limit}; "
            f"allowed: max_points>={len(points)} or fewer providers/axes"
        )
    return points, device


def protocol_key(protocol: Protocol, device: DeviceInfo) -> dict:
    """The protocol fields that enter every point key, with the timer `auto` resolves to."""
    return {**protocol.key_fields(), "timer": protocol.resolved_timer(device.type)}


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
    """A run's config resolved once: what the runner, the device workers and the collective
    ranks' parent take instead of resolving the config again at every floor."""

    sweep: str
    points: list[Point]  # the whole sweep, in sweep order
    keyed: dict[str, Point]  # point_key -> point, the whole sweep
    mine: dict[str, Point]  # this writer's shard of `keyed` (every point when unsharded)
    device: DeviceInfo
    protocol: Protocol
    run_id: str
    run_path: Path
    shard_index: int
    shard_count: int
    point_timeout_s: float | None
    progress: bool
    done_statuses: tuple[str, ...] | None  # row statuses that count as finished; None: any

    @property
    def protocol_key(self) -> dict:
        return protocol_key(self.protocol, self.device)


def run_plan(cfg: DictConfig, device: str | None = None) -> RunPlan:
    """Resolve `cfg` (on `device` instead of cfg.device when given: a devices= parent plans on
    its first worker's device); raises ValueError naming the bad key."""
    points, info = plan(OmegaConf.merge(cfg, {"device": device}) if device else cfg)
    protocol = protocol_of(cfg)
    run_id = cfg.run_id or default_run_id(cfg.sweep.name, info)
    keyed = _keyed(points, protocol, info)
    return RunPlan(
        sweep=cfg.sweep.name,
        points=points,
        keyed=dict(keyed),
        mine=dict(shard_of(keyed, cfg.shard_index, cfg.shard_count)),
        device=info,
        protocol=protocol,
        run_id=run_id,
        run_path=run_dir(cfg.results_dir, run_id),
        shard_index=cfg.shard_index,
        shard_count=cfg.shard_count,
        point_timeout_s=cfg.point_timeout_s,
        progress=bool(cfg.progress),
        done_statuses=None if cfg.rerun_failed is False else ("ok", "wrong", "skipped"),
    )
