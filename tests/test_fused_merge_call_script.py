"""scripts/fused_merge_call.sh on a CPU, through stand-in `python3` and `nvidia-smi` on PATH: the
fused merge is timed only after its GPU tests pass (a merge that is wrong must not be timed),
and the probe is given the GPU's committed batch-16 runs."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "scripts" / "fused_merge_call.sh"

pytestmark = pytest.mark.skipif(
    shutil.which("bash") is None or shutil.which("timeout") is None, reason="needs bash, timeout"
)


def _run(tmp_path: Path, tests_body: str) -> tuple[int, str, Path]:
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "nvidia-smi").write_text("#!/usr/bin/env bash\necho 'NVIDIA H200, GPU-fake'\n")
    calls = tmp_path / "calls.txt"
    (fake / "python3").write_text(
        "#!/usr/bin/env bash\n"
        f'echo "$*" >> {calls}\n'
        'case "$*" in *pytest*) ' + tests_body + " ;;\n"
        "*decode_merge_probe.py*) echo 'point | pinned config | speed-up' ;; esac\n"
    )
    for tool in ("nvidia-smi", "python3"):
        (fake / tool).chmod(0o755)
    out = tmp_path / "out"
    env = {
        **os.environ,
        "PATH": f"{fake}:{os.environ['PATH']}",
        "GPU": "h200",
        "OUT": str(out),
        "DEVICE_ENV": "0",
    }
    done = subprocess.run(
        ["bash", str(SCRIPT)], cwd=REPO, env=env, capture_output=True, text=True, timeout=60
    )
    return done.returncode, done.stdout, calls


def test_failing_tests_stop_the_call_before_the_probe(tmp_path):
    rc, out, calls = _run(tmp_path, "echo 'FAILED tests/gpu/x.py::test_merge - assert'; exit 1")
    assert rc == 1 and "FAILED tests/gpu/x.py::test_merge" in out
    assert "decode_merge_probe.py" not in calls.read_text()


def test_passing_tests_run_the_probe_on_the_gpus_runs(tmp_path):
    rc, out, calls = _run(tmp_path, "echo '5 passed'; exit 0")
    assert rc == 0 and "tests rc=0" in out and "probe rc=0" in out
    probe = [c for c in calls.read_text().splitlines() if "decode_merge_probe.py" in c]
    assert len(probe) == 1
    assert "results/h200/fmha_decode_serving-b16-ragged-s70" in probe[0]
    assert "--kv 4096" in probe[0]
    assert (tmp_path / "out" / "logs" / "probe.txt").is_file()
