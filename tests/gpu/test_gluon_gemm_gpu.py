"""GPU correctness of the Gluon GEMM (kernels/triton/gemm_gluon_kernel.py) against an fp32
reference, on sm_90: every candidate tile (one and two N parts, 128- and 256-row tiles) with B
row- and column-major, ragged M, N and K (TMA zero-fills the loads and clips the stores), more
tiles than SMs (the persistent loop and its barrier phases across tiles), and a launch repeated.
Run with `pytest -m gpu` on a Hopper GPU."""

from __future__ import annotations

import zlib

import pytest
import torch

pytestmark = pytest.mark.gpu

TOL = {torch.float16: 5e-3, torch.bfloat16: 2e-2}


def _sm90() -> bool:
    return torch.cuda.is_available() and torch.cuda.get_device_capability() == (9, 0)


def _operands(m: int, n: int, k: int, b_is_nk: bool, dtype: torch.dtype):
    gen = torch.Generator(device="cuda").manual_seed(zlib.crc32(repr((m, n, k, b_is_nk)).encode()))
    a = torch.randn(m, k, device="cuda", generator=gen).to(dtype)
    if b_is_nk:
        b = torch.randn(n, k, device="cuda", generator=gen).to(dtype).t()
    else:
        b = torch.randn(k, n, device="cuda", generator=gen).to(dtype)
    return a, b


def _check(out: torch.Tensor, a: torch.Tensor, b: torch.Tensor) -> None:
    ref = a.float() @ b.float()
    err = ((out.float() - ref).norm() / ref.norm()).item()
    assert err < TOL[a.dtype], f"relative error {err:.3g}"


# (M, N, K): the mid-band shape the kernel exists for, ragged edges, many tiles
SHAPES = [(256, 10240, 1024), (200, 1000, 520), (1000, 4096, 4096), (2048, 2048, 256), (77, 96, 64)]


@pytest.mark.skipif(not _sm90(), reason="the Gluon GEMM needs an sm_90 GPU")
@pytest.mark.parametrize("b_is_nk", [True, False], ids=["b_col", "b_row"])
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_every_candidate_matches_reference(shape: tuple, b_is_nk: bool) -> None:
    from harness_kernels.triton.gemm_gluon import gluon_gemm_configs, prepare_gluon_matmul

    a, b = _operands(*shape, b_is_nk, torch.bfloat16)
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    for cfg in gluon_gemm_configs(*shape, 2, 2, sms):
        launch = prepare_gluon_matmul(a, b, config=cfg)
        launch.out.fill_(float("nan"))
        _check(launch(), a, b)


@pytest.mark.skipif(not _sm90(), reason="the Gluon GEMM needs an sm_90 GPU")
@pytest.mark.parametrize("fp8", [False, True], ids=["bf16", "fp8"])
@pytest.mark.parametrize("b_is_nk", [True, False], ids=["b_col", "b_row"])
def test_halves_tiles_reuse_their_buffer_across_tiles(fp8: bool, b_is_nk: bool) -> None:
    """C staged by halves (C_HALVES) through one buffer per consumer: at 2048x4096x512 the 256
    tiles of 128x256 (or 256x128) give each CTA two tiles, so a buffer is refilled for the next
    tile while the last half's store may still read it (session 85's tests had one tile per
    CTA). fp8 reads B K-major only."""
    from harness_kernels.triton.gemm_gluon import gluon_gemm_configs, prepare_gluon_matmul

    if fp8 and not b_is_nk:
        pytest.skip("fp8 wgmma reads B K-major only")
    m, n, k = 2048, 4096, 512
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    if fp8:
        gen = torch.Generator(device="cuda").manual_seed(7)
        a = (torch.randn(m, k, device="cuda", generator=gen) * 4).to(torch.float8_e4m3fn)
        w = (torch.randn(n, k, device="cuda", generator=gen) * 4).to(torch.float8_e4m3fn)
        b, scales = w.t(), dict(a_scale=torch.tensor([0.5], device="cuda"),
                                b_scale=torch.tensor([0.25], device="cuda"))  # fmt: skip
        ref = (a.float() @ w.float().t()) * 0.125
    else:
        a, b = _operands(m, n, k, b_is_nk, torch.bfloat16)
        scales, ref = {}, a.float() @ b.float()
    halves = [c for c in gluon_gemm_configs(m, n, k, a.element_size(), 2, sms) if c.get("C_HALVES")]
    assert halves  # 128x256 and 256x128
    for cfg in halves:
        launch = prepare_gluon_matmul(a, b, config=cfg, **scales)
        launch.out.fill_(float("nan"))
        for _ in range(3):  # repeated launches: no stale half from an earlier tile or launch
            err = ((launch().float() - ref).norm() / ref.norm()).item()
            assert err < (1e-2 if fp8 else TOL[torch.bfloat16]), (cfg, err)


