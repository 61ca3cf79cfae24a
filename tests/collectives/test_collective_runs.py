"""Collectives end to end on the CPU: two gloo ranks through `harness run`; a rank that fails in
one point costs that point only, and nothing waits forever."""

import sys

import numpy as np
import pandas as pd
import pytest

from harness import store
from harness.cli import main
from harness.measure.point import deadline

# Raises on rank 1 in one point (a local failure the ranks agree on), or kills rank 1 there
# (a dead peer: the parent records the point and starts the ranks again after it).
FAULTS = '''
import os
import time
import torch.distributed as dist
from harness.providers.collectives import _launch
from harness.providers.registry import register

@register("gloo-raises", "collective", "vendor", ("cpu",))
def gloo_raises(problem, inputs, device):
    """gloo, but rank 1 raises in prepare at 8 KiB."""
    if problem.message_bytes == 8192 and dist.get_rank() == 1:
        raise RuntimeError("injected fault")
    return _launch(problem, inputs)

@register("gloo-hangs", "collective", "vendor", ("cpu",))
def gloo_hangs(problem, inputs, device):
    """gloo, but rank 1 never returns from prepare at 8 KiB."""
    if problem.message_bytes == 8192 and dist.get_rank() == 1:
        time.sleep(3600)
    return _launch(problem, inputs)

@register("gloo-dies", "collective", "vendor", ("cpu",))
def gloo_dies(problem, inputs, device):
    """gloo, but rank 1 exits at 8 KiB."""
    if problem.message_bytes == 8192 and dist.get_rank() == 1:
        os._exit(3)
    return _launch(problem, inputs)
'''
# Registers in the parent only: the ranks fail before their first point, every launch.
UNIMPORTABLE = '''
import multiprocessing
from harness.providers.collectives import _launch
from harness.providers.registry import register

if multiprocessing.parent_process() is not None:
    raise ImportError("injected: no such module in the ranks")

@register("gloo-unimportable", "collective", "vendor", ("cpu",))
def gloo_unimportable(problem, inputs, device):
    """gloo, but the ranks cannot import it."""
    return _launch(problem, inputs)
'''
LIMIT_S = 150  # a deadlock fails the test instead of hanging it
BASE = ["run", "sweep=collectives_smoke", "device=cpu", "progress=false"]


@pytest.fixture(scope="module")
def faults(tmp_path_factory):
    """Registers the faulty providers here and, through sys.path, in the spawned ranks."""
    where = tmp_path_factory.mktemp("faults")
    (where / "collective_faults.py").write_text(FAULTS)
    (where / "collective_unimportable.py").write_text(UNIMPORTABLE)
    sys.path.insert(0, str(where))
    import collective_faults  # noqa: F401
    import collective_unimportable  # noqa: F401

    yield
    sys.path.remove(str(where))


def test_gloo_smoke_run_gives_ok_rows_with_busbw(tmp_path, capsys):
    with deadline(LIMIT_S):
        assert main([*BASE, f"results_dir={tmp_path}", "run_id=smoke"]) == 0
    df = store.read_rows(tmp_path / "smoke")
    assert len(df) == 12 and set(df.status) == {"ok"}, df[["problem", "status", "reason"]]
    assert set(df.collective) == {"all_reduce", "all_gather", "reduce_scatter", "all_to_all"}
    assert (df.world_size == 2).all() and (df.device_type == "cpu").all()
    assert (df.timer == "host").all() and (df.rel_err == 0).all()
    assert (df.busbw_gbps > 0).all() and (df.n_samples >= 3).all()
    ar = df.collective == "all_reduce"
    assert (df[ar].busbw_gbps == df[ar].gbps).all()  # 2(n-1)/n = 1 for two ranks
    assert np.allclose(df[~ar].busbw_gbps, df[~ar].gbps / 2)  # (n-1)/n
    assert np.allclose(df.gbps, df.message_bytes / df.latency_ms_median / 1e6)  # algbw
    assert df.provider_config.str.contains('"backend": "gloo"').all()
    assert not (tmp_path / "smoke" / "_collectives").exists()
    assert main([*BASE, f"results_dir={tmp_path}", "run_id=smoke"]) == 0  # resume: nothing new
    assert "12 already done" in capsys.readouterr().out


def test_tune_only_leaves_the_ranked_points_untimed(tmp_path, capsys):
    """Points of more ranks run in rank processes of their own, before the one-rank loop:
    tune_only=true must not time them either."""
    with deadline(LIMIT_S):
        assert main([*BASE, f"results_dir={tmp_path}", "run_id=t", "tune_only=true"]) == 0
    assert not list((tmp_path / "t").glob("rows/*.parquet"))
    assert "tune pass only, nothing timed; 12 points, 0 already done" in capsys.readouterr().out


def _run(tmp_path, providers: str, timeout_s: float) -> pd.DataFrame:
    """all_reduce at 1, 8 and 64 KiB by `providers`; rows by message size."""
    args = [
        *BASE,
        f"sweep.groups.0.providers=[{providers}]",
        "sweep.groups.0.product.collective=[all_reduce]",
        f"results_dir={tmp_path}",
        "run_id=faults",
        f"point_timeout_s={timeout_s}",
    ]
    with deadline(LIMIT_S):
        assert main(args) == 0
    return store.read_rows(tmp_path / "faults").set_index("message_bytes")


def test_a_rank_that_raises_dies_or_hangs_costs_one_point(tmp_path, faults):
    # Points in order: 1K by each provider, then 8K (raises: agreed; dies: the ranks start
    # again after it; hangs: rank 0's wait times out, ~10 s), then 64K by each.
    df = _run(tmp_path, "gloo-raises,gloo-dies,gloo-hangs", timeout_s=10)
    assert len(df) == 9
    for size in (1024, 65536):
        assert set(df.loc[size].status) == {"ok"} and (df.loc[size].busbw_gbps > 0).all()
    bad = df.loc[8192].set_index("provider")
    assert set(bad.status) == {"error"} and bad.latency_ms_median.isna().all()
    assert bad.reason["gloo-raises"] == "rank 1: RuntimeError: injected fault"
    assert bad.reason["gloo-dies"].startswith("ranks of world 2 failed during this point")
    assert bad.reason["gloo-dies"].endswith("rank 1 exited with code 3")
    hang = bad.reason["gloo-hangs"].lower()  # rank 0's group timeout, or rank 1's deadline
    assert "timed out" in hang or "timeout" in hang, hang


def test_gpu_providers_are_skipped_rows_on_cpu(tmp_path):
    args = [
        *BASE[:1],
        "sweep=collectives",
        "device=cpu",
        "progress=false",
        "providers=[nccl,rccl]",
        f"results_dir={tmp_path}",
        "run_id=skip",
    ]
    with deadline(LIMIT_S):
        assert main(args) == 0
    df = store.read_rows(tmp_path / "skip")
    assert len(df) == 88 and set(df.status) == {"skipped"}
    assert set(df.reason) == {"runs on nvidia, not cpu", "runs on amd, not cpu"}
    assert df.message_bytes.min() == 1024 and df.message_bytes.max() == 1 << 30


def test_ranks_that_cannot_start_give_up_after_a_retry(tmp_path, faults, capsys):
    df = _run(tmp_path, "gloo-unimportable", 60)
    assert len(df) == 3 and set(df.status) == {"error"}
    assert df.reason.str.startswith("ranks of world 2 failed 2 times before any point").all()
    assert df.reason.str.contains("injected: no such module").all()
    assert capsys.readouterr().err.count("collective ranks failed") == 2
