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
LIMIT_S = 150  # a deadlock fails the test instead of hanging it
BASE = ["run", "sweep=collectives_smoke", "device=cpu", "progress=false"]


@pytest.fixture(scope="module")
def faults(tmp_path_factory):
    """Registers the faulty providers here and, through sys.path, in the spawned ranks."""
    where = tmp_path_factory.mktemp("faults")
    (where / "collective_faults.py").write_text(FAULTS)
    sys.path.insert(0, str(where))
    import collective_faults  # noqa: F401

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


def _faulty_run(tmp_path, provider: str, timeout_s: float = 60):
    args = [
        *BASE,
        f"sweep.groups.0.providers=[{provider}]",
        "sweep.groups.0.product.collective=[all_reduce]",
        f"results_dir={tmp_path}",
        f"run_id={provider}",
        f"point_timeout_s={timeout_s}",
    ]
    with deadline(LIMIT_S):
        assert main(args) == 0
    df = store.read_rows(tmp_path / provider).set_index("message_bytes")
    assert len(df) == 3
    assert df.loc[1024, "status"] == "ok" and df.loc[65536, "status"] == "ok"
    assert df.loc[65536, "busbw_gbps"] > 0
    assert df.loc[8192, "status"] == "error" and pd.isna(df.loc[8192, "latency_ms_median"])
    return df.loc[8192]


def test_rank_that_raises_costs_one_point(tmp_path, faults):
    bad = _faulty_run(tmp_path, "gloo-raises")
    assert bad.reason == "rank 1: RuntimeError: injected fault"


def test_rank_that_dies_costs_one_point(tmp_path, faults):
    bad = _faulty_run(tmp_path, "gloo-dies")
    assert bad.reason.startswith("ranks of world 2 failed during this point")


def test_gpu_providers_are_skipped_rows_on_cpu(tmp_path):
    args = [*BASE[:1], "sweep=collectives", "device=cpu", "progress=false",
            "providers=[nccl,rccl]", f"results_dir={tmp_path}", "run_id=skip"]  # fmt: skip
    with deadline(LIMIT_S):
        assert main(args) == 0
    df = store.read_rows(tmp_path / "skip")
    assert len(df) == 88 and set(df.status) == {"skipped"}
    assert set(df.reason) == {"runs on nvidia, not cpu", "runs on amd, not cpu"}
    assert df.message_bytes.min() == 1024 and df.message_bytes.max() == 1 << 30


@pytest.mark.slow
def test_rank_that_hangs_times_out_and_costs_one_point(tmp_path, faults):
    # The point's deadline (rank 1) and the process group's timeout (rank 0, waiting for it)
    # both end at ~10 s; whichever fires first, the point is an error row and the sweep goes on.
    bad = _faulty_run(tmp_path, "gloo-hangs", timeout_s=10)
    assert "timeout" in bad.reason.lower() or "timed out" in bad.reason.lower(), bad.reason
