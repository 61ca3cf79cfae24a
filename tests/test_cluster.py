"""Cluster runs through Hydra's submitit launcher (its local executor here): one job per shard,
all writing into one run by run_id."""

import json
import subprocess
import sys

from harness import store


def _cluster(tmp_path, *args):
    cmd = [
        sys.executable,
        "-m",
        "harness.cluster",
        "-m",
        "hydra/launcher=local",
        "sweep=smoke",
        "device=cpu",
        "providers=[torch-cpu,sdpa-math]",
        f"results_dir={tmp_path}",
        "progress=false",
        *args,
    ]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=tmp_path)


def test_one_job_per_shard_merges_into_one_run(tmp_path):
    out = _cluster(tmp_path, "run_id=c", "shard_count=2", "shard_index=range(2)")
    assert out.returncode == 0, out.stderr[-2000:]
    df = store.read_rows(tmp_path / "c")
    assert len(df) == 12 and df.point_key.is_unique and set(df.status) == {"ok"}
    shards = [json.loads((tmp_path / "c" / f"run-shard-{i}.json").read_text()) for i in (0, 1)]
    assert [s["shard"] for s in shards] == [[0, 2], [1, 2]]
    assert list((tmp_path / "_hydra").glob("multirun-*/.submitit"))  # submitit ran the jobs
    # rerun: every job finds its share done
    again = _cluster(tmp_path, "run_id=c", "shard_count=2", "shard_index=range(2)")
    assert again.returncode == 0 and len(store.read_rows(tmp_path / "c")) == 12


def test_cluster_run_needs_a_run_id(tmp_path):
    out = _cluster(tmp_path, "shard_count=1", "shard_index=0")
    assert out.returncode != 0
    assert "run_id: required for cluster runs" in out.stderr + out.stdout
