"""scripts/carry_size.py: a lent call's tree and carry counted as a tar archive counts them, the
estimate that told session 84's refused call (64.2 MiB) from the one that passed (63.3)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from script_module import load_script

carry = load_script("carry_size")


def test_a_file_costs_a_header_and_whole_blocks():
    assert carry.tar_bytes(0) == 512
    assert carry.tar_bytes(1) == 1024
    assert carry.tar_bytes(512) == 1024
    assert carry.tar_bytes(513) == 1536


def _repo(tmp_path: Path) -> Path:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / ".gitignore").write_text(".whl/\nscratch/\n")
    (tmp_path / "kept.txt").write_text("x" * 600)
    subprocess.run(["git", "-C", str(tmp_path), "add", "."], check=True)
    (tmp_path / "new.txt").write_text("y")  # untracked, not ignored: carried
    (tmp_path / "scratch").mkdir()
    (tmp_path / "scratch" / "big.bin").write_bytes(b"z" * 5000)  # ignored: not carried
    (tmp_path / ".whl").mkdir()
    (tmp_path / ".whl" / "a.whl").write_bytes(b"w" * 100)
    return tmp_path


def test_tracked_untracked_and_carried_files_are_counted_apart(tmp_path):
    found = carry.parts(_repo(tmp_path), [".whl"])
    assert found["tracked"] == (2, 600 + len(".whl/\nscratch/\n"), 1536 + 1024)
    assert found["untracked"] == (1, 1, 1024)
    assert found["carry"] == (1, 100, 1024)


def test_over_the_limit_exits_1(tmp_path, monkeypatch, capsys):
    repo = _repo(tmp_path)
    assert carry.main(["--repo", str(repo), ".whl"]) == 0
    monkeypatch.setattr(carry, "LIMIT_MIB", 0.001)
    assert carry.main(["--repo", str(repo), ".whl"]) == 1
    assert "OVER" in capsys.readouterr().out
