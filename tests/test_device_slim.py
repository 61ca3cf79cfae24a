"""scripts/device_slim.py: the committed run data out of the tree for a lent call and back from
git, byte for byte; nothing uncommitted is ever deleted."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from script_module import load_script

slim = load_script("device_slim")

FILES = {
    "results/h200/run-a/rows.parquet": b"a" * 700,
    "results/h200/run-b/rows.parquet": b"b" * 300,
    "results/h200/README.md": b"# runs\n",
    "results/h200/_logs/session87/call1.sh": b"echo call\n",
    "reports/hopper/index.html": b"<html/>",
    "reports/hopper/roofline.png": b"png",
    "reports/README.md": b"# reports\n",
    "results/h200/run[1]/rows.parquet": b"glob-like name",
    "harness/code.py": b"x = 1\n",
}


def _repo(tmp_path: Path) -> Path:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    for name, data in FILES.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(data)
    git = ["git", "-C", str(tmp_path), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "runs"], check=True)
    return tmp_path


def _present(repo: Path) -> set[str]:
    return {name for name in FILES if (repo / name).exists()}


def test_aside_takes_the_rows_and_the_report_and_back_restores_them(tmp_path):
    repo = _repo(tmp_path)
    gone = slim.aside(repo, keep=[])
    assert sorted(gone) == sorted(
        [
            "results/h200/run-a/rows.parquet",
            "results/h200/run-b/rows.parquet",
            "results/h200/run[1]/rows.parquet",
            "reports/hopper/index.html",
            "reports/hopper/roofline.png",
        ]
    )
    # the READMEs, the call scripts under _logs and the code stay for the call
    assert _present(repo) == {
        "results/h200/README.md",
        "results/h200/_logs/session87/call1.sh",
        "reports/README.md",
        "harness/code.py",
    }
    assert sorted(slim.back(repo)) == sorted(gone)
    assert all((repo / n).read_bytes() == data for n, data in FILES.items())


def test_keep_leaves_a_run_a_device_script_reads(tmp_path):
    repo = _repo(tmp_path)
    slim.aside(repo, keep=["results/h200/run-b/"])
    assert (repo / "results/h200/run-b/rows.parquet").exists()
    assert not (repo / "results/h200/run-a/rows.parquet").exists()


def test_an_uncommitted_change_is_refused_and_nothing_is_deleted(tmp_path):
    repo = _repo(tmp_path)
    (repo / "results/h200/run-a/rows.parquet").write_bytes(b"new rows")
    with pytest.raises(SystemExit, match="uncommitted"):
        slim.aside(repo, keep=[])
    assert _present(repo) == set(FILES)


def test_back_leaves_a_run_moved_out_with_git_rm(tmp_path):
    repo = _repo(tmp_path)
    subprocess.run(
        ["git", "-C", str(repo), "rm", "-q", "results/h200/run-a/rows.parquet"], check=True
    )
    slim.aside(repo, keep=[])
    restored = slim.back(repo)
    assert "results/h200/run-a/rows.parquet" not in restored
    assert not (repo / "results/h200/run-a/rows.parquet").exists()
    assert (repo / "results/h200/run-b/rows.parquet").exists()


def test_a_commit_before_back_cannot_take_the_rows_with_it(tmp_path):
    repo = _repo(tmp_path)
    slim.aside(repo, keep=[])
    status = subprocess.run(
        ["git", "-C", str(repo), "status", "--porcelain"], capture_output=True, text=True
    ).stdout
    assert status == ""  # the deletions are not changes git would stage
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t"]
    (repo / "harness/code.py").write_text("x = 2\n")
    subprocess.run([*git, "commit", "-qam", "a change made while the rows are aside"], check=True)
    slim.back(repo)
    assert all((repo / n).exists() for n in FILES)
    tracked = subprocess.run(
        ["git", "-C", str(repo), "ls-files"], capture_output=True, text=True
    ).stdout.split()
    assert "results/h200/run-a/rows.parquet" in tracked


def test_a_second_aside_before_back_is_refused(tmp_path):
    """git diff does not look at skip-worktree files, so an aside over an aside could delete a
    file written at a set-aside path meanwhile without seeing it."""
    repo = _repo(tmp_path)
    slim.aside(repo, keep=[])
    (repo / "reports/hopper/index.html").write_bytes(b"<html>new report</html>")
    with pytest.raises(SystemExit, match="still set aside"):
        slim.aside(repo, keep=[])
    assert (repo / "reports/hopper/index.html").read_bytes() == b"<html>new report</html>"


def test_back_leaves_a_file_written_meanwhile_and_shows_it_changed(tmp_path):
    repo = _repo(tmp_path)
    slim.aside(repo, keep=[])
    (repo / "reports/hopper/index.html").write_bytes(b"<html>new report</html>")
    restored = slim.back(repo)
    assert "reports/hopper/index.html" not in restored
    assert (repo / "reports/hopper/index.html").read_bytes() == b"<html>new report</html>"
    status = subprocess.run(
        ["git", "-C", str(repo), "status", "--porcelain"], capture_output=True, text=True
    ).stdout
    assert status.strip() == "M reports/hopper/index.html"


def test_a_staged_change_is_refused(tmp_path):
    repo = _repo(tmp_path)
    (repo / "results/h200/run-b/rows.parquet").write_bytes(b"staged rows")
    subprocess.run(["git", "-C", str(repo), "add", "results/h200/run-b/rows.parquet"], check=True)
    (repo / "results/h200/run-b/rows.parquet").write_bytes(FILES["results/h200/run-b/rows.parquet"])
    with pytest.raises(SystemExit, match="uncommitted"):
        slim.aside(repo, keep=[])
    assert _present(repo) == set(FILES)


def test_a_keep_path_that_holds_nothing_is_refused(tmp_path):
    repo = _repo(tmp_path)
    with pytest.raises(SystemExit, match="--keep results/h200/run-c"):
        slim.aside(repo, keep=["results/h200/run-c"])
    assert _present(repo) == set(FILES)
