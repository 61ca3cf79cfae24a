"""GPU correctness of own Triton's tiny-N tiles (gemm_candidates.tiny_n_configs: 16-wide N tiles
at N 8, an MoE router's gate, split-K up to 16 ways) against an fp32 reference, bf16 and fp8,
at the M the Mixtral preset runs and at a ragged K; then the tuner's own pick at the same
problems. Run with `pytest -m gpu` on a Hopper GPU."""

from __future__ import annotations

import pytest
import torch

pytestmark = pytest.mark.gpu

FP8 = torch.float8_e4m3fn


def _sm90() -> bool:
    return torch.cuda.is_available() and torch.cuda.get_device_capability() == (9, 0)


def _operands(m: int, n: int, k: int, dtype: torch.dtype):
    gen = torch.Generator(device="cuda").manual_seed(m * 131 + k)
    a = torch.randn(m, k, device="cuda", generator=gen).to(dtype)
    b = torch.randn(n, k, device="cuda", generator=gen).to(dtype).t()  # nt, as a Linear's weight
    scales = {}
    if dtype == FP8:
        scales = {
            "a_scale": torch.tensor(0.5, device="cuda"),
            "b_scale": torch.tensor(2.0, device="cuda"),
        }
    return a, b, scales


def _err(out: torch.Tensor, a: torch.Tensor, b: torch.Tensor, scales: dict) -> float:
    ref = a.float() @ b.float()
    if scales:
        ref = ref * (scales["a_scale"].item() * scales["b_scale"].item())
    return ((out.float() - ref).norm() / ref.norm()).item()


@pytest.mark.skipif(not _sm90(), reason="the tiny-N tiles are offered on sm_90")
@pytest.mark.parametrize("dtype", [torch.bfloat16, FP8], ids=["bf16", "fp8"])
@pytest.mark.parametrize("mnk", [(1, 8, 4096), (64, 8, 4096), (512, 8, 4096), (200, 8, 1000)])
def test_every_tiny_n_tile_matches_reference(mnk: tuple, dtype: torch.dtype) -> None:
    from harness_kernels.triton.gemm import build_launch, prepare_matmul
    from harness_kernels.triton.gemm_candidates import tiny_n_configs
    from harness_kernels.triton.gemm_operands import check_operands
    from harness_kernels.triton.gemm_target import kernel_target

    m, n, k = mnk
    a, b, scales = _operands(m, n, k, dtype)
    dev = kernel_target(a.device)
    p = check_operands(a, b, None, scales.get("a_scale"), scales.get("b_scale"), "tf32", dev)
    cfgs = tiny_n_configs("full", m, n, k, dtype.itemsize, 2, dev)
    assert cfgs
    for cfg in cfgs:
        launch = build_launch(p, cfg, dev)
        for _ in range(2):  # twice: the split-K counters must reset for the next launch
            launch.out.fill_(float("nan"))
            out = launch()
            torch.cuda.synchronize()
            assert out.shape == (m, n)
            assert _err(out, a, b, scales) < 2e-2, (mnk, cfg)
    tuned = prepare_matmul(a, b, **scales)
    assert _err(tuned(), a, b, scales) < 2e-2
    print(
        mnk,
        dtype,
        tuned.config.get("block_n"),
        tuned.config.get("split_k"),
        tuned.config.get("tuned_ms"),
    )
