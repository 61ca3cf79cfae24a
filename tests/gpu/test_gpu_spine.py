"""On a GPU: the smoke sweep through both GPU timers; telemetry and device columns filled."""

import pytest

from harness import store
from harness.cli import main

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("protocol", ["default", "graph"])
def test_smoke_on_gpu(tmp_path, protocol):
    args = [
        "run",
        "sweep=smoke",
        f"protocol={protocol}",
        "providers=[cublas,sdpa-flash]",
        f"results_dir={tmp_path}",
        "run_id=g",
        "progress=false",
    ]
    assert main(args) == 0
    df = store.read_rows(tmp_path / "g")
    ok = df[df.status == "ok"]
    assert len(ok) >= 8
    assert (ok.device_vendor == "nvidia").all() and ok.device_uuid.notna().all()
    assert ok.sm_clock_mhz.notna().all() and ok.power_w.notna().all()
    assert set(ok.timer) == {"cuda-graph" if protocol == "graph" else "cuda-events"}


def test_the_tune_cache_names_this_gpu_as_the_rows_do():
    """tuned_on (the tune cache's gpu_uuid) must be spelled as a row's device_uuid, or harness
    gaps never finds a decision of this GPU: both come from torch's device properties."""
    from harness_kernels import tune_cache

    from harness.device import get_device

    assert tune_cache.gpu_uuid() == get_device("cuda").uuid != ""
