"""Test setup: the Triton interpreter is on before any kernel module is imported (triton.jit
decides at decoration time), and GPU tests are skipped without a GPU."""

import os

os.environ.setdefault("TRITON_INTERPRET", "1")

import pytest  # noqa: E402
import torch  # noqa: E402


def pytest_collection_modifyitems(config, items):
    if torch.cuda.is_available() and os.environ.get("TRITON_INTERPRET") != "1":
        return
    why = "needs a GPU (and TRITON_INTERPRET unset)" if torch.cuda.is_available() else "needs a GPU"
    skip = pytest.mark.skip(reason=why)
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)
