"""The tune pass (harness/tune_pass.py): on a GPU, every pending own point that can run is
prepared once, on its check inputs, before the first timed point, each under the in-flight marker;
vendor points, points the provider cannot run, CPU sweeps and protocol.tune_first=false prepare
nothing; a failing prepare is counted and left to its point. The runner calls it before it times
anything."""

import io
import json
import time

import pytest

from harness import inflight, runner, store
from harness.cli import main
from harness.device import DeviceInfo
from harness.measure.protocol import Protocol
from harness.problems import GemmProblem
from harness.providers import Provider, Registry
from harness.sweep import Point
from harness.tune_pass import mark, tune_first

GPU = DeviceInfo("cuda", 0, "nvidia", "H100", None, "sm_90", (9, 0), 132, 1, 1, None, None)
CPU = DeviceInfo("cpu", 0, "cpu", "cpu", None, "x86_64", None, 2, None, None, None, None)
P1, P2 = GemmProblem(16, 4096, 4096, "bf16", "nt"), GemmProblem(32, 4096, 4096, "bf16", "nt")


def _setup(monkeypatch: pytest.MonkeyPatch, prepared: list) -> tuple[Registry, list]:
    seeds: list = []

    def make_inputs(self, seed, fill, dev):
        seeds.append((seed, fill, str(dev)))
        return {"m": self.m}

    monkeypatch.setattr(GemmProblem, "make_inputs", make_inputs)

    def prepare(problem, inputs, device):
        prepared.append(inputs["m"])
        if problem.m == 32:
            raise RuntimeError("no candidate ran")

    registry = Registry()
    registry.add(Provider("own-a", "gemm", "own", ("nvidia",), prepare))
    registry.add(Provider("vendor", "gemm", "vendor", ("nvidia",), prepare))
    registry.add(Provider("own-amd", "gemm", "own", ("amd",), prepare))  # cannot run here
    return registry, seeds


def test_own_points_are_prepared_once_before_timing(monkeypatch, tmp_path):
    prepared: list = []
    registry, seeds = _setup(monkeypatch, prepared)
    marks: list = []
    real_mark = inflight.write_marker

    def mark(run_path, shard, key, label):
        marks.append(key)
        return real_mark(run_path, shard, key, label)

    monkeypatch.setattr(inflight, "write_marker", mark)
    todo = [
        ("k1", Point(P1, "own-a")),
        ("k2", Point(P1, "vendor")),
        ("k3", Point(P2, "own-a")),
        ("k4", Point(P1, "own-amd")),
    ]
    out = io.StringIO()
    protocol = Protocol(seed=3)
    # k3's prepare failed: it tunes again inside its point, so its row is not marked
    assert tune_first(todo, registry, GPU, protocol, tmp_path, 0, out) == {"k1"}
    assert prepared == [16, 32] and marks == ["k1", "k3"]
    # the inputs the point's correctness check draws (point.py: seed * 1000 + 1)
    assert seeds == [(3001, "randn", "cuda:0")] * 2
    assert "2 own points prepared" in out.getvalue() and "1 failed" in out.getvalue()
    assert "s before the first timed point (own-a gemm " in out.getvalue()  # time per provider
    # the marker names the last point prepared: a crash there costs that point only
    assert json.loads(inflight.marker_path(tmp_path, 0).read_text())["point_key"] == "k3"


def test_nothing_is_prepared_on_the_cpu_or_when_turned_off(monkeypatch, tmp_path):
    prepared: list = []
    registry, _ = _setup(monkeypatch, prepared)
    todo = [("k1", Point(P1, "own-a"))]
    out = io.StringIO()
    assert tune_first(todo, registry, CPU, Protocol(), tmp_path, 0, out) == set()
    assert tune_first(todo, registry, GPU, Protocol(tune_first=False), tmp_path, 0, out) == set()
    assert prepared == [] and out.getvalue() == ""