@pytest.mark.skipif(not _sm90(), reason="the Gluon GEMM needs an sm_90 GPU")
@pytest.mark.parametrize("fp8", [False, True], ids=["bf16", "fp8"])
@pytest.mark.parametrize("shape", [(512, 3584, 1024), (200, 1000, 528), (1000, 4608, 4096)])
def test_every_wave_tile_matches_reference(shape: tuple, fp8: bool, monkeypatch) -> None:
    """The wave tiles' N parts (144 = 128 + 16, offered; 112 = 64 + 32 + 16, the kernel's three
    TMA boxes, wgmmas and accumulators, a probe's) in every legal tile, both schedules and
    slices, B column-major (and row-major in bf16), ragged M, N and K among the shapes; fp8
    with scales (passed on an H200 in session 79, `_logs/session79/gluon-wave-gpu-tests.txt`)."""
    from harness_kernels.triton import gemm_gluon

    monkeypatch.setattr(gemm_gluon, "N_PARTS", ((128, 16), (64, 32, 16)))
    m, n, k = shape
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    every = gemm_gluon.gluon_gemm_configs(m, n, k, 1 if fp8 else 2, 2, sms, per_schedule=None)
    assert {c["BLOCK_N"] for c in every} == {144, 112}
    for b_is_nk in (True,) if fp8 else (True, False):
        a, b = _operands(m, n, k, b_is_nk, torch.bfloat16)
        scales: dict = {}
        if fp8:
            # B K-major: w [N, K] row-major, b = w.t()
            a, b = a.to(torch.float8_e4m3fn), b.t().contiguous().to(torch.float8_e4m3fn).t()
            scales = dict(a_scale=torch.tensor([0.5], device="cuda"))
            scales |= dict(b_scale=torch.tensor([0.25], device="cuda"))
        ref = (a.float() @ b.float()) * (0.125 if fp8 else 1.0)
        for cfg in every:
            launch = gemm_gluon.prepare_gluon_matmul(a, b, config=cfg, per_schedule=None, **scales)
            launch.out.fill_(float("nan"))
            err = ((launch().float() - ref).norm() / ref.norm()).item()
            assert err < 2e-2, (gemm_gluon.config_name(cfg), b_is_nk, err)


