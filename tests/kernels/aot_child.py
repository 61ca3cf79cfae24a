"""Run an ahead-of-time compile script in a child process and return its JSON summary.

The test session runs kernels under the interpreter (TRITON_INTERPRET=1, which replaces
triton.jit functions by Python ones), so compiles for sm_90 / gfx942 run in a child without it;
the script prints one JSON object as its last line.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys


def compile_in_child(script: str, timeout: int = 600) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    proc = subprocess.run(
        [sys.executable, "-c", script],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-6000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])
