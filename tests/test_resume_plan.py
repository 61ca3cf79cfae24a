"""Resuming a run_id with another sweep, provider set, protocol or kernel tree is refused in one line
unless allow_mixed=true; run.json keeps the run's plan and a history of invocations (issue 17.6)."""

import json
import shutil

import pytest

from harness import store
from harness.cli import main

BASE = ["run", "sweep=smoke", "device=cpu", "progress=false"]
MINE = "providers=[torch-cpu]"
WAYS_OUT = "allowed: the run's values, another run_id, or allow_mixed=true"


def _run(tmp_path, *extra, run_id="r"):
    return main([*BASE, f"results_dir={tmp_path}", f"run_id={run_id}", *extra])


def _meta(tmp_path, name="run.json", run_id="r"):
    return json.loads((tmp_path / run_id / name).read_text())


@pytest.fixture(scope="module")
def measured_once(tmp_path_factory):
    """An 8-point run r, measured once for the module (each test gets a copy)."""
    root = tmp_path_factory.mktemp("measured")
    assert _run(root, MINE) == 0
    return root / "r"


@pytest.fixture
def measured(measured_once, tmp_path, capsys):
    """A copy of the 8-point run r in tmp_path; (its rows' mtimes, run.json as text)."""
    shutil.copytree(measured_once, tmp_path / "r")
    capsys.readouterr()
    rows = {p: p.stat().st_mtime_ns for p in (tmp_path / "r" / "rows").glob("*.parquet")}
    return rows, (tmp_path / "r" / "run.json").read_text()


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        (
            ["providers=[torch-cpu,sdpa-math]"],
            "providers: run 'r' was measured with ['torch-cpu'], this invocation has "
            "['sdpa-math', 'torch-cpu']; ",
        ),
        (
            [MINE, "sweep.groups.0.zip={m:[2,33],n:[64,40],k:[64,48]}"],
            "sweep.groups: run 'r' was measured with a set of 8 points, this invocation has "
            "another set of 8; ",
        ),
        (["sweep=microbench_smoke", MINE], "sweep: run 'r' was measured with 'smoke', this "),
        # a protocol field outside the point key, and one inside it
        ([MINE, "protocol.warmup_ms=2"], "protocol.warmup_ms: run 'r' was measured with 1.0, "),
        ([MINE, "protocol.seed=1"], "protocol.seed: run 'r' was measured with 0, this "),
        (
            [MINE, "protocol=hot", "protocol.seed=3"],
            "protocol.l2: run 'r' was measured with 'cold', this invocation has 'hot' (also "
            "differs: protocol.seed); ",
        ),
    ],
    ids=["providers", "groups", "sweep", "protocol-off-key", "protocol-in-key", "protocol-group"],
)
@pytest.mark.parametrize("dry", [False, True], ids=["run", "dry"])
def test_a_different_resume_is_refused(extra, expected, dry, measured, tmp_path, capsys):
    rows, meta = measured
    argv = [*extra, "dry_run=true"] if dry else extra
    assert _run(tmp_path, *argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("harness: error: "), err
    assert expected in err[0] and WAYS_OUT in err[0], err[0]
    after = {p: p.stat().st_mtime_ns for p in (tmp_path / "r" / "rows").glob("*.parquet")}
    assert after == rows and (tmp_path / "r" / "run.json").read_text() == meta


def test_allow_mixed_resumes_and_history_records_it(measured, tmp_path, capsys):
    assert _run(tmp_path, MINE) == 0  # a faithful resume: nothing to refuse, nothing new
    assert _run(tmp_path, "providers=[torch-cpu,sdpa-math]", "allow_mixed=true") == 0
    assert "8 already done, 4 measured now" in capsys.readouterr().out
    assert _run(tmp_path, "providers=[sdpa-math]", "allow_mixed=true") == 0
    meta = _meta(tmp_path)
    assert meta["sweep"] == "smoke" and meta["plan"]["providers"] == ["torch-cpu"]
    assert meta["points"] == 12  # the largest plan: a later subset never shrinks it
    assert meta["mixed"] == ["providers"]
    history = meta["history"]
    assert [h["measured_now"] for h in history] == [8, 0, 4, 0]
    assert [h["points_planned"] for h in history] == [8, 8, 12, 4]
    assert [h["differs"] for h in history] == [[], [], ["providers"], ["providers"]]
    assert history[2]["providers"] == ["sdpa-math", "torch-cpu"]
    assert "allow_mixed=true" in history[2]["overrides"]
    for h in history:
        assert h["sweep"] == "smoke" and h["protocol"]["warmup_ms"] == 1.0
        assert h["time"] and h["done"] and "git_sha" in h and h["shard"] == [0, 1]
    assert len(store.read_rows(tmp_path / "r")) == 12


def test_a_resume_on_other_kernel_sources_is_refused(measured, tmp_path, capsys, monkeypatch):
    """A tuner or kernel change between two calls of one run would mix two experiments under
    its name: the plan records the kernels' hash, and a resume with another is refused."""
    import harness.plan

    was = _meta(tmp_path)["plan"]["kernel_source_hash"]
    assert len(was) == 16
    monkeypatch.setattr(harness.plan, "kernel_source_hash", lambda: "0123456789abcdef")
    assert _run(tmp_path, MINE) == 2
    err = capsys.readouterr().err.strip()
    assert (
        f"kernel_source_hash: run 'r' was measured with kernels/ at {was}, this invocation has "
        "kernels/ at 0123456789abcdef; " + WAYS_OUT
    ) in err
    assert _run(tmp_path, MINE, "allow_mixed=true") == 0
    meta = _meta(tmp_path)
    assert meta["mixed"] == ["kernel_source_hash"] and meta["plan"]["kernel_source_hash"] == was
    assert meta["history"][-1]["differs"] == ["kernel_source_hash"]


def test_a_resume_on_another_gpu_model_is_refused(measured, tmp_path, capsys, monkeypatch):
    """A lent call that names one GPU kind may come on another (session 93's call for an H200
    ran on an H100): its resume would time every point again under the other model's keys into
    the same run. The plan records the model; another card of the model may resume."""
    import harness.plan

    was = _meta(tmp_path)["plan"]["device"]
    assert was.startswith("cpu|")
    monkeypatch.setattr(harness.plan, "device_identity", lambda d: "nvidia|NVIDIA H100 80GB HBM3")
    assert _run(tmp_path, MINE, "dry_run=true") == 2
    err = capsys.readouterr().err.strip()
    assert (
        f"device: run 'r' was measured with {was}, this invocation has nvidia|NVIDIA H100 80GB "
        "HBM3; " + WAYS_OUT
    ) in err


def test_a_run_planned_before_the_model_was_recorded_is_checked_by_its_rows(
    measured, tmp_path, capsys, monkeypatch
):
    import harness.plan

    path = tmp_path / "r" / "run.json"
    meta = json.loads(path.read_text())
    was = meta["plan"].pop("device")
    path.write_text(json.dumps(meta))
    assert _run(tmp_path, MINE) == 0  # the same model: a faithful resume
    monkeypatch.setattr(harness.plan, "device_identity", lambda d: "nvidia|NVIDIA H200")
    assert _run(tmp_path, MINE, "dry_run=true") == 2
    assert f"device: run 'r' was measured with {was}, this invocation has nvidia|NVIDIA H200" in (
        capsys.readouterr().err
    )


def test_a_run_without_rows_yet_is_held_to_its_planned_kernels(
    measured, tmp_path, capsys, monkeypatch
):
    """Killed in its prebuild or tune pass, a run has a plan but no row: a resume on other
    kernels is refused by the plan's hash, as one with rows is by theirs."""
    import harness.plan

    run = tmp_path / "r"
    for part in [*run.glob("rows"), *run.glob("*.parquet")]:
        shutil.rmtree(part) if part.is_dir() else part.unlink()
    assert store.read_rows(run).empty
    monkeypatch.setattr(harness.plan, "kernel_source_hash", lambda: "0123456789abcdef")
    assert _run(tmp_path, MINE, "dry_run=true") == 2
    assert "kernel_source_hash: run 'r' was measured with kernels/ at " in capsys.readouterr().err


def test_a_run_planned_before_the_kernel_hash_is_checked_by_its_rows(
    measured, tmp_path, capsys, monkeypatch
):
    """run.json written before session 60 has no kernel hash in its plan: the rows' own
    kernel_source_hash column decides."""
    import harness.plan

    path = tmp_path / "r" / "run.json"
    meta = json.loads(path.read_text())
    was = meta["plan"].pop("kernel_source_hash")
    path.write_text(json.dumps(meta))
    assert _run(tmp_path, MINE) == 0  # the same kernels: a faithful resume
    monkeypatch.setattr(harness.plan, "kernel_source_hash", lambda: "0123456789abcdef")
    assert _run(tmp_path, MINE, "dry_run=true") == 2
    assert f"run 'r' was measured with kernels/ at {was}, this invocation has kernels/ at " in (
        capsys.readouterr().err
    )


def test_an_interrupted_invocation_stays_in_the_history(measured, tmp_path, monkeypatch):
    import harness.runner

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(harness.runner, "measure_point", interrupted)  # in this process:
    args = ["providers=[torch-cpu,sdpa-math]", "allow_mixed=true", "isolate=false"]
    assert _run(tmp_path, *args) == 130
    history = _meta(tmp_path)["history"]
    assert len(history) == 2 and history[1]["measured_now"] is None


def test_a_record_without_a_plan_is_compared_by_sweep_name(tmp_path, capsys):
    """run.json as written before plans: only its sweep name is known."""
    (tmp_path / "old").mkdir()
    (tmp_path / "old" / "run.json").write_text(
        json.dumps({"run_id": "old", "sweep": "ladder", "points": 40})
    )
    assert _run(tmp_path, MINE, "dry_run=true", run_id="old") == 2
    assert "sweep: run 'old' was measured with 'ladder', this invocation has 'smoke'" in (
        capsys.readouterr().err
    )
    assert _run(tmp_path, MINE, "allow_mixed=true", run_id="old") == 0
    meta = _meta(tmp_path, run_id="old")
    assert meta["sweep"] == "ladder" and meta["points"] == 40 and len(meta["history"]) == 1


def test_devices_workers_resume_under_their_parent(tmp_path, capsys):
    """devices=[cpu,cpu]: the parent's run.json and each worker's run-shard-<i>.json get one
    history entry per invocation; a faithful resume is not refused in the workers, a mixed one
    passes the flag on to them."""
    devices = [MINE, "devices=[cpu,cpu]"]
    assert _run(tmp_path, *devices) == 0
    assert _run(tmp_path, *devices) == 0
    assert "8 already done, 0 measured now" in capsys.readouterr().out
    assert _run(tmp_path, *devices, "protocol.warmup_ms=2") == 2
    assert "protocol.warmup_ms: run 'r' was measured with 1.0" in capsys.readouterr().err
    assert _run(tmp_path, *devices, "protocol.warmup_ms=2", "allow_mixed=true") == 0
    parent = _meta(tmp_path)
    assert [h["measured_now"] for h in parent["history"]] == [8, 0, 0]
    assert [h["differs"] for h in parent["history"]] == [[], [], ["protocol.warmup_ms"]]
    assert parent["devices"] == ["cpu", "cpu"] and len(parent["workers"]) == 2
    for i in (0, 1):
        shard = _meta(tmp_path, f"run-shard-{i}.json")
        assert [h["shard"] for h in shard["history"]] == [[i, 2]] * 3
        assert [h["differs"] for h in shard["history"]] == [[], [], ["protocol.warmup_ms"]]
        assert shard["plan"]["protocol"]["warmup_ms"] == 1.0  # the run's plan is kept
    assert (
        sum(
            h["measured_now"]
            for i in (0, 1)
            for h in _meta(tmp_path, f"run-shard-{i}.json")["history"]
        )
        == 8
    )
