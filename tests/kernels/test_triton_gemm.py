"""CPU tests of the own Triton GEMM (kernels/triton/gemm.py) under the Triton interpreter: every
launch path against the fp32 reference (dtypes, rungs, split-K, swapped and transposed operands),
the tuner's choice, and the GPU smoke test run apart. The candidate spaces are in
test_triton_gemm_candidates.py, stream-K and split-K plans in test_triton_gemm_split.py."""

from __future__ import annotations

import os

os.environ.setdefault("TRITON_INTERPRET", "1")

import subprocess  # noqa: E402
import sys  # noqa: E402
from dataclasses import replace  # noqa: E402

import pytest  # noqa: E402
import torch  # noqa: E402
from harness_kernels.triton import gemm_tune  # noqa: E402
from harness_kernels.triton.gemm import (  # noqa: E402
    RUNGS,
    build_launch,
    prepare_matmul,
)
from harness_kernels.triton.gemm_configs import GemmConfig  # noqa: E402
from harness_kernels.triton.gemm_operands import check_operands  # noqa: E402
from harness_kernels.triton.gemm_target import kernel_target  # noqa: E402
from triton_gemm_cases import (  # noqa: E402
    DTYPE_CASES,
    FP8,
    K_FOR,
    TOL,
    _operands,
    _reference,
    _rel_err,
    _run,
    needs_interpreter,
)

pytestmark = pytest.mark.usefixtures("fresh_gemm_tune")


@needs_interpreter
@pytest.mark.parametrize("m", [1, 7, 33])
@pytest.mark.parametrize("b_col", [False, True], ids=["b-row", "b-col"])
@pytest.mark.parametrize("dtype,precision", DTYPE_CASES)
def test_matches_fp32_reference(dtype, precision, b_col, m):
    n, k = 40, K_FOR[dtype]
    a, b, scales = _operands(m, n, k, dtype, b_col)
    launch = prepare_matmul(a, b, fp32_precision=precision, **scales)
    out = _run(launch)
    expected_dtype = torch.bfloat16 if dtype == FP8 else dtype
    assert out.shape == (m, n) and out.dtype == expected_dtype
    tol = TOL[precision] if dtype == torch.float32 else TOL[dtype]
    assert _rel_err(out, _reference(a, b, scales)) < tol
    assert launch.config["b_layout"] == ("col" if b_col else "row")
    assert launch.config["tuned"] is False and launch.config["candidates_tried"] == 0


@needs_interpreter
@pytest.mark.parametrize("rung", RUNGS)
@pytest.mark.parametrize("m", [1, 33])
def test_every_rung_is_correct_and_removes_its_feature(rung, m):
    a, b, _ = _operands(m, 40, 128, torch.bfloat16, b_col=True)
    launch = prepare_matmul(a, b, rung=rung)
    assert _rel_err(_run(launch), _reference(a, b, {})) < TOL[torch.bfloat16]
    cfg = launch.config
    assert cfg["variant"] == rung  # the rung's stored provider_config key
    assert cfg["tma"] == (rung != "no-tma")
    assert cfg["persistent"] == (rung != "not-persistent")
    assert cfg["tensor_cores"] == (rung != "no-tensor-cores")
    assert (cfg["num_stages"] == 1) == (rung == "no-pipeline")
    if rung == "not-persistent":
        assert cfg["num_programs"] == cfg["units"]
    if m == 1:  # two output tiles on four pretend SMs: split-K unless the rung removes it
        assert (cfg["split_k"] > 1) == (rung != "no-splitk")


@needs_interpreter
def test_fp32_ieee_is_exact_to_fp32_rounding():
    a, b, _ = _operands(33, 40, 52, torch.float32, b_col=False)
    launch = prepare_matmul(a, b, fp32_precision="ieee")
    assert launch.config["input_precision"] == "ieee"
    torch.testing.assert_close(_run(launch), a @ b, rtol=1e-5, atol=1e-5)


