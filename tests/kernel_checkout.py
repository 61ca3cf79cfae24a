"""A throwaway git checkout of some of this repo's folders, and a scripts/ command run against it:
the two *_same.py scripts compare a revision's kernels with a checkout's, and their tests edit
the copy, never the repo."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def committed_copy(dest: Path, *folders: str) -> Path:
    """`folders` of this repo copied under `dest`, committed there as its HEAD; returns dest."""
    for folder in folders:
        shutil.copytree(REPO / folder, dest / folder, ignore=shutil.ignore_patterns("__pycache__"))
    for args in (
        ["init", "-q"],
        ["add", "-A"],
        ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "base"],
    ):
        subprocess.run(["git", "-C", str(dest), *args], check=True, capture_output=True)
    return dest


def run_script(name: str, *args: str) -> subprocess.CompletedProcess:
    """scripts/<name>.py with `args`, its output captured."""
    return subprocess.run(
        [sys.executable, str(REPO / "scripts" / f"{name}.py"), *args],
        capture_output=True,
        text=True,
        timeout=600,
    )
