"""prepare_matmul as on a GPU (tuning on), its kernels still run by the Triton interpreter: the
tune-cache tests use it in-process and in a fresh process.

    TRITON_INTERPRET=1 HARNESS_TUNE_CACHE=<dir> python tests/kernels/tune_fake_gpu.py [GPU name]

prints one JSON line: how many candidates were timed, tune_source, tune_key and the chosen tile.
The timer is fake (FAKE_MS), so the winner is known: the second candidate (split-K 2).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any

import torch
from harness_kernels import tune_cache
from harness_kernels.triton import gemm, gemm_tune
from harness_kernels.triton.gemm_configs import GemmConfig
from harness_kernels.triton.gemm_target import KernelTarget

CANDIDATES = [
    GemmConfig(16, 32, 16, num_warps=4, num_stages=2, group_m=2),
    GemmConfig(16, 32, 16, num_warps=4, num_stages=2, group_m=2, split_k=2),
    GemmConfig(32, 32, 16, num_warps=4, num_stages=2, group_m=2),
]
FAKE_MS = {(16, 1): 3.0, (16, 2): 1.0, (32, 1): 2.0}  # (block_m, split_k) -> "median ms"


def install(set_attr: Callable[[Any, str, Any], None], gpu: str = "Fake GPU") -> list[str]:
    """Make prepare_matmul see a Hopper named `gpu` with CANDIDATES and the fake timer; returns
    the list each timed candidate is appended to. `set_attr`: setattr, or monkeypatch.setattr."""
    timed: list[str] = []

    def bench_cold(launch, device) -> float:
        key = (launch.config["block_m"], launch.config["split_k"])
        timed.append(str(key))
        return FAKE_MS[key]

    target = KernelTarget("cuda", "sm_90", 90, gpu, 4, 1 << 20)
    set_attr(gemm, "kernel_target", lambda device: target)
    set_attr(gemm, "candidate_configs", lambda *args, **kwargs: list(CANDIDATES))
    set_attr(gemm_tune, "bench_cold", bench_cold)
    return timed


def operands(m: int = 16) -> tuple[torch.Tensor, torch.Tensor]:
    """a [M, 64] fp16, b [64, 32] column-major (w.t()), seeded."""
    gen = torch.Generator().manual_seed(0)
    a = torch.randn(m, 64, generator=gen).half()
    b = torch.randn(32, 64, generator=gen).half().t()
    return a, b


def summary(launch: gemm.MatmulLaunch, timed: list[str]) -> dict[str, Any]:
    c = launch.config
    return dict(
        timed=len(timed),
        tune_source=c["tune_source"],
        tune_key=c["tune_key"],
        block_m=c["block_m"],
        split_k=c["split_k"],
        tuned_ms=c.get("tuned_ms"),
        tuned_on=tune_cache.tuned_on(c["tune_key"]),  # the GPU that timed the decision
    )


if __name__ == "__main__":
    timed = install(setattr, *sys.argv[1:2])
    launch = gemm.prepare_matmul(*operands())
    print(json.dumps(summary(launch, timed)))
