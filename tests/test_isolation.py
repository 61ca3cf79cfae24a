"""A point that kills the measuring process costs that point only (issue 17.1): `harness run`
measures in a child process, so the sweep completes with an error row naming the exit; with
isolate=false, the next run writes that point as an error row instead of dying on it again."""

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from harness import store
from harness.children import describe_exit
from harness.cli import main
from harness.inflight import PREVIOUS_RUN_DIED

TESTS = Path(__file__).parent
VICTIM = "gemm 33x40x48 fp32 nn"


@pytest.fixture
def faults(monkeypatch):
    """tests/fault_providers.py, registered here and in every child process."""
    monkeypatch.syspath_prepend(str(TESTS))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(TESTS), *sys.path]))
    monkeypatch.setenv("HARNESS_EXTRA_PROVIDERS", "fault_providers")


def _args(tmp_path, provider: str, run_id: str, *extra: str) -> list[str]:
    return [
        "run",
        "sweep=smoke",
        "device=cpu",
        "progress=false",
        f"sweep.groups.0.providers=[torch-cpu,{provider}]",
        f"providers=[torch-cpu,{provider}]",
        f"results_dir={tmp_path}",
        f"run_id={run_id}",
        *extra,
    ]


def _the_error(run_path):
    df = store.read_rows(run_path)
    assert len(df) == 16 and df.point_key.is_unique
    bad = df[df.status != "ok"]
    assert len(bad) == 1, bad[["problem", "provider", "status", "reason"]]
    return bad.iloc[0]


@pytest.mark.parametrize(
    ("provider", "why"),
    [
        ("segfaults", "process killed by SIGSEGV (signal 11) while measuring this point"),
        ("exits", "process exited with status 3 while measuring this point"),
    ],
)
def test_a_point_that_kills_the_process_is_an_error_row(tmp_path, faults, capsys, provider, why):
    args = _args(tmp_path, provider, "k")
    assert main(args) == 0
    out, err = capsys.readouterr()
    assert "16 points, 0 already done, 16 measured now (error=1, ok=15)" in out
    assert f"child process on cpu: {why.split(' while')[0]} during {provider} | {VICTIM}" in err
    bad = _the_error(tmp_path / "k")
    assert bad.provider == provider and bad.problem == VICTIM and bad.status == "error"
    assert bad.reason == f"{why} (child process on cpu)"
    assert bad.family == "own" and bad.device_type == "cpu" and bad.timer == "host"
    row = tmp_path / "k" / "rows" / f"{bad.point_key}.parquet"
    written = row.stat().st_mtime_ns
    # one history entry for the invocation, as the user typed it, counting every point (the
    # restarted child's and the crash's row, which the supervisor wrote, included)
    (entry,) = json.loads((tmp_path / "k" / "run.json").read_text())["history"]
    assert entry["measured_now"] == 16 and entry["statuses"] == {"error": 1, "ok": 15}
    assert entry["restarts"] == 1 and len(entry["crashes"]) == 1 and entry["done"]
    assert f"run_id={'k'}" in entry["overrides"] and "shard_index=0" not in entry["overrides"]

    assert main(args) == 0  # a resume does not measure it again
    assert "16 already done, 0 measured now" in capsys.readouterr().out
    assert row.stat().st_mtime_ns == written

    assert main([*args, "rerun_failed=true"]) == 0  # unless asked: it dies again, once
    assert "15 already done, 1 measured now (error=1)" in capsys.readouterr().out
    assert row.stat().st_mtime_ns > written
    assert _the_error(tmp_path / "k").reason == bad.reason


def test_without_isolation_the_next_run_writes_the_point_as_an_error(tmp_path, faults, capsys):
    args = _args(tmp_path, "segfaults", "f", "isolate=false")
    died = subprocess.run([sys.executable, "-m", "harness.cli", *args], capture_output=True)
    assert died.returncode == -signal.SIGSEGV
    marker = tmp_path / "f" / "_inflight" / "shard-0.json"
    assert marker.exists()
    assert main(args) == 0
    out, err = capsys.readouterr()
    assert f"the previous run died while measuring segfaults | {VICTIM}; it is an error row" in err
    bad = _the_error(tmp_path / "f")
    assert bad.problem == VICTIM and bad.reason == PREVIOUS_RUN_DIED
    assert not marker.exists()
    assert main(args) == 0
    assert "16 already done, 0 measured now" in capsys.readouterr().out


def test_a_child_that_cannot_start_gives_up_with_status_1(tmp_path, faults, monkeypatch, capsys):
    without = [p for p in sys.path if Path(p or ".").resolve() != TESTS.resolve()]
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(without))  # the child cannot import them
    with pytest.raises(SystemExit) as stop:
        main(_args(tmp_path, "exits", "g"))
    assert stop.value.code == 1
    err = capsys.readouterr().err
    assert "child process on cpu: process exited with status 1 without a point to blame" in err
    assert "No module named 'fault_providers'" in err  # the child's log tail says why
    assert "harness: error: child process on cpu gave up" in err


def test_exit_statuses_in_words():
    assert describe_exit(-11) == "killed by SIGSEGV (signal 11)"
    assert describe_exit(-9) == "killed by SIGKILL (signal 9)"
    assert describe_exit(139) == "exited with status 139 (128+11: SIGSEGV)"
    assert describe_exit(3) == "exited with status 3"