@needs_interpreter
@pytest.mark.parametrize("split_k", [2, 3, 4])
@pytest.mark.parametrize("tma", [False, True], ids=["ptr", "tma"])
@pytest.mark.parametrize("persistent", [False, True], ids=["grid", "persistent"])
@pytest.mark.parametrize("dtype", [torch.float16, FP8], ids=["fp16", "fp8"])
def test_reduce_apart_sums_the_same_bits_as_the_one_launch_split(split_k, tma, persistent, dtype):
    """The second launch (gemm_reduce_kernel.py) sums the parts in split order, as the last unit
    does in one launch: the same bits, with fp8's scales applied once, by the sum."""
    a, b, scales = _operands(20, 40, 72 if dtype != FP8 else 160, dtype, b_col=True)
    a_scale, b_scale = scales.get("a_scale"), scales.get("b_scale")
    p = check_operands(a, b, None, a_scale, b_scale, "tf32", kernel_target(None))
    cfg = GemmConfig(
        16,
        32,
        16 if dtype != FP8 else 32,
        split_k=split_k,
        tma=tma,
        persistent=persistent,
        group_m=2,
    )
    one = build_launch(p, cfg, kernel_target(None))
    apart = build_launch(p, replace(cfg, reduce_apart=True), kernel_target(None))
    assert apart._args[6] is None and apart.config["sum_programs"] == 4  # 2x2 tiles, 1 chunk
    out = _run(apart).clone()
    assert _rel_err(out, _reference(a, b, scales)) < TOL[dtype]
    assert torch.equal(out, _run(one))
    assert torch.equal(_run(apart), out)  # a second launch overwrites with the same bits


def test_reduce_apart_needs_a_split():
    a, b, _ = _operands(20, 40, 72, torch.float16, b_col=True)
    p = check_operands(a, b, None, None, None, "tf32", kernel_target(None))
    for cfg in (
        GemmConfig(16, 32, 16, reduce_apart=True),
        GemmConfig(16, 32, 16, stream_k=True, reduce_apart=True),
    ):
        with pytest.raises(ValueError, match=r"it needs split_k > 1"):
            build_launch(p, cfg, kernel_target(None))


@needs_interpreter
@pytest.mark.parametrize("split_k", [2, 3, 4])
@pytest.mark.parametrize("tma", [False, True], ids=["ptr", "tma"])
@pytest.mark.parametrize("persistent", [False, True], ids=["grid", "persistent"])
def test_split_k_reduction_is_deterministic_and_resets_counters(split_k, tma, persistent):
    # K=72: 5 K tiles of 16, so some splits are uneven and split 4 owns a single tile.
    a, b, _ = _operands(20, 40, 72, torch.float16, b_col=True)
    p = check_operands(a, b, None, None, None, "tf32", kernel_target(None))
    cfg = GemmConfig(16, 32, 16, split_k=split_k, tma=tma, persistent=persistent, group_m=2)
    launch = build_launch(p, cfg, kernel_target(None))
    first = _run(launch).clone()
    assert _rel_err(first, _reference(a, b, {})) < TOL[torch.float16]
    counters = launch._args[6]
    assert counters is not None and int(counters.abs().sum()) == 0
    assert torch.equal(_run(launch), first)  # second launch: counters were reset, same bits


@needs_interpreter
def test_epilogue_subtile_and_misaligned_tma_fallback():
    a, b, _ = _operands(33, 64, 56, torch.bfloat16, b_col=True)
    p = check_operands(a, b, None, None, None, "tf32", kernel_target(None))
    launch = build_launch(p, GemmConfig(16, 32, 16, epilogue_subtile=True), kernel_target(None))
    assert launch.config["tma_store"] and launch.config["epilogue_subtile"]
    assert _rel_err(_run(launch), _reference(a, b, {})) < TOL[torch.bfloat16]
    # K=50 bf16: rows are 100 bytes, not a multiple of 16 -> pointer loads, reason recorded.
    a, b, _ = _operands(7, 40, 50, torch.bfloat16, b_col=True)
    launch = prepare_matmul(a, b)
    assert launch.config["tma"] is False and "16-byte" in launch.config["tma_fallback"]
    assert _rel_err(_run(launch), _reference(a, b, {})) < TOL[torch.bfloat16]


@needs_interpreter
def test_launch_only_launches_into_the_same_output():
    a, b, _ = _operands(9, 40, 56, torch.float16, b_col=False)
    launch = prepare_matmul(a, b)
    ptr = launch.out.data_ptr()
    first = launch().clone()
    second = launch()
    assert second is launch.out and second.data_ptr() == ptr and torch.equal(first, second)
    assert prepare_matmul(a, b).config == launch.config  # cached decision, same config


def test_rejects_invalid_problems():
    a, b, scales = _operands(4, 8, 16, torch.float16, b_col=False)
    with pytest.raises(ValueError, match="rung"):
        prepare_matmul(a, b, rung="fastest")
    with pytest.raises(ValueError, match=r"\[K, N\]"):
        prepare_matmul(a, b.t())
    with pytest.raises(ValueError, match="share"):
        prepare_matmul(a, b.float())
    with pytest.raises(ValueError, match="row- or column-major"):
        prepare_matmul(a, torch.randn(16, 16).half()[:, ::2])
    a8, b8, scales = _operands(4, 8, 16, FP8, b_col=True)
    with pytest.raises(ValueError, match="a_scale"):
        prepare_matmul(a8, b8)
    with pytest.raises(ValueError, match="only for float8"):
        prepare_matmul(a, b, **scales)
    with pytest.raises(ValueError, match="fp32_precision"):
        prepare_matmul(a.float(), b.float(), fp32_precision="bf16")


