"""Sharding one sweep over several devices (CPU workers here): merged rows, crash isolation."""

import json
import os
import sys

import pytest

from harness import store
from harness.cli import main
from harness.plan import resolve_devices

BASE = ["run", "sweep=smoke", "device=cpu", "devices=[cpu,cpu]", "progress=false"]
CRASHY = '''
import os
from harness.providers.registry import Prepared, register

@register("crashy", "gemm", "own", ("cpu",))
def crashy(problem, inputs, device):
    """Dies like a segfaulting kernel on one shape."""
    if problem.m == 33 and problem.dtype == "fp32" and problem.layout == "nn":
        os._exit(3)
    return Prepared(lambda: inputs["a"].float() @ inputs["b"].float())
'''


def test_two_workers_merge_into_one_run(tmp_path, capsys):
    args = [*BASE, "providers=[torch-cpu,sdpa-math]", f"results_dir={tmp_path}", "run_id=two"]
    assert main(args) == 0
    df = store.read_rows(tmp_path / "two")
    assert len(df) == 12 and df.point_key.is_unique and set(df.status) == {"ok"}
    meta = json.loads((tmp_path / "two" / "run.json").read_text())
    assert meta["shards"] == 2 and [w["restarts"] for w in meta["workers"]] == [0, 0]
    assert (tmp_path / "two" / "run-shard-0.json").exists() and (
        tmp_path / "two" / "run-shard-1.json"
    ).exists()
    assert main(args) == 0  # resume: nothing new
    assert "12 already done, 0 measured now" in capsys.readouterr().out


def test_crashed_worker_loses_only_its_point(tmp_path, monkeypatch):
    (tmp_path / "crashy_provider.py").write_text(CRASHY)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(tmp_path), *sys.path]))
    monkeypatch.setenv("HARNESS_EXTRA_PROVIDERS", "crashy_provider")
    args = [
        *BASE,
        "sweep.groups.0.providers=[torch-cpu,crashy]",
        "providers=[torch-cpu,crashy]",
        f"results_dir={tmp_path}",
        "run_id=crash",
    ]
    assert main(args) == 0
    df = store.read_rows(tmp_path / "crash")
    assert len(df) == 16 and df.point_key.is_unique
    bad = df[df.status != "ok"]
    assert len(bad) == 1 and bad.iloc[0].provider == "crashy" and bad.iloc[0].m == 33
    assert "process exited with status 3 while measuring this point" in bad.iloc[0].reason
    meta = json.loads((tmp_path / "crash" / "run.json").read_text())
    assert sum(w["restarts"] for w in meta["workers"]) == 1
    assert any("gemm 33x40x48 fp32 nn" in c for w in meta["workers"] for c in w["crashes"])


def test_device_list_validation():
    assert resolve_devices(["cpu", "cpu"]) == ["cpu", "cpu"]
    with pytest.raises(ValueError, match="devices: "):
        resolve_devices("all")  # no GPU here
    with pytest.raises(ValueError, match="devices: unknown '7'"):
        resolve_devices([7])


def test_bad_shard_index_exits_2(tmp_path, capsys):
    assert (
        main(
            [
                "run",
                "sweep=smoke",
                "device=cpu",
                "shard_index=3",
                "shard_count=2",
                f"results_dir={tmp_path}",
            ]
        )
        == 2
    )
    assert "shard_index: 3 outside 0..1" in capsys.readouterr().err


def test_nested_shards_partition_the_problems():
    """Cluster shard s of S, split over G local devices (worker s + g*S of S*G), covers exactly
    shard s's problems; providers of one problem stay together."""
    from harness.config import compose_run_config
    from harness.plan import keyed_points, plan, shard_of

    cfg = compose_run_config(["sweep=gemm_llama", "device=cpu"])
    points, device = plan(cfg)
    keyed = keyed_points(cfg, points, device)
    S, G = 3, 2
    for s in range(S):
        outer = {k for k, _ in shard_of(keyed, s, S)}
        inner = [{k for k, _ in shard_of(keyed, s + g * S, S * G)} for g in range(G)]
        assert set().union(*inner) == outer and not inner[0] & inner[1]
    by_problem = {}
    for _key, p in shard_of(keyed, 0, 4):
        by_problem.setdefault(p.problem, set()).add(p.provider)
    assert all(v == {"cublas", "own-triton"} for v in by_problem.values())


def test_worker_binds_its_device(monkeypatch):
    """A worker for cuda:1 makes cuda:1 current before anything is launched or timed."""
    import torch

    from harness.device import DeviceInfo
    from harness.runner import bind_device

    calls = []
    monkeypatch.setattr(torch.cuda, "set_device", calls.append)
    dev = DeviceInfo("cuda", 1, "nvidia", "H200", None, "sm_90", (9, 0), 132, 1, 1, None, None)
    bind_device(dev)
    bind_device(DeviceInfo("cpu", 0, "cpu", "cpu", None, "x86_64", None, 2, None, None, None, None))
    assert calls == [1]


def test_resume_over_workers_sets_a_torn_row_aside_first(tmp_path, capsys):
    args = [*BASE, "providers=[torch-cpu,sdpa-math]", f"results_dir={tmp_path}", "run_id=torn"]
    assert main(args) == 0
    path = sorted((tmp_path / "torn" / "rows").glob("*.parquet"))[-1]
    path.write_bytes(path.read_bytes()[:100])
    capsys.readouterr()
    assert main(args) == 0
    out, err = capsys.readouterr()
    assert f"harness: warning: point {path.stem}: row file unreadable" in err
    assert "11 already done, 1 measured now" in out
    assert (tmp_path / "torn" / "rows" / store.UNREADABLE / path.name).exists()
    assert len(store.read_rows(tmp_path / "torn")) == 12
