"""scripts/provider_ncu_call.sh on a CPU, through stand-in `ncu` and `nvidia-smi` on PATH and a
stand-in device_env.sh: each quoted profile becomes one ncu run of provider_ncu_compare.py with
its own op, problem and providers, profiling from the script's range only, written to
$OUT/ncu-TAG.csv, with the commit of .cache/gitid in its environment."""

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
    shutil.copy(REPO / "scripts" / "provider_ncu_call.sh", tree / "scripts")
    (tree / "scripts" / "device_env.sh").write_text("true\n")
    (tree / ".cache").mkdir()
    (tree / ".cache" / "gitid").write_text("HARNESS_GIT_SHA=abc123 HARNESS_GIT_DIRTY=0\n")
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "nvidia-smi").write_text("#!/usr/bin/env bash\necho 'NVIDIA H100 80GB HBM3, GPU-x'\n")
    (fake / "ncu").write_text(
        '#!/usr/bin/env bash\necho "sha=$HARNESS_GIT_SHA $*"\necho "launched twice, in this order:"\n'
    )
    for name in ("nvidia-smi", "ncu"):
        (fake / name).chmod(0o755)
    out = tmp_path / "out"
    out.mkdir()
    env = {**os.environ, "PATH": f"{fake}:{os.environ['PATH']}", "OUT": str(out)}
    proc = subprocess.run(
        [
            "bash",
            "scripts/provider_ncu_call.sh",
            "c4k attention q_len=4096 kv_len=4096 causal=true own-triton flash-attn-4",
            "g gemm m=256 n=2304 k=4096 cublas own-triton",
        ],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "ncu c4k rc=0" in proc.stdout and "ncu g rc=0" in proc.stdout
    c4k = (out / "ncu-c4k.csv").read_text()
    g = (out / "ncu-g.csv").read_text()
    assert "sha=abc123" in c4k and "--profile-from-start off" in c4k
    assert c4k.split("provider_ncu_compare.py ")[1].split("\n")[0] == (
        "attention q_len=4096 kv_len=4096 causal=true own-triton flash-attn-4"
    )
    assert g.split("provider_ncu_compare.py ")[1].split("\n")[0] == (
        "gemm m=256 n=2304 k=4096 cublas own-triton"
    )
    assert (out / "gpu.txt").read_text().startswith("NVIDIA H100")