def test_the_runner_runs_the_pass_before_the_first_timed_point(monkeypatch, tmp_path):
    calls: list = []
    real_measure = runner.measure_point

    def tune(todo, *args, **kwargs):
        calls.append(("tune", len(todo)))
        return {todo[0][0]}  # as if the first point had been prepared by the pass

    def measure(problem, provider, *args, **kwargs):
        calls.append(("measure", provider.name))
        return real_measure(problem, provider, *args, **kwargs)

    monkeypatch.setattr(runner, "tune_first", tune)
    monkeypatch.setattr(runner, "measure_point", measure)
    args = ["sweep=smoke", "device=cpu", "providers=[torch-cpu]", "progress=false"]
    assert main(["run", *args, "isolate=false", f"results_dir={tmp_path}", "run_id=t"]) == 0
    assert calls[0][0] == "tune" and calls[0][1] == len(calls) - 1 > 0
    assert {c[0] for c in calls[1:]} == {"measure"}
    # the rows say which points the pass prepared, so compare can tell the two apart
    rows = store.read_rows(tmp_path / "t")
    marked = [json.loads(c).get("tune_pass", False) for c in rows.provider_config]
    assert sorted(marked) == [False] * (len(marked) - 1) + [True]


def test_forced_the_pass_runs_on_the_cpu_and_with_it_turned_off(monkeypatch, tmp_path):
    """tune_only=true forces the pass: it is all that run asks for."""
    prepared: list = []
    registry, _ = _setup(monkeypatch, prepared)
    registry.add(Provider("own-cpu", "gemm", "own", ("cpu",), lambda p, i, d: prepared.append(d)))
    out = io.StringIO()
    here = [("k1", Point(P1, "own-cpu"))]
    assert tune_first(here, registry, CPU, Protocol(), tmp_path, 0, out, force=True) == {"k1"}
    off = Protocol(tune_first=False)
    todo = [("k2", Point(P1, "own-a"))]
    assert tune_first(todo, registry, GPU, off, tmp_path, 0, out, force=True) == {"k2"}
    assert prepared == [CPU, 16] and out.getvalue().count("1 own points prepared") == 2


def test_tune_only_times_nothing_and_the_same_run_then_times_every_point(
    monkeypatch, tmp_path, capsys
):
    """tune_only=true runs the pass and writes no row; the same command without it resumes the
    same run (the plan is the same) and times every point, and run.json's history keeps both."""
    calls: list = []
    real_measure = runner.measure_point

    def tune(todo, *args, force=False, **kwargs):
        calls.append(("tune", len(todo), force))
        return set()

    def measure(problem, provider, *args, **kwargs):
        calls.append(("measure", provider.name))
        return real_measure(problem, provider, *args, **kwargs)

    monkeypatch.setattr(runner, "tune_first", tune)
    monkeypatch.setattr(runner, "measure_point", measure)
    args = ["run", "sweep=smoke", "device=cpu", "providers=[torch-cpu]", "progress=false"]
    args += [f"results_dir={tmp_path}", "run_id=t"]
    assert main([*args, "tune_only=true"]) == 0  # isolate stays on: a tune_only run prepares here
    assert [c[0] for c in calls] == ["tune"] and calls[0][2] is True
    points = calls[0][1]
    assert not list((tmp_path / "t").glob("rows/*.parquet"))
    assert "tune pass only, nothing timed" in capsys.readouterr().out
    calls.clear()
    assert main([*args, "isolate=false"]) == 0
    assert calls[0] == ("tune", points, False) and len(calls) == points + 1
    assert len(store.read_rows(tmp_path / "t")) == points
    history = json.loads((tmp_path / "t" / "run.json").read_text())["history"]
    assert [h["measured_now"] for h in history] == [0, points]
    assert "tune_only=true" in history[0]["overrides"]


def test_mark_adds_the_flag_to_provider_config_only_where_there_is_one():
    row = mark({"provider_config": json.dumps({"tile": "128x256", "tune_source": "tuned"})})
    assert json.loads(row["provider_config"]) == {
        "tile": "128x256",
        "tune_source": "tuned",
        "tune_pass": True,
    }
    assert mark({"provider_config": None}) == {"provider_config": None}


