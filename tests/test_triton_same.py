"""scripts/triton_same.py on a copy of the checkout: one Triton kernel compiled ahead of time on
both sides is identical when only its lines move, and differs once its arithmetic changes."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from kernel_checkout import committed_copy, run_script

KERNEL = Path("kernels") / "triton" / "attention_decode_kernel.py"


def _compare(repo: Path) -> subprocess.CompletedProcess:
    return run_script("triton_same", "--repo", str(repo), "attention:attn_decode_reduce")


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_moved_lines_are_identical_and_changed_arithmetic_differs(tmp_path):
    repo = committed_copy(tmp_path / "repo", "harness", "kernels")
    source = repo / KERNEL
    text = source.read_text()

    # every line of the kernel one further down: the PTX's line table moves, the SASS does not
    source.write_text("# one more line\n" + text)
    moved = _compare(repo)
    assert moved.returncode == 0, moved.stdout + moved.stderr
    assert "1 of 1 identical against HEAD" in moved.stdout

    old = "    denom = tl.sum(w, 0)\n"
    assert text.count(old) == 1
    source.write_text(text.replace(old, "    denom = tl.sum(w, 0) + 1.0\n"))
    changed = _compare(repo)
    assert changed.returncode == 1, changed.stdout + changed.stderr
    assert "DIFFERS  attention:attn_decode_reduce" in changed.stdout
