"""scripts/gemm_ncu_call.sh on a CPU (ncu_call_stub): each quoted profile becomes one ncu run of
gemm_ncu_compare.py with its own shape and configs, written to $OUT/ncu-TAG.csv, with the commit
of .cache/gitid in its environment."""

import shutil

import pytest
from ncu_call_stub import launcher_args, run_call

pytestmark = pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")


def test_every_profile_is_one_ncu_run_with_its_own_arguments(tmp_path):
    proc, out = run_call(
        tmp_path,
        "gemm_ncu_call.sh",
        [
            "a 256 2304 16384 128x128x128s3k3w8 128x256x64s4k7w8",
            "b 256 2304 4096 128x256x64s4w8",
        ],
    )
    assert proc.returncode == 0, proc.stderr
    assert "ncu a rc=0" in proc.stdout and "ncu b rc=0" in proc.stdout
    a = (out / "ncu-a.csv").read_text()
    b = (out / "ncu-b.csv").read_text()
    assert "sha=abc123" in a and "--section SpeedOfLight" in a
    assert launcher_args(a, "gemm_ncu_compare.py") == (
        "256 2304 16384 128x128x128s3k3w8 128x256x64s4k7w8"
    )
    assert launcher_args(b, "gemm_ncu_compare.py") == "256 2304 4096 128x256x64s4w8"
    assert (out / "gpu.txt").read_text().startswith("NVIDIA H200")