@pytest.mark.skipif(not _sm90(), reason="the Gluon GEMM needs an sm_90 GPU")
@pytest.mark.parametrize("tiles_per_cta", [1, 2, 3, 5])
def test_pingpong_turns_with_any_tile_count(tiles_per_cta: int) -> None:
    """Ping-pong consumers take alternate tiles of a CTA and their main loops take turns: a CTA
    with an odd tile count leaves consumer 1 a turn short, and K of many more steps than stages
    is where a consumer running ahead would pass a stage barrier on an older fill's parity."""
    import triton
    from harness_kernels.triton.gemm_gluon import gluon_gemm_configs, prepare_gluon_matmul

    sms = torch.cuda.get_device_properties(0).multi_processor_count
    n, k = 512, 4096 + 64 * 3  # 67 K steps
    m = 64 * triton.cdiv(sms * tiles_per_cta, n // 128) - 17  # ragged last row of tiles
    a, b = _operands(m, n, k, True, torch.bfloat16)
    pinned = [
        c
        for c in gluon_gemm_configs(m, n, k, 2, 2, sms)
        if c["PINGPONG"] and (c["BLOCK_M"], c["BLOCK_N"]) == (64, 128)
    ]
    if not pinned:
        pytest.skip("64x128 ping-pong is not a candidate of this shape")
    launch = prepare_gluon_matmul(a, b, config=pinned[0])
    assert launch.config["schedule"] == "ping-pong"
    for _ in range(2):
        launch.out.fill_(float("nan"))
        _check(launch(), a, b)


@pytest.mark.skipif(not _sm90(), reason="the Gluon GEMM needs an sm_90 GPU")
def test_tuned_fp16_and_repeated_launch() -> None:
    from harness_kernels.triton.gemm_gluon import prepare_gluon_matmul

    a, b = _operands(512, 6144, 4096, True, torch.float16)
    launch = prepare_gluon_matmul(a, b)
    assert launch.config["tune_source"] in ("tuned", "cache")
    for _ in range(3):
        launch.out.zero_()
        _check(launch(), a, b)


@pytest.mark.skipif(not _sm90(), reason="the Gluon GEMM needs an sm_90 GPU")
def test_own_triton_full_runs_the_faster_kernel_and_says_which() -> None:
    from harness_kernels.triton.gemm import prepare_matmul

    a, b = _operands(256, 10240, 1024, True, torch.bfloat16)
    launch = prepare_matmul(a, b)
    c = launch.config
    assert c["kernel"] in ("tl", "gluon-ws")
    # the interleaved re-time of the two winners decides (kernel_choice.py)
    faster = "gluon-ws" if c["choice_gluon_ms"] < c["choice_tl_ms"] else "tl"
    assert c["kernel"] == faster and c["choice_source"] in ("timed", "cache")
    # both schedules were timed, and the Gluon choice is the fastest of them (a ~10 us point:
    # below capped_retime.MIN_MS, so no re-time at the power cap reorders them)
    timings = c["gluon_timings_ms"]
    assert any(name.endswith("pp") for name in timings)
    assert any(not name.endswith("pp") for name in timings)
    assert min(timings.values()) == pytest.approx(c["gluon_tuned_ms"], rel=1e-3)
    _check(launch(), a, b)
    tl_only = prepare_matmul(a, b, rung="no-gluon")
    assert "kernel" not in tl_only.config  # the rung never times the Gluon kernel
    _check(tl_only(), a, b)


@pytest.mark.skipif(not _sm90(), reason="the Gluon GEMM needs an sm_90 GPU")
@pytest.mark.parametrize("shape", [(256, 10240, 1024), (200, 1000, 528), (1000, 4096, 4096)])
def test_fp8_every_candidate_matches_reference(shape: tuple) -> None:
    """fp8 e4m3 with per-tensor scales (B K-major, bf16 C): every candidate tile against the
    fp32 product of the dequantised operands, ragged M and N among the shapes."""
    from harness_kernels.triton.gemm_gluon import gluon_gemm_configs, prepare_gluon_matmul

    m, n, k = shape
    gen = torch.Generator(device="cuda").manual_seed(zlib.crc32(repr(shape).encode()))
    a = (torch.randn(m, k, device="cuda", generator=gen) * 4).to(torch.float8_e4m3fn)
    w = (torch.randn(n, k, device="cuda", generator=gen) * 4).to(torch.float8_e4m3fn)
    a_scale = torch.tensor([0.5], device="cuda")
    b_scale = torch.tensor([0.25], device="cuda")
    ref = (a.float() @ w.float().t()) * 0.125
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    for cfg in gluon_gemm_configs(m, n, k, 1, 2, sms):
        launch = prepare_gluon_matmul(a, w.t(), a_scale=a_scale, b_scale=b_scale, config=cfg)
        assert launch.out.dtype == torch.bfloat16
        launch.out.fill_(float("nan"))
        err = ((launch().float() - ref).norm() / ref.norm()).item()
        assert err < 1e-2, (cfg, err)


@pytest.mark.skipif(not _sm90(), reason="the Gluon GEMM needs an sm_90 GPU")
def test_own_triton_fp8_times_the_gluon_kernel_too() -> None:
    """prepare_matmul with fp8 nt operands tunes the Gluon GEMM beside the `tl` kernel."""
    from harness_kernels.triton.gemm import prepare_matmul

    gen = torch.Generator(device="cuda").manual_seed(1)
    a = torch.randn(512, 4096, device="cuda", generator=gen).to(torch.float8_e4m3fn)
    w = torch.randn(6144, 4096, device="cuda", generator=gen).to(torch.float8_e4m3fn)
    one = torch.ones(1, device="cuda")
    launch = prepare_matmul(a, w.t(), a_scale=one, b_scale=one)
    c = launch.config
    assert c["kernel"] in ("tl", "gluon-ws") and c["gluon_timings_ms"], c.get("gluon")
    ref = a.float() @ w.float().t()
    err = ((launch().float() - ref).norm() / ref.norm()).item()
    assert err < 1e-2
