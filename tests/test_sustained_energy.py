"""scripts/sustained_energy.py on the CPU: how its --extra candidates are read and joined to the
tuner's own list (the timing itself needs a GPU and NVML). Options read back from their printed
form: RunOptions.parse, tests/cutlass/test_run_options.py."""

from __future__ import annotations

from harness_kernels.cutlass.gemm import CONFIGS, RunOptions
from harness_kernels.cutlass.gemm_tune import sm90_candidates
from script_module import load_script

probe = load_script("sustained_energy")


def test_extra_candidates_follow_the_tuners_own():
    extra = ["sm90-coop-128x256:heuristic/sw8", "sm90-streamk-128x256:data-parallel/sw4"]
    got = probe.cutlass_candidates(16384, 10240, 8192, extra)
    own = sm90_candidates(16384, 10240, 8192, "bf16")
    assert got[: len(own)] == own
    assert got[len(own) :] == [
        (CONFIGS["sm90-coop-128x256"], RunOptions(swizzle=8)),
        (CONFIGS["sm90-streamk-128x256"], RunOptions("data-parallel", 1, 4)),
    ]
