"""scripts/provider_ncu_call.sh on a CPU (ncu_call_stub): each quoted profile becomes one ncu run
of provider_ncu_compare.py with its own op, problem and providers, profiling from the launcher's
range only, written to $OUT/ncu-TAG.csv, with the commit of .cache/gitid in its environment."""

import shutil

import pytest
from ncu_call_stub import launcher_args, run_call

pytestmark = pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")


def test_every_profile_is_one_ncu_run_with_its_own_arguments(tmp_path):
    proc, out = run_call(
        tmp_path,
        "provider_ncu_call.sh",
        [
            "c4k attention q_len=4096 kv_len=4096 causal=true own-triton flash-attn-4",
            "g gemm m=256 n=2304 k=4096 cublas own-triton",
        ],
    )
    assert proc.returncode == 0, proc.stderr
    assert "ncu c4k rc=0" in proc.stdout and "ncu g rc=0" in proc.stdout
    c4k = (out / "ncu-c4k.csv").read_text()
    g = (out / "ncu-g.csv").read_text()
    assert "sha=abc123" in c4k and "--profile-from-start off" in c4k
    assert launcher_args(c4k, "provider_ncu_compare.py") == (
        "attention q_len=4096 kv_len=4096 causal=true own-triton flash-attn-4"
    )
    assert (
        launcher_args(g, "provider_ncu_compare.py") == "gemm m=256 n=2304 k=4096 cublas own-triton"
    )
    assert (out / "gpu.txt").read_text().startswith("NVIDIA H200")
