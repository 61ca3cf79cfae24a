"""NCCL / RCCL on two GPUs through `harness run` (needs 2 GPUs; TRITON_INTERPRET=0)."""

import pytest
import torch

from harness import store
from harness.cli import main
from harness.measure.point import deadline

pytestmark = pytest.mark.gpu


@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs 2 GPUs")
def test_two_gpu_collectives_are_ok_rows_with_busbw(tmp_path):
    provider = "rccl" if torch.version.hip else "nccl"
    args = [
        "run",
        "sweep=collectives",
        f"providers=[{provider}]",
        "progress=false",
        "sweep.groups.0.product.message_bytes=[4096,16777216]",
        "protocol.max_time_s=0.5",
        "protocol.min_time_s=0.1",
        "protocol.warmup_ms=50",
        f"results_dir={tmp_path}",
        "run_id=gpu",
    ]
    with deadline(300):
        assert main(args) == 0
    df = store.read_rows(tmp_path / "gpu")
    assert len(df) == 8 and set(df.status) == {"ok"}, df[["problem", "status", "reason"]]
    assert (df.timer == "cuda-events").all() and (df.device_index == 0).all()
    big = df[df.message_bytes == 16777216]
    assert (big.busbw_gbps > 10).all()  # any GPU link moves 16 MiB at well over 10 GB/s