def test_stop_after_s_starts_no_point_after_the_limit_and_the_same_command_resumes(
    monkeypatch, tmp_path, capsys
):
    """stop_after_s=: the loop starts no point once the limit has passed (a fake clock moves 10 s
    per point: at 25 s three points are timed), exits 75 naming what is left, and the same
    command without it times the rest of the same run."""
    clock = {"t": 1_000.0}
    real_measure = runner.measure_point

    def measure(problem, provider, *args, **kwargs):
        clock["t"] += 10.0
        return real_measure(problem, provider, *args, **kwargs)

    monkeypatch.setattr(runner, "tune_first", lambda todo, *a, **k: set())
    monkeypatch.setattr(runner, "measure_point", measure)
    monkeypatch.setattr(time, "time", lambda: clock["t"])
    args = ["run", "sweep=smoke", "device=cpu", "providers=[torch-cpu]", "progress=false"]
    args += [f"results_dir={tmp_path}", "run_id=t", "isolate=false"]
    with pytest.raises(SystemExit) as stopped:
        main([*args, "stop_after_s=25"])
    assert stopped.value.code == 75
    assert len(store.read_rows(tmp_path / "t")) == 3
    err = capsys.readouterr().err
    assert "stopped at stop_after_s with" in err and "the same command resumes" in err
    assert main(args) == 0
    total = len(store.read_rows(tmp_path / "t"))
    assert total > 3
    history = json.loads((tmp_path / "t" / "run.json").read_text())["history"]
    assert [h["measured_now"] for h in history] == [3, total - 3]


def test_the_tune_pass_starts_no_point_after_stop_at(monkeypatch, tmp_path):
    prepared: list = []
    registry, _ = _setup(monkeypatch, prepared)
    todo = [("k1", Point(P1, "own-a"))]
    out = io.StringIO()
    past = time.time() - 1.0
    assert tune_first(todo, registry, GPU, Protocol(), tmp_path, 0, out, stop_at=past) == set()
    assert prepared == [] and "not reached by stop_after_s" in out.getvalue()
    assert tune_first(todo, registry, GPU, Protocol(), tmp_path, 0, out, stop_at=None) == {"k1"}


def test_stop_time_counts_from_the_supervising_parents_start(monkeypatch):
    """A measuring child (and a restarted one) stops when its parent's invocation would: the
    limit counts from the parent's start, which the child reads from its environment."""
    from harness import children
    from harness.plan import stop_time

    assert stop_time(None) is None
    with pytest.raises(ValueError, match="stop_after_s"):
        stop_time(0)
    monkeypatch.setattr(children, "supervised", lambda: True)
    monkeypatch.setenv(children.SINCE_ENV, "1000.5")
    assert stop_time(60) == pytest.approx(1060.5)
    monkeypatch.setattr(children, "supervised", lambda: False)
    assert stop_time(60) == pytest.approx(time.time() + 60, abs=5)


def test_stop_after_s_in_a_measuring_child_is_a_clean_stop_not_a_crash(tmp_path, capsys):
    """With isolate=true (the default) a child measures; at stop_after_s it exits 75, which its
    parent must take as done, not restart as a crash (nor write an error row); the parent then
    exits 75 too, and the same command without the limit times every point. The limit here
    passes before the child's first point (it counts from the parent's start)."""
    args = ["run", "sweep=smoke", "device=cpu", "providers=[torch-cpu]", "progress=false"]
    args += [f"results_dir={tmp_path}", "run_id=t"]
    with pytest.raises(SystemExit) as stopped:
        main([*args, "stop_after_s=0.001"])
    assert stopped.value.code == 75
    err = capsys.readouterr().err
    assert "starting it again" not in err and "gave up" not in err
    assert not list((tmp_path / "t").glob("rows/*.parquet"))
    assert main(args) == 0
    rows = store.read_rows(tmp_path / "t")
    assert len(rows) > 0 and set(rows["status"]) == {"ok"}


