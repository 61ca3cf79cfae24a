"""scripts/gpu_test_xdist.sh decides how many pytest workers a lent call's GPU correctness tests
get: 8 where the card shares itself between processes (compute mode Default), none where an
exclusive mode would refuse the second worker's context or nvidia-smi cannot say. A stand-in
`nvidia-smi` on PATH plays the card."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")


def _xdist(tmp_path: Path, mode: str | None, workers: str | None = None) -> str:
    fake = tmp_path / "bin"
    fake.mkdir()
    smi = fake / "nvidia-smi"  # None: a driver that does not answer (a real card's is shadowed)
    smi.write_text("#!/usr/bin/env bash\n" + (f"echo {mode}\n" if mode else "exit 9\n"))
    smi.chmod(0o755)
    env = {**os.environ, "PATH": f"{fake}:/usr/bin:/bin"}
    env.pop("GPU_TEST_XDIST", None)
    if workers is not None:
        env["GPU_TEST_WORKERS"] = workers
    done = subprocess.run(
        ["bash", "-c", '. scripts/gpu_test_xdist.sh; bash -c \'echo "[$GPU_TEST_XDIST]"\''],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=30,
    )  # fmt: skip
    return done.stdout.strip()


def test_a_shared_card_gets_eight_workers_exported(tmp_path):
    assert _xdist(tmp_path, "Default") == "[-n 8 --dist load]"


def test_the_worker_count_can_be_named(tmp_path):
    assert _xdist(tmp_path, "Default", workers="4") == "[-n 4 --dist load]"


@pytest.mark.parametrize("mode", ["Exclusive_Process", "Prohibited", None])
def test_an_exclusive_card_or_no_answer_keeps_one_worker(tmp_path, mode):
    assert _xdist(tmp_path, mode) == "[]"
