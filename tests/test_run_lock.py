"""One writer per run (issue 17.4): a second `harness run` into a live run exits 2 naming the
holder; a stale lock is taken over; cluster shards of one run lock per shard."""

import fcntl
import json
import os
import socket
import subprocess
import sys
import time

import pytest

from harness import store
from harness.cli import main
from harness.lock import RunLocked, run_lock, shards_overlap

FAST = ["sweep=smoke", "device=cpu", "providers=[torch-cpu,sdpa-math,sdpa-paged-gather]"]
SLOW = ["protocol.rse_target=1e-9", "protocol.max_time_s=0.3", "protocol.max_samples=100000"]
QUICK = ["run", "sweep=smoke", "device=cpu", "providers=[torch-cpu]", "progress=false"]


def _dead_pid() -> int:
    p = subprocess.Popen(["true"])
    p.wait()
    return p.pid


def test_second_writer_exits_2_naming_the_holder(tmp_path, capsys):
    cmd = [
        sys.executable,
        "-m",
        "harness.cli",
        "run",
        *FAST,
        *SLOW,
        "progress=false",
        f"results_dir={tmp_path}",
        "run_id=L",
    ]
    first = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    rows = tmp_path / "L" / "rows"
    deadline = time.time() + 120
    while time.time() < deadline and not list(rows.glob("*.parquet")):
        time.sleep(0.05)
    second = ["run", *FAST, "protocol.max_time_s=0.2", f"results_dir={tmp_path}", "run_id=L"]
    assert main(second) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith(
        f"harness: error: run_id: L is being written by pid {first.pid} on "
        f"{socket.gethostname()} since "
    )
    assert (
        "(harness run sweep=smoke device=cpu" in err and "; allowed: wait for it to finish" in err
    )
    assert first.wait(timeout=300) == 0
    df = store.read_rows(tmp_path / "L")
    assert len(df) == 13 and df.point_key.is_unique and set(df.status) == {"ok"}
    assert (df.max_time_s == 0.3).all()  # every row is the first writer's: none mixed in
    assert "rse_target: 1.0e-09" in (tmp_path / "L" / "config.yaml").read_text()
    assert not (tmp_path / "L" / ".lock").exists()  # released on exit


def test_stale_lock_file_is_taken_over(tmp_path, capsys):
    run = tmp_path / "s"
    run.mkdir()
    dead = _dead_pid()
    old = {"pid": dead, "host": socket.gethostname(), "since": "2026-01-01T00:00:00+00:00"}
    (run / ".lock").write_text(json.dumps(old))  # left by a killed writer: nobody holds it
    assert main([*QUICK, "isolate=false", f"results_dir={tmp_path}", "run_id=s"]) == 0
    assert f"took over a stale lock left by pid {dead} on {socket.gethostname()}" in (
        capsys.readouterr().err
    )
    assert len(store.read_rows(run)) == 8 and not (run / ".lock").exists()


def test_a_lock_held_for_a_dead_pid_is_stale(tmp_path):
    """Held, but the pid it names is gone (a descriptor its child inherited): taken over."""
    run = tmp_path / "d"
    run.mkdir()
    fd = os.open(run / ".lock", os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        os.write(fd, json.dumps({"pid": _dead_pid(), "host": socket.gethostname()}).encode())
        assert main([*QUICK, "isolate=false", f"results_dir={tmp_path}", "run_id=d"]) == 0
    finally:
        os.close(fd)
    assert len(store.read_rows(run)) == 8


def test_a_live_holder_is_named(tmp_path):
    with run_lock(tmp_path / "r"):
        with pytest.raises(RunLocked, match=f"run_id: r is being written by pid {os.getpid()} on "):
            with run_lock(tmp_path / "r"):
                pass
    with run_lock(tmp_path / "r"):  # released: free again
        pass


def test_cluster_shards_lock_per_shard(tmp_path):
    run = tmp_path / "c"
    with run_lock(run, 0, 2):
        assert (run / ".lock-shard-0-of-2").exists()
        for shard in [(1, 2), (1, 4), (3, 4)]:  # no problem in common with shard 0 of 2
            with run_lock(run, *shard):
                pass
        for shard in [(0, 1), (0, 2), (2, 4), (0, 3)]:  # the whole run, or overlapping shards
            with pytest.raises(RunLocked, match="is being written by pid"):
                with run_lock(run, *shard):
                    pass
    assert not list(run.glob(".lock*"))


def test_shards_overlap_when_some_problem_is_in_both():
    for a in [(0, 2), (1, 3), (2, 6), (0, 1)]:
        for b in [(0, 2), (1, 3), (2, 6), (5, 6), (0, 4), (3, 4)]:
            both = any(p % a[1] == a[0] and p % b[1] == b[0] for p in range(48))
            assert shards_overlap(a, b) == both, (a, b)


def test_a_shard_writer_runs_beside_another_shard_but_not_the_same(tmp_path, capsys):
    args = [*QUICK, "isolate=false", f"results_dir={tmp_path}", "run_id=p", "shard_count=2"]
    with run_lock(tmp_path / "p", 0, 2):
        assert main([*args, "shard_index=1"]) == 0
        assert main([*args, "shard_index=0"]) == 2
    assert f"run_id: p is being written by pid {os.getpid()}" in capsys.readouterr().err
    assert len(store.read_rows(tmp_path / "p")) == 4  # shard 1's problems only


def _hold_for_a_moment(run, barrier, windows):
    """Enter the run's lock as the other process does, at the same instant; record the window."""
    barrier.wait()
    try:
        with run_lock(run):
            start = time.monotonic()
            time.sleep(0.3)
            windows.append((start, time.monotonic()))
    except RunLocked:
        windows.append(None)


def test_two_writers_racing_for_a_stale_lock_never_both_hold_it(tmp_path):
    """A lock file naming a dead writer (a SIGKILLed run's): the first to take it still names
    the dead pid for a moment, and the second must not read that as a takeover's licence (it
    did: 93 of 100 trials let both in). One wins, the other is refused."""
    import multiprocessing as mp

    ctx = mp.get_context("fork")
    for trial in range(6):
        run = tmp_path / f"r{trial}"
        run.mkdir()
        dead = {"pid": _dead_pid(), "host": socket.gethostname()}
        (run / ".lock").write_text(json.dumps(dead))
        barrier, windows = ctx.Barrier(2), ctx.Manager().list()
        procs = [ctx.Process(target=_hold_for_a_moment, args=(run, barrier, windows)) for _ in "ab"]
        for p in procs:
            p.start()
        for p in procs:
            p.join(30)
        held = [w for w in windows if w is not None]
        assert len(held) >= 1, list(windows)
        if len(held) == 2:  # both got in: only ever one after the other, never together
            (a0, a1), (b0, b1) = sorted(held)
            assert a1 <= b0, held
