"""run_id names one folder under results_dir: anything that would put a run (or its config.yaml,
or main's report) outside it exits 2 with one line, before anything is written."""

import pytest

from harness import store
from harness.cli import main

BAD_IDS = ["../x", "/abs", "..", ".", "a/b", ""]
COMMANDS = {
    "run": ["run", "sweep=smoke", "device=cpu", "providers=[torch-cpu]", "progress=false"],
    "main": ["main", "sweep=smoke", "device=cpu", "providers=[torch-cpu]", "progress=false"],
    "ceilings": ["ceilings", "device=cpu", "progress=false"],
    "crosscheck": ["crosscheck", "device=cpu"],
    "inspect": ["inspect", "targets=sm_80", "kernels=gemm:nothing"],
}


@pytest.mark.parametrize("command", list(COMMANDS))
@pytest.mark.parametrize("run_id", BAD_IDS, ids=repr)
def test_bad_run_id_exits_2_and_writes_nothing(command, run_id, tmp_path, monkeypatch, capsys):
    work = tmp_path / "work"  # main's default report folder is relative to here
    (work / "results").mkdir(parents=True)
    monkeypatch.chdir(work)
    argv = [*COMMANDS[command], f"results_dir={work / 'results'}", f"run_id={run_id}"]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert err[0].startswith(f"harness: error: run_id: {run_id!r} is not a single folder name")
    assert "allowed: " in err[0]
    written = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*"))
    assert written == ["work", "work/results"]


@pytest.mark.parametrize("run_id", ["study1", "gemm_llama-cublas-gpu1", "v1.2", "_hidden"])
def test_good_run_ids_are_one_folder(run_id, tmp_path):
    assert store.run_dir(tmp_path, run_id) == tmp_path / run_id


@pytest.mark.parametrize("run_id", [*BAD_IDS, "a\\b", "x\ny", "a" * 129])
def test_run_dir_refuses_a_path(run_id, tmp_path):
    with pytest.raises(ValueError, match="run_id: .* not a single folder name"):
        store.run_dir(tmp_path, run_id)