def test_tuner_picks_fastest_correct_config_and_caches(monkeypatch):
    """tune_or_lookup with fake launches: wrong results are rejected, the fastest wins, and a
    second call for the same key neither builds nor times anything."""
    ref = torch.ones(2, 2)
    times = {16: 3.0, 32: 1.0, 64: 0.5}  # block_m -> fake ms; 64 is fastest but wrong

    class FakeLaunch:
        def __init__(self, cfg):
            self.cfg, self.out = cfg, torch.empty(2, 2)

        def __call__(self):
            self.out.fill_(2.0 if self.cfg.block_m == 64 else 1.0)
            return self.out

    built = []

    def build(cfg):
        built.append(cfg)
        return FakeLaunch(cfg)

    monkeypatch.setattr(gemm_tune, "bench_cold", lambda fn, device: times[fn.cfg.block_m])
    cands = [GemmConfig(bm, 32, 16) for bm in (16, 32, 64)]
    with pytest.warns(UserWarning, match="rejected 1 config"):
        result = gemm_tune.tune_or_lookup(("k",), cands, build, lambda: ref, 1e-3)
    assert result.config.block_m == 32 and result.tuned and result.candidates_tried == 3
    assert len(result.rejected) == 1 and "wrong result" in next(iter(result.rejected.values()))
    again = gemm_tune.tune_or_lookup(("k",), [replace(cands[0], block_n=64)], build, None, 0.0)
    assert again is result and len(built) == 3


# Run by the GPU test in a fresh process without TRITON_INTERPRET (real JIT, real tuning).
_GPU_SMOKE = """
import gc
import torch
from harness_kernels.triton.gemm import RUNGS, prepare_matmul
torch.manual_seed(0)
dev = "cuda"
fp8 = torch.float8_e4m3fn
for m, n, k in [(1, 4096, 4096), (7, 1000, 520), (300, 1024, 768), (2048, 2048, 2048)]:
    for dtype in (torch.bfloat16, torch.float16, torch.float32, fp8):
        if dtype == fp8 and torch.cuda.get_device_capability() < (8, 9):
            continue
        a = torch.randn(m, k, device=dev).to(dtype)
        b = torch.randn(n, k, device=dev).to(dtype).t()
        kw = {"a_scale": torch.tensor(0.5, device=dev), "b_scale": torch.tensor(2.0, device=dev)}
        kw = kw if dtype == fp8 else {}
        ref = a.float() @ b.float()
        for rung in RUNGS if dtype == torch.bfloat16 else ("full",):
            launch = prepare_matmul(a, b, rung=rung, **kw)
            # The peak, not the current figure: tuning leaves garbage that the collector may
            # free during the launch, which lowers the current figure without any allocation.
            gc.collect()
            torch.cuda.synchronize()
            before = torch.cuda.memory_allocated()
            torch.cuda.reset_peak_memory_stats()
            out = launch()
            torch.cuda.synchronize()
            peak = torch.cuda.max_memory_allocated()
            assert peak <= before, ("launch allocated memory", rung, before, peak)
            err = ((out.float() - ref).norm() / ref.norm()).item()
            assert err < 2e-2, (m, n, k, dtype, rung, err, launch.config)
            print(m, n, k, dtype, rung, f"{err:.1e}", launch.config.get("tuned_ms"))
"""


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA/ROCm GPU")
def test_gpu_smoke_tunes_and_matches_torch():
    """On a GPU: tune every rung for a few shapes in a process without the interpreter."""
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    proc = subprocess.run(
        [sys.executable, "-c", _GPU_SMOKE],
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]


@needs_interpreter
@pytest.mark.parametrize("split", ["none", "split-k", "stream-k"])
def test_transpose_b_copies_b_each_call_and_leaves_it_alone(split):
    a, b, _ = _operands(33, 40, 52, torch.float32, b_col=False)
    before = b.clone()
    p = check_operands(a, b, None, None, None, "tf32", kernel_target(None))
    extra = {"none": {}, "split-k": {"split_k": 2}, "stream-k": {"stream_k": True}}[split]
    launch = build_launch(
        p, GemmConfig(16, 32, 16, transpose_b=True, group_m=2, **extra), kernel_target(None)
    )
    assert launch.config["b_layout"] == "row, copied K-major per call"
    assert _rel_err(_run(launch), _reference(a, b, {})) < TOL["tf32"]
    b.mul_(-1)  # a new B: the next call copies it again
    assert _rel_err(_run(launch), _reference(a, b, {})) < TOL["tf32"]
    assert torch.equal(b, -before)


