"""scripts/gemm_ncu_call.sh on a CPU, through stand-in `ncu` and `nvidia-smi` on PATH and a stand-in
device_env.sh: each quoted profile becomes one ncu run of gemm_ncu_compare.py with its own shape
and configs, written to $OUT/ncu-TAG.csv, with the commit of .cache/gitid in its environment."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")


def test_every_profile_is_one_ncu_run_with_its_own_arguments(tmp_path):
    tree = tmp_path / "tree"
    (tree / "scripts").mkdir(parents=True)
    shutil.copy(REPO / "scripts" / "gemm_ncu_call.sh", tree / "scripts")
    (tree / "scripts" / "device_env.sh").write_text("true\n")
    (tree / ".cache").mkdir()
    (tree / ".cache" / "gitid").write_text("HARNESS_GIT_SHA=abc123 HARNESS_GIT_DIRTY=0\n")
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "nvidia-smi").write_text("#!/usr/bin/env bash\necho 'NVIDIA H200, GPU-x'\n")
    # ncu's stand-in prints what it was asked to profile, and the launch order gemm_ncu_compare
    # would print
    (fake / "ncu").write_text(
        '#!/usr/bin/env bash\necho "sha=$HARNESS_GIT_SHA $*"\necho "kernels in this order:"\n'
    )
    for name in ("nvidia-smi", "ncu"):
        (fake / name).chmod(0o755)
    out = tmp_path / "out"
    out.mkdir()
    env = {**os.environ, "PATH": f"{fake}:{os.environ['PATH']}", "OUT": str(out)}
    proc = subprocess.run(
        [
            "bash",
            "scripts/gemm_ncu_call.sh",
            "a 256 2304 16384 128x128x128s3k3w8 128x256x64s4k7w8",
            "b 256 2304 4096 128x256x64s4w8",
        ],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "ncu a rc=0" in proc.stdout and "ncu b rc=0" in proc.stdout
    a = (out / "ncu-a.csv").read_text()
    b = (out / "ncu-b.csv").read_text()
    assert "sha=abc123" in a
    assert a.split("gemm_ncu_compare.py ")[1].split("\n")[0] == (
        "256 2304 16384 128x128x128s3k3w8 128x256x64s4k7w8"
    )
    assert b.split("gemm_ncu_compare.py ")[1].split("\n")[0] == "256 2304 4096 128x256x64s4w8"
    assert (out / "gpu.txt").read_text().startswith("NVIDIA H200")
