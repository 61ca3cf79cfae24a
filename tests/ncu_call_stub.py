"""An ncu call script run on a CPU: the script and scripts/ncu_call_lib.sh copied into a bare
tree with a stand-in device_env.sh (which fails where sourced with noglob, as the real one's
wheel glob would) and .cache/gitid, and stand-in `ncu` and `nvidia-smi` on PATH.
The stand-in ncu prints its arguments and the commit in its environment, then the launch-order
line the launchers print."""

import os
import shutil
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def run_call(
    tmp_path: Path, script: str, profiles: list[str]
) -> tuple[subprocess.CompletedProcess, Path]:
    """(the finished `bash scripts/<script> PROFILE...`, its $OUT folder)."""
    tree = tmp_path / "tree"
    (tree / "scripts").mkdir(parents=True)
    for name in (script, "ncu_call_lib.sh"):
        shutil.copy(REPO / "scripts" / name, tree / "scripts")
    # the real device_env.sh names its wheels by glob (.whl/*.whl): sourced with noglob set, pip
    # was given the literal pattern and the call profiled nothing (session 105)
    (tree / "scripts" / "device_env.sh").write_text(
        '[[ $- != *f* ]] || { echo "device_env.sh: sourced with noglob" >&2; return 1; }\n'
    )
    (tree / ".cache").mkdir()
    (tree / ".cache" / "gitid").write_text("HARNESS_GIT_SHA=abc123 HARNESS_GIT_DIRTY=0\n")
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "nvidia-smi").write_text("#!/usr/bin/env bash\necho 'NVIDIA H200, GPU-x'\n")
    (fake / "ncu").write_text(
        '#!/usr/bin/env bash\necho "sha=$HARNESS_GIT_SHA $*"\necho "launched in this order:"\n'
    )
    for name in ("nvidia-smi", "ncu"):
        (fake / name).chmod(0o755)
    out = tmp_path / "out"
    out.mkdir()
    env = {**os.environ, "PATH": f"{fake}:{os.environ['PATH']}", "OUT": str(out)}
    proc = subprocess.run(
        ["bash", f"scripts/{script}", *profiles],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    return proc, out


def launcher_args(csv_text: str, launcher: str) -> str:
    """What the stand-in ncu was asked to run the launcher with."""
    return csv_text.split(f"{launcher} ")[1].split("\n")[0]
