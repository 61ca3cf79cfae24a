"""Children die with their parent (issue 17.5): a `devices=` parent (or a plain run's parent)
killed by SIGKILL, or stopped by SIGTERM or SIGINT, leaves no worker measuring on."""

import os
import signal
import subprocess
import sys
import time

import pytest

from harness import store
from harness.children import pid_alive
from harness.cli import main
from harness.inflight import PREVIOUS_RUN_DIED

FAST = ["sweep=smoke", "device=cpu", "providers=[torch-cpu,sdpa-math,sdpa-paged-gather]"]
# Each point samples for ~0.3 s, so the signal lands mid-sweep.
SLOW = ["protocol.rse_target=1e-9", "protocol.max_time_s=0.3", "protocol.max_samples=100000"]


def _children_of(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            if ppid == pid:
                found.append(int(entry))
    return found


@pytest.mark.parametrize(
    ("devices", "sig"),
    [
        (["devices=[cpu,cpu]"], signal.SIGKILL),
        (["devices=[cpu,cpu]"], signal.SIGTERM),
        (["devices=[cpu,cpu]"], signal.SIGINT),
        ([], signal.SIGKILL),  # a plain run's one measuring child
    ],
)
def test_children_die_with_their_parent(tmp_path, devices, sig):
    cmd = [
        sys.executable,
        "-m",
        "harness.cli",
        "run",
        *FAST,
        *SLOW,
        *devices,
        "progress=false",
        f"results_dir={tmp_path}",
        "run_id=o",
    ]
    parent = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    rows = tmp_path / "o" / "rows"
    deadline = time.time() + 120
    while time.time() < deadline and len(list(rows.glob("*.parquet"))) < 2:
        time.sleep(0.05)
    workers = _children_of(parent.pid)
    assert len(workers) == max(1, 2 * len(devices)) and parent.poll() is None
    parent.send_signal(sig)
    rc = parent.wait(timeout=60)
    deadline = time.time() + 5
    while time.time() < deadline and any(pid_alive(w) for w in workers):
        time.sleep(0.05)
    assert not [w for w in workers if pid_alive(w)], "a worker outlived its parent"
    assert len(list(rows.glob("*.parquet"))) < 13, "the signal should land mid-sweep"
    markers = list((tmp_path / "o" / "_inflight").glob("*.json"))
    stopped = {signal.SIGKILL: (-9,), signal.SIGTERM: (143,), signal.SIGINT: (-2, 130)}
    assert rc in stopped[sig]
    if sig != signal.SIGKILL:  # stopped, not crashed: no point is blamed
        assert not markers
    resume = ["run", *FAST, *SLOW, "isolate=false", f"results_dir={tmp_path}", "run_id=o"]
    assert main(resume) == 0  # the same plan (a different protocol is refused)
    df = store.read_rows(tmp_path / "o")
    assert len(df) == 13 and df.point_key.is_unique
    errors = df[df.status != "ok"]
    assert set(errors.reason) <= {PREVIOUS_RUN_DIED} and len(errors) <= len(markers)
