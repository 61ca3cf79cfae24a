"""`harness ... | head`: a reader that leaves early ends the command quietly, not with a traceback."""

from __future__ import annotations

import subprocess
import sys


def test_output_cut_by_reader_is_not_an_error():
    # The reader closes its end before the command (still importing) prints its first line, so
    # every write meets a closed pipe: the case of `| head` on long output, without a race.
    proc = subprocess.Popen(
        [sys.executable, "-m", "harness.cli", "list"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()
    err = proc.stderr.read().decode()
    rc = proc.wait(timeout=120)
    assert "Traceback" not in err and "BrokenPipeError" not in err, err
    assert rc == 0
