"""Resume: a rerun measures nothing new; a SIGKILL loses no finished point and no file is torn."""

import os
import signal
import subprocess
import sys
import time

import pyarrow.parquet as pq

from harness import store
from harness.cli import main

FAST = [
    "sweep=smoke",
    "device=cpu",
    "providers=[torch-cpu,sdpa-math,sdpa-paged-gather]",
    "progress=false",
]
# Each point samples for ~0.3 s, so a kill lands mid-sweep.
SLOW = ["protocol.rse_target=1e-9", "protocol.max_time_s=0.3", "protocol.max_samples=100000"]


def test_second_run_measures_nothing(tmp_path, capsys):
    args = ["run", *FAST, f"results_dir={tmp_path}", "run_id=r"]
    assert main(args) == 0
    first = store.read_rows(tmp_path / "r")
    assert len(first) == 13 and set(first.status) == {"ok"}
    assert (first.device_type == "cpu").all()
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "13 already done, 0 measured now" in out
    assert (tmp_path / "r" / "config.yaml").exists() and (tmp_path / "r" / "run.json").exists()


def test_sigkill_mid_sweep_then_resume(tmp_path):
    cmd = [
        sys.executable,
        "-m",
        "harness.cli",
        "run",
        *FAST,
        *SLOW,
        f"results_dir={tmp_path}",
        "run_id=k",
    ]
    proc = subprocess.Popen(
        cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    rows = tmp_path / "k" / "rows"
    deadline = time.time() + 120
    while time.time() < deadline and len(list(rows.glob("*.parquet"))) < 3:
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    done = {p.name: p.stat().st_mtime_ns for p in rows.glob("*.parquet")}
    assert 3 <= len(done) < 13, "the kill should land mid-sweep"
    for p in rows.iterdir():  # every visible file is whole; temporaries are dot-files
        if not p.name.startswith("."):
            assert pq.read_table(p).num_rows == 1
    # the same protocol: a resume with another one is refused (test_resume_plan.py)
    assert main(["run", *FAST, *SLOW, f"results_dir={tmp_path}", "run_id=k"]) == 0
    df = store.read_rows(tmp_path / "k")
    assert len(df) == 13 and df.point_key.is_unique
    for name, mtime in done.items():  # finished points were not measured again
        assert (rows / name).stat().st_mtime_ns == mtime
    assert not list(rows.glob(".*.tmp"))


def test_rerun_failed_remeasures_only_errors(tmp_path):
    args = ["run", *FAST, f"results_dir={tmp_path}", "run_id=e", "providers=[torch-cpu]"]
    assert main(args) == 0
    first = store.read_rows(tmp_path / "e").iloc[0]
    injected = {k: first[k] for k in ("run_id", "point_key", "op", "provider", "family")}
    store.write_row(tmp_path / "e", {**injected, "status": "error", "reason": "injected"})
    assert main(args) == 0  # without the flag an error row counts as done
    assert (
        store.read_rows(tmp_path / "e").set_index("point_key").loc[first.point_key, "status"]
        == "error"
    )
    assert main([*args, "rerun_failed=true"]) == 0
    again = store.read_rows(tmp_path / "e").set_index("point_key")
    assert again.loc[first.point_key, "status"] == "ok" and len(again) == 8


def _torn_run(tmp_path, run_id: str) -> tuple[list[str], str, bytes]:
    """A finished 8-point run whose first row file lost its second half (its footer)."""
    args = ["run", *FAST, f"results_dir={tmp_path}", f"run_id={run_id}", "providers=[torch-cpu]"]
    assert main(args) == 0
    path = sorted((tmp_path / run_id / "rows").glob("*.parquet"))[0]
    torn = path.read_bytes()[: path.stat().st_size // 2]
    path.write_bytes(torn)
    return args, path.stem, torn


def test_torn_row_is_set_aside_and_measured_again(tmp_path, capsys):
    args, key, torn = _torn_run(tmp_path, "t")
    capsys.readouterr()
    assert len(store.read_rows(tmp_path / "t")) == 7  # readers skip it, with a warning
    assert f"skipped unreadable row file {tmp_path / 't' / 'rows' / key}.parquet" in (
        capsys.readouterr().err
    )
    for command in (["compare", str(tmp_path / "t"), "--aa"], ["gaps", str(tmp_path / "t")]):
        assert main(command) == 0, command
    capsys.readouterr()
    assert main(args) == 0
    out, err = capsys.readouterr()
    aside = tmp_path / "t" / "rows" / store.UNREADABLE / f"{key}.parquet"
    assert f"harness: warning: point {key}: row file unreadable (" in err
    assert f"moved to {aside}, measuring torch-cpu | gemm " in err
    assert "7 already done, 1 measured now (ok=1)" in out
    assert aside.read_bytes() == torn  # kept, never deleted
    df = store.read_rows(tmp_path / "t")
    assert len(df) == 8 and set(df.status) == {"ok"} and key in set(df.point_key)
    assert "unreadable" not in capsys.readouterr().err


def test_rerun_failed_with_a_torn_row(tmp_path, capsys):
    args, key, _ = _torn_run(tmp_path, "f")
    assert main([*args, "rerun_failed=true"]) == 0
    assert f"point {key}: row file unreadable" in capsys.readouterr().err
    df = store.read_rows(tmp_path / "f")
    assert len(df) == 8 and set(df.status) == {"ok"}