def test_own_triton_points_compile_ahead_first_unless_told_not(monkeypatch, tmp_path):
    """Before the pass prepares its points one by one, harness.compile_ahead gets them all
    (it keeps own Triton's), with the check inputs' seed and fill and a deadline no later than
    stop_after_s; compile_workers=0 skips it."""
    prepared: list = []
    registry, _ = _setup(monkeypatch, prepared)
    calls: list = []

    def ahead(chosen, device, seed, fill, out, workers, deadline, processes_here):
        calls.append(([k for k, _ in chosen], seed, fill, workers, deadline, list(prepared)))
        if workers == 3:
            raise OSError("no more processes")
        return {}

    monkeypatch.setattr("harness.tune_pass.compile_ahead", ahead)
    todo = [("k1", Point(P1, "own-a")), ("k2", Point(P1, "vendor"))]
    stop = time.time() + 60
    out = io.StringIO()
    tune_first(todo, registry, GPU, Protocol(seed=3), tmp_path, 0, out, 900.0, stop_at=stop)
    (call,) = calls
    assert call[:4] == (["k1"], 3001, "randn", None) and call[5] == []  # before any prepare
    assert stop - 31 <= call[4] <= stop - 29  # half the time left to stop_after_s
    calls.clear()
    tune_first(todo, registry, GPU, Protocol(), tmp_path, 0, out, compile_workers=0)
    assert calls == []
    tune_first(todo, registry, GPU, Protocol(), tmp_path, 0, out, 60.0, compile_workers=4)
    assert calls[0][3] == 4 and calls[0][4] <= time.time() + 60
    # a failure there is said, and the pass prepares its points all the same
    prepared.clear()
    assert tune_first(todo, registry, GPU, Protocol(), tmp_path, 0, out, compile_workers=3) == {
        "k1"
    }
    assert (
        prepared == [16] and "compile ahead failed (OSError: no more processes)" in out.getvalue()
    )


def test_the_pass_records_its_points_and_seconds_and_compile_aheads(monkeypatch, tmp_path):
    """`record` gets what the pass printed, for run.json's history: points prepared, seconds
    (all and per provider), failures, and compile ahead's points, failures and seconds."""
    prepared: list = []
    registry, _ = _setup(monkeypatch, prepared)
    monkeypatch.setattr(
        "harness.tune_pass.compile_ahead", lambda chosen, *a: {"k1": None, "k3": "OSError: x"}
    )
    todo = [("k1", Point(P1, "own-a")), ("k2", Point(P1, "vendor")), ("k3", Point(P2, "own-a"))]
    record: dict = {}
    assert tune_first(todo, registry, GPU, Protocol(), tmp_path, 0, io.StringIO(), record=record)
    assert record["points"] == 2 and record["failed"] == 1 and record["not_reached"] == 0
    assert set(record["by_provider"]) == {"own-a gemm"} and record["seconds"] >= 0
    ahead = record["compile_ahead"]
    assert ahead["points"] == 2 and ahead["not_compiled"] == 1 and ahead["failed"] is False
    # compile ahead raising is recorded as failed; compile_workers=0 records no compile ahead
    monkeypatch.setattr("harness.tune_pass.compile_ahead", _raise)
    record = {}
    tune_first(todo, registry, GPU, Protocol(), tmp_path, 0, io.StringIO(), record=record)
    assert record["compile_ahead"]["failed"] is True and record["points"] == 2
    record = {}
    tune_first(
        todo,
        registry,
        GPU,
        Protocol(),
        tmp_path,
        0,
        io.StringIO(),
        compile_workers=0,
        record=record,
    )
    assert "compile_ahead" not in record and record["points"] == 2


def _raise(*args, **kwargs):
    raise OSError("no more processes")


def test_the_runner_writes_the_pass_into_the_runs_history(monkeypatch, tmp_path):
    def tune(todo, *args, record=None, **kwargs):
        record.update(points=len(todo), seconds=1.5)
        return set()

    monkeypatch.setattr(runner, "tune_first", tune)
    args = ["run", "sweep=smoke", "device=cpu", "providers=[torch-cpu]", "progress=false"]
    args += [f"results_dir={tmp_path}", "run_id=t", "isolate=false"]
    assert main([*args, "tune_only=true"]) == 0
    assert main(args) == 0
    history = json.loads((tmp_path / "t" / "run.json").read_text())["history"]
    assert [h["tune_pass"]["seconds"] for h in history] == [1.5, 1.5]
    assert history[0]["tune_pass"]["points"] == history[1]["measured_now"]
