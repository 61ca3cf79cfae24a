"""scripts/device_carry.sh builds what a lent GPU call carries: its wheel pins must be the ones
pyproject gives a user for the same extras, or the GPU rows would name one version while a user
who repeats them installs another. (Running it downloads ~160 MiB: done by hand, not here.)"""

import re
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "scripts" / "device_carry.sh"


def _pins(text: str) -> dict[str, str]:
    """name -> version of every `name==version` (extras dropped, names normalized)."""
    found = re.findall(r"([A-Za-z0-9_.-]+)(?:\[[\w,]+\])?==([0-9][\w.]*)", text)
    return {re.sub(r"[-_.]+", "-", n).lower(): v for n, v in found}


def test_the_carried_wheels_are_pyprojects_pins():
    extras = tomllib.loads((REPO / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    wanted = _pins(" ".join(extras["flash-attn-4"] + extras["flashinfer"]))
    carried = _pins(SCRIPT.read_text())
    assert wanted, "pyproject's flash-attn-4 and flashinfer extras pin nothing"
    assert {n: carried.get(n) for n in wanted} == wanted


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_the_script_parses():
    subprocess.run(["bash", "-n", str(SCRIPT)], check=True)


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_a_fresh_checkout_gets_the_committed_tune_caches_and_keeps_its_own(tmp_path):
    """A fresh checkout's .cache/ is empty (session 93 began so and tuned every family again on
    the GPU): the script copies tune_cache/'s committed copies there, never over one it has."""
    (tmp_path / "scripts").mkdir()
    shutil.copy(SCRIPT, tmp_path / "scripts")
    (tmp_path / "tune_cache").mkdir()
    (tmp_path / "tune_cache" / "tune-h100.tgz").write_bytes(b"committed h100")
    (tmp_path / "tune_cache" / "tune-h200.tgz").write_bytes(b"committed h200")
    (tmp_path / ".cache").mkdir()
    (tmp_path / ".cache" / "tune-h200.tgz").write_bytes(b"this box's newer h200")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(tmp_path)]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "x"], check=True)
    # PYTHON=true: every pip download, wheel build and size count is a no-op here
    done = subprocess.run(
        ["bash", str(tmp_path / "scripts" / "device_carry.sh")],
        env={"PATH": "/usr/bin:/bin", "PYTHON": "true"},
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert (tmp_path / ".cache" / "tune-h100.tgz").read_bytes() == b"committed h100"
    assert (tmp_path / ".cache" / "tune-h200.tgz").read_bytes() == b"this box's newer h200"
    assert "tune cache from tune_cache/tune-h100.tgz" in done.stdout
