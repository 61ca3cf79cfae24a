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
