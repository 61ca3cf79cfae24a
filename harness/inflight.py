"""The in-flight marker: the point a measuring process is in, so dying there costs that point only.

Before each point the measuring process writes <run>/_inflight/shard-<i>.json (point key, label,
pid, host) and removes it after its last point or on any exit Python sees (an exception, Ctrl-C,
SIGTERM). A marker left behind therefore means the process died inside that point (a segfault in
a ctypes-loaded kernel, os._exit, the OOM killer, SIGKILL). Its supervising parent turns the
point into an error row naming the exit and starts a new child, which goes on after it; a run
that finds such a marker at start (holding the run's lock, so its writer is gone) does the same.
Without this the point that killed the process was measured first on every resume, forever.
"""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path

from harness import store
from harness.children import pid_alive
from harness.device import DeviceInfo
from harness.measure.point import unmeasured_row
from harness.measure.protocol import Protocol
from harness.providers import Registry
from harness.sweep import Point

INFLIGHT = "_inflight"
PREVIOUS_RUN_DIED = (
    "the previous run died while measuring this point (a crash in the point, or the process was "
    "killed); rerun_failed=true measures it again"
)


def marker_path(run_path: Path, shard_index: int) -> Path:
    return run_path / INFLIGHT / f"shard-{shard_index}.json"


def write_marker(run_path: Path, shard_index: int, key: str, label: str) -> Path:
    marker = marker_path(run_path, shard_index)
    info = {"point_key": key, "label": label, "pid": os.getpid(), "host": socket.gethostname()}
    store.write_text(marker, json.dumps(info))
    return marker


def leftover_markers(run_path: Path) -> list[Path]:
    folder = run_path / INFLIGHT
    return sorted(folder.glob("shard-*.json")) if folder.is_dir() else []


def _read(marker: Path) -> dict | None:
    try:
        info = json.loads(marker.read_text())
    except (OSError, ValueError):  # gone meanwhile, or not ours
        return None
    return info if isinstance(info, dict) and isinstance(info.get("point_key"), str) else None


def _finished_after(run_path: Path, key: str, marker: Path) -> bool:
    """A row written after the marker: the process finished the point (and died after it). An
    older row (rerun_failed=true was measuring it again) does not count."""
    row = run_path / "rows" / f"{key}.parquet"
    try:
        return row.stat().st_mtime_ns >= marker.stat().st_mtime_ns
    except FileNotFoundError:
        return False


def held_by_live_process(marker: Path) -> int | None:
    """The pid of a live process on this host that wrote `marker`, else None."""
    info = _read(marker) or {}
    pid, host = info.get("pid"), info.get("host")
    if isinstance(pid, int) and host == socket.gethostname() and pid != os.getpid():
        return pid if pid_alive(pid) else None
    return None


def settle(
    marker: Path,
    run_id: str,
    points: dict[str, Point],
    device: DeviceInfo,
    protocol: Protocol,
    registry: Registry,
    reason: str,
) -> str | None:
    """If `marker` names one of `points` that has no row written since, write its error row with
    `reason`; remove the marker. Returns the point's label when a row was written. A marker of
    a point outside `points` (another shard's) is left alone."""
    run_path = marker.parent.parent
    info = _read(marker)
    if info is None:
        marker.unlink(missing_ok=True)
        return None
    point = points.get(info["point_key"])
    if point is None:
        return None
    if not _finished_after(run_path, info["point_key"], marker):
        provider = registry.get(point.problem.op, point.provider)
        row = unmeasured_row(point.problem, provider, device, protocol, "error", reason)
        row.update(run_id=run_id, point_key=info["point_key"])
        store.write_row(run_path, {k: v for k, v in row.items() if k in store.COLUMNS})
    else:
        point = None
    marker.unlink(missing_ok=True)
    return point.label() if point else None
