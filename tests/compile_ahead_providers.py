"""A provider whose prepare runs own Triton's real attention tuner over candidates that leave a
mark when launched (tests only; loaded through HARNESS_EXTRA_PROVIDERS so that the compile-ahead
workers, spawned processes, register it too). It stands in for a tuner that compiles each
candidate on its first launch: the mark is the compile."""

import os
import time
from pathlib import Path
from unittest import mock

import torch
from harness_kernels.triton import attention_tune

from harness.providers.registry import Prepared, register

MARKS = "COMPILE_AHEAD_MARKS"  # the folder the candidates mark
CANDIDATES = [dict(i=i) for i in range(3)]


def _build(problem):
    def build(cand):
        def launch():
            Path(os.environ[MARKS], f"{problem.m}-{cand['i']}-{os.getpid()}").touch()

        return launch

    return build


@register("own-triton-marks", "gemm", "own", ("cpu",))
def marks(problem, inputs, device):
    """Tunes over CANDIDATES with the attention tuner (timed, and stored on disk), then runs
    torch matmul (marked "run-"). It leaves its process id first. A shape with m == 13 fails in prepare, one
    with m == 7 ends its process, one with m == 5 takes a minute."""
    Path(os.environ[MARKS], f"pid-{problem.m}-{os.getpid()}").touch()
    if problem.m == 13:
        raise RuntimeError("no candidate fits m 13")
    if problem.m == 7:
        os._exit(3)
    if problem.m == 5:
        time.sleep(60)
    key = ("marks", problem.m, problem.n, problem.k)
    stored = attention_tune.stored_key(key, CANDIDATES, "cpu-marks", attention_tune.PREFILL_SOURCES)
    # The tuner waits for each candidate's first launch with torch.cuda.synchronize(), which
    # raises on a CPU-only torch; these candidates launch nothing on a GPU to wait for.
    with mock.patch.object(torch.cuda, "synchronize", lambda *args, **kwargs: None):
        attention_tune.tune(key, CANDIDATES, _build(problem), True, None, stored)

    def run():
        Path(os.environ[MARKS], f"run-{problem.m}-{os.getpid()}").touch()
        return inputs["a"].float() @ inputs["b"].float()

    return Prepared(run)