@needs_interpreter
@pytest.mark.parametrize("split", ["none", "split-k", "stream-k"])
def test_swap_ab_computes_c_from_its_transpose(split):
    """swap_ab tiles C^T = B^T A^T and writes C in place: every element right, split or not, the
    output [M, N] row-major, and B read where it lies (no copy)."""
    a, b, _ = _operands(33, 40, 52, torch.float32, b_col=False)
    p = check_operands(a, b, None, None, None, "tf32", kernel_target(None))
    extra = {"none": {}, "split-k": {"split_k": 2}, "stream-k": {"stream_k": True}}[split]
    launch = build_launch(
        p, GemmConfig(16, 32, 16, swap_ab=True, group_m=2, **extra), kernel_target(None)
    )
    assert launch.config["b_layout"].startswith("row, as wgmma's A operand")
    assert not launch.config["tma"]
    out = _run(launch)
    assert out.shape == (33, 40) and out.stride() == (40, 1)
    assert _rel_err(out, _reference(a, b, {})) < TOL["tf32"]


@pytest.mark.parametrize("m", [5, 8])  # at 8 fp32 columns C^T's rows are 32 bytes: TMA-storable
@pytest.mark.parametrize("split", [1, 2])
def test_swap_ab_with_a_column_major_b_stores_c_in_place(split, m):
    """nt decode swapped: C^T = W A^T with both operands K-major, C^T written into C's [M, N]
    row-major layout by pointers (split-K too): never by a TMA store, which would write C^T's
    tiles as if C were [N, M]."""
    a, b, _ = _operands(m, 96, 64, torch.float32, b_col=True)
    p = check_operands(a, b, None, None, None, "ieee", kernel_target(None))
    cfg = GemmConfig(64, 16, 16, swap_ab=True, split_k=split, group_m=2)
    launch = build_launch(p, cfg, kernel_target(None))
    assert launch.config["b_layout"].startswith("col, the weight as wgmma's A operand")
    assert not launch.config["tma_store"]
    out = _run(launch)
    assert out.shape == (m, 96) and out.stride() == (96, 1)
    assert _rel_err(out, _reference(a, b, {})) < TOL["ieee"]


@needs_interpreter
@pytest.mark.parametrize("split", [1, 4])
def test_a_16_wide_tile_computes_an_8_column_c(split):
    """N 8 in a 16-wide tile: the loads past N read zeros and the store leaves nothing past N
    (C is [M, 8], row stride 8), split or not; ragged M and K."""
    a, b, _ = _operands(33, 8, 200, torch.float32, b_col=True)
    p = check_operands(a, b, None, None, None, "tf32", kernel_target(None))
    launch = build_launch(p, GemmConfig(16, 16, 16, 4, 2, split_k=split), kernel_target(None))
    out = _run(launch)
    assert out.shape == (33, 8) and out.stride() == (8, 1)
    assert _rel_err(out, _reference(a, b, {})) < TOL["tf32"]


@needs_interpreter
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16, FP8], ids=["bf16", "fp16", "fp8"])
@pytest.mark.parametrize("b_col", [False, True], ids=["b-row", "b-col"])
def test_the_fma_dot_matches_the_fp32_reference(dtype, b_col):
    """The no-tensor-cores rung's FMA-dot candidates (NVIDIA: tl.dot over fp32 operands at ieee
    precision, no tensor core): the result within the dtype's tolerance, and the config says
    which math ran. The interpreter upcasts every dot, so whether the GPU build upcasts and runs
    FFMA alone is test_triton_gemm_aot.py's to check."""
    a, b, scales = _operands(33, 40, K_FOR[dtype], dtype, b_col)
    p = check_operands(a, b, None, scales.get("a_scale"), scales.get("b_scale"), "tf32",
                       kernel_target(None))  # fmt: skip
    cfg = GemmConfig(16, 32, 16 if dtype != FP8 else 32, tensor_cores=False, fma_dot=True)
    launch = build_launch(p, cfg, kernel_target(None))
    assert _rel_err(_run(launch), _reference(a, b, scales)) < TOL[dtype]
    assert launch.config["fma_dot"] and not launch.config["tensor_cores"]
    assert launch.config["input_precision"] == "ieee"
