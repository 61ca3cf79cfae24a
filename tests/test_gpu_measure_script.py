"""scripts/gpu_measure.sh on a CPU, through a stand-in `python3` on PATH: every harness command it
runs names the commit in .cache/gitid (what device_carry.sh wrote on the CPU box), not what git
says in the lent machine's copy of the tree, and each spec's overrides reach the harness."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.skipif(
    shutil.which("bash") is None or shutil.which("timeout") is None, reason="needs bash, timeout"
)


def _run(
    tmp_path: Path,
    gitid: str | None,
    cutlass_cache: Path | None = None,
    gpu_name: str | None = None,
    gpu: str = "h200",
) -> tuple[subprocess.CompletedProcess, list[str]]:
    tree = tmp_path / "tree"
    (tree / "scripts").mkdir(parents=True)
    for script in ("gpu_measure.sh", "pack_built_cutlass.sh"):
        shutil.copy(REPO / "scripts" / script, tree / "scripts")
    if gitid is not None:
        (tree / ".cache").mkdir()
        (tree / ".cache" / "gitid").write_text(gitid + "\n")
    fake = tmp_path / "bin"
    fake.mkdir()
    calls = tmp_path / "calls.txt"
    # each call: its environment's commit, then its arguments
    (fake / "python3").write_text(
        "#!/usr/bin/env bash\n"
        f'echo "sha=${{HARNESS_GIT_SHA:-unset}} dirty=${{HARNESS_GIT_DIRTY:-unset}} $*" >> {calls}\n'
        'case "$*" in *harness.cli*) echo "run: 2 points, 2 measured now (ok=2)" ;; esac\n'
    )
    (fake / "python3").chmod(0o755)
    if gpu_name is not None:  # the machine's nvidia-smi
        (fake / "nvidia-smi").write_text(f"#!/usr/bin/env bash\necho '{gpu_name}'\n")
        (fake / "nvidia-smi").chmod(0o755)
    out = tmp_path / "out"
    out.mkdir()
    env = {
        **os.environ,
        "PATH": f"{fake}:{os.environ['PATH']}",
        "GPU": gpu,
        "OUT": str(out),
        "DEVICE_ENV": "0",
        "HARNESS_CACHE_DIR": str(tmp_path / "hcache"),
    }
    env["HARNESS_CUTLASS_CACHE"] = str(cutlass_cache or tmp_path / "no-cutlass-cache")
    env.pop("HARNESS_GIT_SHA", None)
    env.pop("HARNESS_GIT_DIRTY", None)
    spec = "my-run sweep=smoke 'sweep.groups.0.providers=[torch]'"
    done = subprocess.run(
        ["bash", "scripts/gpu_measure.sh", "120", spec],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    return done, calls.read_text().splitlines()


def test_the_harness_runs_name_the_commit_device_carry_wrote(tmp_path):
    done, calls = _run(tmp_path, "HARNESS_GIT_SHA=ba2bf557 HARNESS_GIT_DIRTY=0")
    assert done.returncode == 0, done.stderr
    harness = [c for c in calls if "harness.cli" in c]
    assert len(harness) == 1
    assert harness[0].startswith("sha=ba2bf557 dirty=0 ")
    assert "sweep.groups.0.providers=[torch]" in harness[0]  # the spec's quoting survives eval
    assert "run_id=my-run" in harness[0] and "stop_after_s=" in harness[0]
    assert "my-run rc=0" in done.stdout
    assert (tmp_path / "out" / "results.tgz").is_file()


def test_without_a_gitid_the_harness_falls_back_to_its_own_git_reading(tmp_path):
    done, calls = _run(tmp_path, None)
    assert done.returncode == 0, done.stderr
    assert [c for c in calls if "harness.cli" in c][0].startswith("sha=unset dirty=unset ")


def _cache(tmp_path: Path, marker: bool) -> Path:
    """A CUTLASS library cache as device_env.sh leaves it: one library, and the marker of the
    carried archive it came from, touched after unpacking (so newer than the library)."""
    cache = tmp_path / "cutlass-cache"
    (cache / "gemm-a").mkdir(parents=True)
    lib = cache / "gemm-a" / "lib.so"
    lib.write_bytes(b"carried")
    os.utime(lib, (1_000_000_000, 1_000_000_000))
    if marker:
        (cache / ".from-123").touch()
    return cache


def test_unchanged_carried_libraries_are_not_packed_again(tmp_path):
    """Session 88: packing 200 carried libraries took about a minute and pushed a call past its
    limit, cutting the archive short; nothing built on the machine, nothing to send back."""
    done, _ = _run(tmp_path, None, _cache(tmp_path, marker=True))
    assert done.returncode == 0, done.stderr
    assert not (tmp_path / "out" / "cutlass.tar.xz").exists()
    assert (tmp_path / "out" / "results.tgz").is_file()


def test_a_library_built_on_the_machine_comes_back(tmp_path):
    cache = _cache(tmp_path, marker=True)
    (cache / "gemm-b").mkdir()
    (cache / "gemm-b" / "lib.so").write_bytes(b"built here")  # newer than the marker
    done, _ = _run(tmp_path, None, cache)
    assert done.returncode == 0, done.stderr
    names = subprocess.run(
        ["tar", "tJf", str(tmp_path / "out" / "cutlass.tar.xz")], capture_output=True, text=True
    ).stdout
    assert "gemm-a/lib.so" in names and "gemm-b/lib.so" in names


def test_libraries_with_no_carried_archive_come_back(tmp_path):
    """No marker: the machine built its cache from nothing, so all of it is new to the CPU box."""
    done, _ = _run(tmp_path, None, _cache(tmp_path, marker=False))
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "out" / "cutlass.tar.xz").is_file()


@pytest.mark.parametrize(
    ("gpu", "gpu_name", "warned"),
    [
        ("h200", "NVIDIA H100 80GB HBM3", True),  # session 93: a call for an H200 came on an H100
        ("h200", "NVIDIA H200", False),
        ("h100", "NVIDIA H100 80GB HBM3", False),
        ("h200x2", "NVIDIA H200", False),  # a pair's folder names the model and the count
    ],
)
def test_a_machine_of_another_gpu_than_the_folder_names_is_said_first(
    tmp_path, gpu, gpu_name, warned
):
    done, _ = _run(tmp_path, "HARNESS_GIT_SHA=abc HARNESS_GIT_DIRTY=0", gpu_name=gpu_name, gpu=gpu)
    assert done.returncode == 0, done.stderr
    said = f"warning: GPU={gpu}, but this machine's GPU is {gpu_name}"
    assert (said in done.stdout) is warned
    if warned:
        assert done.stdout.index(said) < done.stdout.index("my-run rc=")
