"""One writer per run, or per cluster shard of a run: an advisory lock file in the run folder.

Two sweeps writing one run both measured every point at once (each timed under the other's load)
and mixed rows of two configs; the second one's temporary cleanup deleted the first one's
in-flight write. A sweep therefore holds flock(2) on <run>/.lock while it writes (a cluster shard
s of n: .lock-shard-s-of-n, so the shards of one run write side by side, while a whole-run writer
and any shard, or two shard splits whose problems overlap, exclude each other). The kernel drops
a flock when its holder exits in any way, so a leftover file whose lock nobody holds is stale and
is taken over; a lock held by a pid that is dead on this host (an inherited descriptor) is stale
too. The file names its holder (pid, host, since, command) for the second writer's one line.
A supervising parent holds the lock for its children (workers, the isolated measuring child).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import errno
import fcntl
import json
import math
import os
import re
import shlex
import socket
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from harness.children import pid_alive

_NAME = re.compile(r"\.lock(?:-shard-(\d+)-of-(\d+))?")


class RunLocked(ValueError):
    """Another live writer holds the run (or an overlapping shard of it); one line."""


def lock_name(shard_index: int, shard_count: int) -> str:
    return ".lock" if shard_count == 1 else f".lock-shard-{shard_index}-of-{shard_count}"


def _shard_of(name: str) -> tuple[int, int] | None:
    m = _NAME.fullmatch(name)
    if not m:
        return None
    return (int(m.group(1)), int(m.group(2))) if m.group(1) else (0, 1)


def shards_overlap(a: tuple[int, int], b: tuple[int, int]) -> bool:
    """Whether shard a = (i, n) and shard b = (j, m) share a problem: slot p is in (i, n) when
    p % n == i, and some p has p % n == i and p % m == j iff i == j modulo gcd(n, m)."""
    g = math.gcd(a[1], b[1])
    return a[0] % g == b[0] % g


def _holder(path: Path) -> dict:
    try:
        info = json.loads(path.read_text() or "{}")
    except (OSError, ValueError):
        return {}
    return info if isinstance(info, dict) else {}


def _dead_here(info: dict) -> bool:
    """The holder named in a lock file is a process of this host that no longer runs."""
    pid = info.get("pid")
    return info.get("host") == socket.gethostname() and isinstance(pid, int) and not pid_alive(pid)


def describe(run_path: Path, info: dict) -> str:
    who = (
        f"pid {info.get('pid', '?')} on {info.get('host', '?')} since {info.get('since', '?')}"
        if info
        else "another process (it has not written its name yet)"
    )
    command = f" ({info['command'][:160]})" if info.get("command") else ""
    return (
        f"run_id: {run_path.name} is being written by {who}{command}; allowed: wait for it to "
        "finish, or another run_id (one writer per run, or per shard_index of a cluster run)"
    )


def _command() -> str:
    """This process's command line as the user typed it: `harness run ...`, not the module."""
    argv = sys.argv
    if argv and Path(argv[0]).name in ("harness", "cli.py", "__main__.py"):
        argv = ["harness", *argv[1:]]
    return shlex.join(argv)


def _try_flock(fd: int, how: int) -> bool:
    try:
        fcntl.flock(fd, how | fcntl.LOCK_NB)
    except OSError as e:
        if e.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
            return False
        raise
    return True


def _held(path: Path) -> bool:
    """Whether a live writer holds the lock file `path` (probing takes it shared for a moment)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return False
    try:
        if _try_flock(fd, fcntl.LOCK_SH):
            fcntl.flock(fd, fcntl.LOCK_UN)
            return False
        return not _dead_here(_holder(path))
    finally:
        os.close(fd)


# How long a held lock may name a dead writer before it counts as held through a descriptor
# that writer's child inherited: a live writer that has just taken the file over still names
# its dead predecessor until it writes its own identity, microseconds later.
DEAD_HOLDER_GRACE_S = 1.0


def _held_by_the_dead(path: Path) -> bool:
    """Whether the held lock `path` still names a dead writer of this host after the grace
    period (re-read meanwhile: a new holder's identity ends the wait)."""
    deadline = time.monotonic() + DEAD_HOLDER_GRACE_S
    while _dead_here(_holder(path)):
        if time.monotonic() >= deadline:
            return True
        time.sleep(0.05)
    return False


def _acquire(path: Path) -> tuple[int, dict]:
    """flock `path` exclusively: (fd, the stale holder it names, {} if none); raises RunLocked."""
    for _ in range(5):
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        if not _try_flock(fd, fcntl.LOCK_EX):
            os.close(fd)
            if _held_by_the_dead(path):  # held through a descriptor a dead writer's child kept
                path.unlink(missing_ok=True)
                continue
            raise RunLocked(describe(path.parent, _holder(path)))
        try:  # the file we locked must still be the one at `path` (a takeover may unlink it)
            same = os.fstat(fd).st_ino == path.stat().st_ino
        except FileNotFoundError:
            same = False
        if same:
            return fd, _holder(path)
        os.close(fd)
    raise RunLocked(describe(path.parent, _holder(path)))


def check_not_held(run_path: Path, shard_index: int = 0, shard_count: int = 1) -> None:
    """Raise RunLocked naming the holder when a live writer holds this run's lock or an
    overlapping shard's: asked before anything else about a resume, so a second writer hears
    "being written by pid N" rather than how its config differs from the first's."""
    mine = (shard_index, shard_count)
    for other in sorted(run_path.glob(".lock*")) if run_path.is_dir() else []:
        shard = _shard_of(other.name)
        if shard and shards_overlap(mine, shard) and _held(other):
            raise RunLocked(describe(run_path, _holder(other)))


@contextlib.contextmanager
def run_lock(
    run_path: Path, shard_index: int = 0, shard_count: int = 1, out=None
) -> Iterator[None]:
    """Hold the run's lock (its shard's, for a cluster shard) within; raises RunLocked naming
    the holder when a live writer of this run or of an overlapping shard has it."""
    out = out or sys.stderr
    run_path.mkdir(parents=True, exist_ok=True)
    path = run_path / lock_name(shard_index, shard_count)
    fd, stale = _acquire(path)
    try:
        mine = (shard_index, shard_count)
        for other in sorted(run_path.glob(".lock*")):
            shard = _shard_of(other.name)
            if other != path and shard and shards_overlap(mine, shard) and _held(other):
                raise RunLocked(describe(run_path, _holder(other)))
        if stale:
            print(
                f"harness: note: took over a stale lock left by pid {stale.get('pid', '?')} on "
                f"{stale.get('host', '?')} (since {stale.get('since', '?')})",
                file=out,
            )
        me = {
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "since": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            "command": _command(),
            "shard": [shard_index, shard_count],
        }
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps(me).encode(), 0)
        yield
    finally:
        # Unlinked while still held: a writer waiting on the old file sees it replaced (inode
        # check) and makes a new one, so two writers never hold two files of one name.
        with contextlib.suppress(FileNotFoundError):
            if os.fstat(fd).st_ino == path.stat().st_ino:
                path.unlink()
        os.close(fd)
