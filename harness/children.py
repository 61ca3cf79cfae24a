"""Processes a sweep starts: they die with their parent, they stop on request, their exits are
named.

A child measures in its own session (process group), so the terminal's Ctrl-C reaches only the
parent, which decides: it stops each child's whole group (the child and anything it started,
e.g. collective ranks) and waits for it. When the parent dies without that chance (SIGKILL, the
OOM killer), the kernel kills each child through PR_SET_PDEATHSIG. Without both, a killed
`devices=` parent left its workers measuring on, on GPUs the next sweep then shared.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import subprocess
import time
from collections.abc import Iterator

# Set by a supervising parent in its children's environment: its own pid. A process whose parent
# is that pid measures for it (the parent holds the run's lock and did the start-up work); the
# pid check keeps an inherited variable from making an unrelated `harness run` think so.
SUPERVISOR_ENV = "HARNESS_SUPERVISOR_PID"
# Also set by the parent: the time (epoch seconds) its children started. A row file written since
# counts as done for them even with rerun_failed=true, so a restarted child does not measure
# again the point its predecessor died on (the parent's error row for it is that recent).
SINCE_ENV = "HARNESS_SUPERVISOR_SINCE"
# The run record (run.json, run-shard-<i>.json) whose history entry for this invocation the
# supervisor keeps: a child writing the same record adds no entry of its own (a restarted child
# would add a second, and the rows the supervisor writes for a crash would be in neither).
RECORD_ENV = "HARNESS_SUPERVISOR_RECORD"
STOP_GRACE_S = 5.0  # a child asked to stop gets this long before SIGKILL
_PR_SET_PDEATHSIG = 1  # linux/prctl.h
# NVLink multicast stays off in everything the harness starts (it can take a shared host's GPUs
# out of service): device workers, collective ranks and cluster jobs inherit these.
SAFE_ENV = {
    "NCCL_NVLS_ENABLE": "0",
    "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1",
    "NVSHMEM_DISABLE_NVLS": "1",
}


def supervised() -> bool:
    """True in a child started by a supervising parent that is still its parent."""
    return os.environ.get(SUPERVISOR_ENV) == str(os.getppid())


def parents_record() -> str | None:
    """The record whose history entry the supervising parent keeps (None when unsupervised)."""
    return os.environ.get(RECORD_ENV) if supervised() else None


@contextlib.contextmanager
def record_kept_here(meta_name: str):
    """Within: children started from here leave `meta_name`'s history entry to this process."""
    before = os.environ.get(RECORD_ENV)
    os.environ[RECORD_ENV] = meta_name
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(RECORD_ENV, None)
        else:
            os.environ[RECORD_ENV] = before


def child_env(extra: dict[str, str], since: float) -> dict[str, str]:
    """The environment of a child of this process: ours, `extra`, and the supervisor marks."""
    return {**os.environ, **extra, SUPERVISOR_ENV: str(os.getpid()), SINCE_ENV: f"{since:.6f}"}


def start(cmd: list[str], env: dict[str, str], log_path) -> subprocess.Popen:
    """Start `cmd` in its own session (its pid is its process group), output appended to log."""
    with open(log_path, "a") as log:
        return subprocess.Popen(
            cmd, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True
        )


def die_with_parent() -> None:
    """Ask the kernel to SIGKILL this process when its parent exits (Linux; elsewhere nothing).
    SIGKILL, not SIGTERM: a child blocked in a long kernel call or a GPU wait would not run a
    Python handler until it returns, and with the parent gone nothing else would stop it."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):  # not Linux: the parent's stop() remains
        pass


def arm() -> None:
    """First thing in a `harness` process: if a supervising parent started it, die with that
    parent; if the parent died before the death signal was armed, exit now (an orphan must not
    go on and measure as the run's owner). Nothing for any other process."""
    parent = os.environ.get(SUPERVISOR_ENV, "")
    if not parent.isdigit():
        return
    if parent == str(os.getppid()):
        die_with_parent()
        if parent == str(os.getppid()):
            return
    if not pid_alive(int(parent)):  # our supervisor is gone: we are an orphan
        os._exit(1)


def stop(procs: list[subprocess.Popen], grace_s: float = STOP_GRACE_S) -> None:
    """SIGTERM each child's process group, wait up to grace_s for all, then SIGKILL the groups
    still alive; every child is reaped (no zombie is left to look alive)."""
    live = [p for p in procs if p.poll() is None]
    for p in live:
        _signal_group(p.pid, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    for p in live:
        try:
            p.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            pass
    for p in procs:
        _signal_group(p.pid, signal.SIGKILL)  # also the group's other members, if any remain
        p.wait()


def _signal_group(pgid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


@contextlib.contextmanager
def signals_as_exit() -> Iterator[None]:
    """Within: SIGTERM and SIGHUP raise SystemExit(128 + signal), so `finally` blocks run (stop
    the children, clear the in-flight marker) instead of the process vanishing mid-point. Only
    in the main thread (signal handlers can be set nowhere else)."""
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def on_signal(signum, frame):
        raise SystemExit(128 + signum)

    previous = {s: signal.signal(s, on_signal) for s in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)


def describe_exit(rc: int) -> str:
    """A child's exit status in words: -11 -> 'killed by SIGSEGV (signal 11)'; 139 (a shell's
    128+n for a signal) -> 'exited with status 139 (128+11: SIGSEGV)'; 3 -> 'exited with
    status 3'."""
    if rc < 0:
        return f"killed by {_signal_name(-rc)} (signal {-rc})"
    if 128 < rc < 128 + 65:
        return f"exited with status {rc} (128+{rc - 128}: {_signal_name(rc - 128)})"
    return f"exited with status {rc}"


def _signal_name(n: int) -> str:
    try:
        return signal.Signals(n).name
    except ValueError:
        return f"signal {n}"


def pid_alive(pid: int) -> bool:
    """Whether `pid` is a running process on this host (a zombie is not)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: alive
        return True
    try:  # a zombie answers kill(0) until reaped; /proc tells (Linux)
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return True
