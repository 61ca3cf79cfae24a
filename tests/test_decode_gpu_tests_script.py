"""scripts/decode_gpu_tests.sh decides whether a lent GPU call goes on to time kernels. Its three
outcomes are driven here through a stand-in `python3` on PATH (the real tests need a GPU): a
failing decode test stops the call, a timeout with no failure stops it but says so apart (session
70 lost a call to a cold machine's 300 s test limit, read then as a failure), and a failing
compile-ahead test only turns compile ahead off for the sweep."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "scripts" / "decode_gpu_tests.sh"

pytestmark = pytest.mark.skipif(
    shutil.which("bash") is None or shutil.which("timeout") is None, reason="needs bash, timeout"
)


def _run(
    tmp_path: Path,
    decode_body: str,
    ahead_body: str = "echo '1 passed'",
    limit: int = 20,
    xdist: str = "",
):
    """Source the script and call decode_gpu_tests with a fake python3 that acts out the bodies
    (the compile-ahead test is the call whose arguments name test_compile_ahead_gpu.py)."""
    fake = tmp_path / "bin"
    fake.mkdir()
    py = fake / "python3"
    py.write_text(
        "#!/usr/bin/env bash\n"
        'case "$*" in *test_compile_ahead_gpu.py*) ' + ahead_body + " ;;\n"
        "*) " + decode_body + " ;; esac\n"
    )
    py.chmod(0o755)
    log = tmp_path / "tests.txt"
    script = (
        f"t0=$(date +%s); . {SCRIPT}; decode_gpu_tests {log} {limit}; "
        'echo "RC=$? OFF=[$COMPILE_AHEAD_OFF]"'
    )
    env = {**os.environ, "PATH": f"{fake}:{os.environ['PATH']}", "GPU_TEST_XDIST": xdist}
    done = subprocess.run(
        ["bash", "-c", script], env=env, capture_output=True, text=True, timeout=60
    )
    return done.stdout


def test_passing_tests_let_the_call_go_on_with_compile_ahead(tmp_path):
    out = _run(tmp_path, "echo '21 passed'; exit 0")
    assert "RC=0 OFF=[]" in out


def test_a_failing_decode_test_stops_the_call_and_prints_it(tmp_path):
    out = _run(tmp_path, "echo 'FAILED tests/gpu/x.py::test_tile - AssertionError'; exit 1")
    assert "RC=1" in out
    assert "FAILED tests/gpu/x.py::test_tile" in out
    assert "timed out" not in out


def test_a_timeout_without_failures_stops_the_call_and_is_named_as_one(tmp_path):
    out = _run(tmp_path, "echo '..............'; sleep 30", limit=1)
    assert "RC=1" in out
    assert "timed out at 1 s with no failure yet" in out
    assert "TESTS=only" in out


def test_a_failing_compile_ahead_test_turns_compile_ahead_off_only(tmp_path):
    out = _run(tmp_path, "echo '21 passed'; exit 0", ahead_body="echo 'FAILED ahead'; exit 1")
    assert "RC=0 OFF=[compile_workers=0]" in out
    assert "compile ahead off" in out


def test_the_decode_tests_take_the_xdist_workers_and_compile_ahead_keeps_one(tmp_path):
    """GPU_TEST_XDIST (scripts/gpu_test_xdist.sh) spreads the compile-bound correctness tests
    over workers; compile ahead's test starts worker processes of its own and stays as it was."""
    args = tmp_path / "args.txt"
    out = _run(
        tmp_path,
        f"echo \"decode $*\" >> {args}; echo '21 passed'",
        ahead_body=f"echo \"ahead $*\" >> {args}; echo '1 passed'",
        xdist="-n 8 --dist load",
    )
    assert "RC=0 OFF=[]" in out
    decode, ahead = args.read_text().splitlines()
    assert decode.startswith("decode ") and decode.endswith("-n 8 --dist load")
    assert ahead.startswith("ahead ") and "-n 8" not in ahead
