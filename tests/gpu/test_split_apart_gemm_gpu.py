"""GPU correctness of own Triton's split-K with the partials summed by a second launch
(GemmConfig.reduce_apart, gemm_reduce_kernel.py) or, in the Gluon GEMM, also in place: every
such twin the candidate lists offer at Llama-3.1-405B's fused QKV (N 2304, K 16384) and at a
ragged shape, bf16 and fp8, against an fp32 reference and bit for bit against its other twin,
launched two or three times; then the tuner's pick. Run with `pytest -m gpu` on a Hopper GPU."""

from __future__ import annotations

from dataclasses import replace

import pytest
import torch

# the tiny-N tests' nt operands (a Linear's weight), fp8 scales, fp32-reference error, sm_90 check
from test_tiny_n_gemm_gpu import FP8, _err, _operands, _sm90

pytestmark = pytest.mark.gpu


@pytest.mark.skipif(not _sm90(), reason="the twins are offered by the sm_90 mid-M model")
@pytest.mark.parametrize("dtype", [torch.bfloat16, FP8], ids=["bf16", "fp8"])
@pytest.mark.parametrize("mnk", [(128, 2304, 16384), (256, 2304, 16384), (200, 2200, 5000)])
def test_every_reduce_apart_twin_matches_reference_and_its_one_launch_twin(mnk, dtype) -> None:
    from harness_kernels.triton.gemm import build_launch, prepare_matmul
    from harness_kernels.triton.gemm_candidates import candidate_configs
    from harness_kernels.triton.gemm_operands import check_operands
    from harness_kernels.triton.gemm_target import kernel_target

    m, n, k = mnk
    a, b, scales = _operands(m, n, k, dtype)
    dev = kernel_target(a.device)
    p = check_operands(a, b, None, scales.get("a_scale"), scales.get("b_scale"), "tf32", dev)
    listed = candidate_configs("full", m, n, k, dtype.itemsize, 2, dev)
    cfgs = [c for c in listed if c.reduce_apart]
    if not cfgs:  # not offered here (the model gate): the first two split configs summed apart
        cfgs = [replace(c, reduce_apart=True) for c in listed if c.split_k > 1][:2]
    assert cfgs
    for cfg in cfgs:
        apart = build_launch(p, cfg, dev)
        one = build_launch(p, replace(cfg, reduce_apart=False), dev)
        apart.bind_compiled()  # the direct launches the sweep makes
        outs = []
        for _ in range(2):
            apart.out.fill_(float("nan"))
            outs.append(apart().clone())
            torch.cuda.synchronize()
        assert _err(outs[0], a, b, scales) < 2e-2, (mnk, cfg)
        assert torch.equal(outs[0], outs[1]), (mnk, cfg)
        assert torch.equal(outs[0], one()), (mnk, cfg)  # the same sums in the same order
        print(mnk, dtype, cfg.block_m, cfg.block_n, cfg.split_k, apart.config["sum_programs"])
    tuned = prepare_matmul(a, b, **scales)
    assert _err(tuned(), a, b, scales) < 2e-2
    # the `tl` tuner's timings by candidate name (a Gluon pick records its own, as a list)
    times = tuned.config.get("candidates", {})
    times = times if isinstance(times, dict) else {}
    print(mnk, dtype, "picked", tuned.config.get("kernel"), tuned.config.get("tune_key"))
    for name, ms in sorted(times.items(), key=lambda kv: kv[1]):
        print(f"  {ms * 1000:8.1f} us  {name}")


@pytest.mark.skipif(not _sm90(), reason="the Gluon GEMM is sm_90 only")
@pytest.mark.parametrize("dtype", [torch.bfloat16, FP8], ids=["bf16", "fp8"])
@pytest.mark.parametrize("mnk", [(128, 2304, 16384), (256, 2304, 16384), (200, 2304, 4096)])
def test_every_gluon_split_twin_matches_reference(mnk, dtype) -> None:
    """The Gluon GEMM's split-K twins (gemm_gluon.split_twins: fp32 partials, the same second
    launch; in_place_twins: summed by each tile slice's last unit), pinned one by one: right
    against fp32, the same bits on every launch (three: an in-place twin's counters must be back
    at zero after each), and an in-place twin the same bits as its twin summed apart."""
    from harness_kernels.triton.gemm_gluon import (
        config_name,
        gluon_gemm_configs,
        in_place_twins,
        prepare_gluon_matmul,
    )

    m, n, k = mnk
    a, b, scales = _operands(m, n, k, dtype)
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    out_bytes = 2
    twins = [
        c
        for c in gluon_gemm_configs(m, n, k, dtype.itemsize, out_bytes, sms)
        if c.get("SPLIT_K", 1) > 1
    ]
    twins += in_place_twins(twins)  # not offered to the tuner, but pinned here
    assert twins and any(c.get("SUM_IN_PLACE") for c in twins)
    apart_bits = {}
    for cfg in twins:
        launch = prepare_gluon_matmul(a, b, config=cfg, **scales)
        outs = []
        for _ in range(3):
            launch.out.fill_(float("nan"))
            outs.append(launch().clone())
            torch.cuda.synchronize()
        assert _err(outs[0], a, b, scales) < 2e-2, (mnk, config_name(cfg))
        assert torch.equal(outs[0], outs[1]), (mnk, config_name(cfg))
        assert torch.equal(outs[0], outs[2]), (mnk, config_name(cfg))
        name = config_name(cfg)
        if cfg.get("SUM_IN_PLACE"):  # the same sums in the same order as the second launch
            assert torch.equal(outs[0], apart_bits[name[:-1]]), (mnk, name)
        else:
            apart_bits[name] = outs[0]
        print(
            mnk, dtype, config_name(cfg), launch.config["num_programs"], launch.config["epilogue"]
        )
    tuned = prepare_gluon_matmul(a, b, **scales)
    assert _err(tuned(), a, b, scales) < 2e-2
    print(mnk, dtype, "Gluon tuner's pick", config_name_of(tuned.config))
    for name, ms in sorted(tuned.config.get("tune_timings_ms", {}).items(), key=lambda kv: kv[1]):
        print(f"  {ms * 1000:8.1f} us  {name}")


def config_name_of(record: dict) -> str:
    """A launch record's tile as the candidates are named (split included)."""
    pp = "pp" if record["schedule"] == "ping-pong" else ""
    split = f"k{record['split_k']}" if record.get("split_k", 1) > 1 else ""
    return f"{record['block_m']}x{record['block_n']}s{record['num_stages']}{pp}{split}"
