"""Where a number came from: code version, library versions, host and time."""

from __future__ import annotations

import datetime as dt
import hashlib
import os
import platform
import socket
import subprocess
from functools import lru_cache
from pathlib import Path

import torch

REPO_ROOT = Path(__file__).resolve().parents[1]


def _kernels_dir() -> Path:
    """Where the `harness_kernels` that runs was imported from: an editable install maps it to
    the checkout it was installed from, which need not be this `harness`'s (a second clone on
    PYTHONPATH), and the hash must describe the kernels that ran."""
    import importlib.util

    spec = importlib.util.find_spec("harness_kernels")
    if spec is not None and spec.submodule_search_locations:
        return Path(next(iter(spec.submodule_search_locations))).resolve()
    return REPO_ROOT / "kernels"


KERNELS_DIR = _kernels_dir()


def _git(*args: str) -> str | None:
    try:
        out = subprocess.run(
            ["git", *args], cwd=REPO_ROOT, capture_output=True, text=True, timeout=10, check=True
        )
        return out.stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None


@lru_cache(maxsize=1)
def git_state() -> tuple[str | None, bool | None]:
    """(commit sha, whether tracked files differ from it); (None, None) outside a git checkout."""
    # A copy of the tree without .git (a lent GPU machine) gets the identity from its launcher.
    if os.environ.get("HARNESS_GIT_SHA"):
        return os.environ["HARNESS_GIT_SHA"], os.environ.get("HARNESS_GIT_DIRTY", "1") == "1"
    sha = _git("rev-parse", "HEAD")
    if sha is None:
        return None, None
    status = _git("status", "--porcelain", "--untracked-files=no")
    return sha, bool(status)


@lru_cache(maxsize=1)
def kernel_source_hash() -> str:
    """sha256 over the kernel sources (kernels/**/*.py, .cu, .cuh, .h), 16 hex digits."""
    h = hashlib.sha256()
    for p in sorted(KERNELS_DIR.rglob("*")):
        if p.suffix in (".py", ".cu", ".cuh", ".h", ".hpp") and "__pycache__" not in p.parts:
            h.update(str(p.relative_to(KERNELS_DIR)).encode())
            h.update(p.read_bytes())
    return h.hexdigest()[:16]


def triton_version() -> str | None:
    try:
        import triton

        return triton.__version__
    except Exception:
        return None


def now_iso() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


@lru_cache(maxsize=1)
def software() -> dict:
    """Provenance columns shared by every row of a process."""
    sha, dirty = git_state()
    return {
        "git_sha": sha,
        "git_dirty": dirty,
        "kernel_source_hash": kernel_source_hash(),
        "torch_version": torch.__version__,
        "triton_version": triton_version(),
        "python_version": platform.python_version(),
        "hostname": socket.gethostname(),
    }
