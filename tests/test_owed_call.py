"""scripts/owed_call.sh on a CPU, through stand-in `nvidia-smi` and `python3` on PATH: the call
runs the list of the GPU that came (results/<gpu>/owed.specs), with GPU set to match, whatever
kind the call named; comments and blank lines are no specs, and a GPU without a list is refused."""

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.skipif(
    shutil.which("bash") is None or shutil.which("timeout") is None, reason="needs bash, timeout"
)

LISTS = {
    # a # inside quotes is the spec's; the last line has no newline (a list edited by hand)
    "h100": "# the H100's\nrun-a sweep=smoke 'sweep.groups.0.providers=[torch]' 'x=a#b'  # why\n"
    "\r\n  # indented\nrun-d sweep=smoke",
    "h200": "run-b ceilings\n   \n# no spec\nrun-c sweep=probes_read_once\n",
}


def _call(
    tmp_path: Path, gpu_name: str, budget: str = "100"
) -> tuple[subprocess.CompletedProcess, list[str]]:
    tree = tmp_path / "tree"
    (tree / "scripts").mkdir(parents=True)
    for script in ("owed_call.sh", "gpu_measure.sh", "pack_built_cutlass.sh"):
        shutil.copy(REPO / "scripts" / script, tree / "scripts")
    for gpu, text in LISTS.items():
        (tree / "results" / gpu).mkdir(parents=True)
        (tree / "results" / gpu / "owed.specs").write_text(text)
    fake = tmp_path / "bin"
    fake.mkdir()
    calls = tmp_path / "calls.txt"
    calls.touch()
    (fake / "python3").write_text(
        f'#!/usr/bin/env bash\necho "$*" >> {calls}\n'
        'case "$*" in *harness.cli*) echo "run: 1 point, 1 measured now (ok=1)" ;; esac\n'
    )
    (fake / "nvidia-smi").write_text(f"#!/usr/bin/env bash\necho '{gpu_name}'\n")
    for f in fake.iterdir():
        f.chmod(0o755)
    (tmp_path / "out").mkdir()
    env = {
        **os.environ,
        "PATH": f"{fake}:{os.environ['PATH']}",
        "OUT": str(tmp_path / "out"),
        "DEVICE_ENV": "0",
        "HARNESS_CACHE_DIR": str(tmp_path / "hcache"),
        "HARNESS_CUTLASS_CACHE": str(tmp_path / "no-cutlass-cache"),
    }
    env.pop("GPU", None)
    done = subprocess.run(
        ["bash", "scripts/owed_call.sh", budget],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    return done, [c for c in calls.read_text().splitlines() if "harness.cli" in c]


def test_an_h100_runs_the_h100_list_into_its_scratch_folder(tmp_path):
    done, runs = _call(tmp_path, "NVIDIA H100 80GB HBM3")
    assert done.returncode == 0, done.stderr
    assert "results/h100/owed.specs, 2 spec(s)" in done.stdout
    assert [r.split("run_id=")[1].split()[0] for r in runs] == ["run-a", "run-d"]
    assert "sweep.groups.0.providers=[torch] x=a#b results_dir" in runs[0]  # quotes eval'd away
    assert "why" not in runs[0] and "'" not in runs[0]  # the comment is no override
    assert "results_dir=results/_scratch/h100" in runs[0]
    assert "warning" not in done.stdout  # GPU matches the machine


def test_an_h200_runs_the_h200_list_in_order(tmp_path):
    done, runs = _call(tmp_path, "NVIDIA H200")
    assert done.returncode == 0, done.stderr
    assert [r.split("run_id=")[1].split()[0] for r in runs] == ["run-b", "run-c"]
    assert runs[0].startswith("-m harness.cli ceilings")
    assert all("results_dir=results/_scratch/h200" in r for r in runs)


@pytest.mark.parametrize(
    ("gpu_name", "budget", "message"),
    [
        ("NVIDIA A100-SXM4-80GB", "100", "allowed: an H100 or H200"),
        ("NVIDIA GH200 480GB", "100", "allowed: an H100 or H200"),
        ("NVIDIA H200", "soon", "allowed: <seconds budget>"),
    ],
)
def test_a_gpu_without_a_list_or_a_bad_budget_is_refused(tmp_path, gpu_name, budget, message):
    done, runs = _call(tmp_path, gpu_name, budget)
    assert done.returncode == 2 and message in done.stderr
    assert runs == []


@pytest.mark.parametrize("gpu", ["h100", "h200"])
def test_the_committed_lists_name_real_sweeps_and_no_committed_run(gpu):
    """Each committed list's spec names a sweep that exists, and no finished run already
    committed for that GPU: one left on the list would be timed again from nothing. A run
    committed unfinished (fewer rows than its run.json plans: session 101's gemm_llama-s102h,
    cut at the device budget) may stay listed: finishing it, resumed from `.cache/resume` or
    timed whole where no pack is carried, replaces a partial. A list may be empty (all comments)
    when nothing owed is a gpu_measure.sh spec; owed_call.sh then says so."""
    from harness.store import read_rows

    lines = (REPO / "results" / gpu / "owed.specs").read_text().splitlines()
    specs = [s.split("#")[0].split() for s in lines if s.split("#")[0].strip()]
    for run_id, *overrides in specs:
        committed = REPO / "results" / gpu / run_id
        if committed.exists():
            planned = json.loads((committed / "run.json").read_text())["points"]
            assert len(read_rows(committed)) < planned, f"{run_id} is committed, finished"
        sweeps = [o.removeprefix("sweep=") for o in overrides if o.startswith("sweep=")]
        assert overrides[:1] == ["ceilings"] or sweeps, run_id
        for name in sweeps:
            assert (REPO / "sweeps" / f"{name}.yaml").is_file(), name
