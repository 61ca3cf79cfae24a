"""Test setup: the Triton interpreter is on before any kernel module is imported (triton.jit
decides at decoration time, so one process runs kernels either interpreted or compiled), and
GPU tests are skipped without a GPU.

`pytest` runs the CPU tests (kernels under the interpreter, on CPU tensors) on any machine;
`pytest -m gpu` on a GPU machine runs the GPU tests with compiled kernels instead."""

import os
import shutil
import signal
import tempfile

import pytest
import torch


def pytest_configure(config):
    gpu_only = config.getoption("markexpr", "") == "gpu"
    os.environ.setdefault(
        "TRITON_INTERPRET", "0" if gpu_only and torch.cuda.is_available() else "1"
    )
    # A fresh tune cache (kernels/tune_cache.py) per session, for every process it starts: GPU
    # tests that tune must time their candidates, not read a user's or an earlier session's picks.
    config._tune_cache = tempfile.mkdtemp(prefix="harness-tune-cache-")
    os.environ["HARNESS_TUNE_CACHE"] = config._tune_cache
    # A shell without job control starts `cmd &` with SIGINT ignored, and an ignored signal stays
    # ignored across exec: the sweeps that the Ctrl-C tests start would then never see their
    # SIGINT (session 52's CI, launched that way, failed test_ctrl_c_mid_sweep on it). Restore
    # what a terminal gives a user's command; exec turns this handler into the default.
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def pytest_unconfigure(config):
    if getattr(config, "_tune_cache", None):
        shutil.rmtree(config._tune_cache, ignore_errors=True)


def pytest_xdist_auto_num_workers(config):
    """`-n auto` (pyproject's addopts): one worker per core, but one for `pytest -m gpu`, whose
    tests share one GPU and run one at a time, as without xdist."""
    markexpr = config.getoption("markexpr", "")
    return 1 if "gpu" in markexpr and "not gpu" not in markexpr else None


def pytest_collection_modifyitems(config, items):
    if torch.cuda.is_available() and os.environ.get("TRITON_INTERPRET") != "1":
        return
    why = (
        "needs compiled Triton on a GPU: run `pytest -m gpu`"
        if torch.cuda.is_available()
        else "needs a GPU"
    )
    skip = pytest.mark.skip(reason=why)
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)
