"""Own CUTLASS kernels on a GPU against fp32 references: every GEMM config (both layouts, odd M,
split-K re-launches, CUDA-graph replay), the tuned provider, and the FMHA (causal or not, GQA,
q_len < kv_len). Run: TRITON_INTERPRET=0 pytest -m gpu tests/cutlass"""

from __future__ import annotations

import pytest
import torch
from harness_kernels.launch import Launch

from harness.device import get_device
from harness.problems import AttentionProblem, GemmProblem
from harness.problems.attention import attention_reference
from harness.providers import load_all

pytestmark = pytest.mark.gpu


def _cc() -> tuple[int, int]:
    return torch.cuda.get_device_capability() if torch.cuda.is_available() else (0, 0)


def _require(spec) -> None:
    """Skip when `spec` is neither cached nor buildable here (a GPU box without CUTLASS headers
    runs only what was prebuilt and carried: python -m harness_kernels.cutlass.prebuild)."""
    from harness_kernels.cutlass import build

    try:
        build.build(spec)
    except build.BuildError as e:
        if build.toolchain_problem() is None:
            raise
        pytest.skip(f"{spec.label} not in the carried cache: {e}")


def _rel(out: torch.Tensor, ref: torch.Tensor) -> float:
    return ((out.float() - ref.float()).norm() / ref.float().norm()).item()


def _worst_row(out: torch.Tensor, ref: torch.Tensor) -> float:
    """The largest relative error of one output row (over head_dim): a wrong row at a tile's
    edge hides in _rel's whole-tensor norm (one row in 8,000 comes out near 0.01)."""
    err = (out.float() - ref.float()).norm(dim=-1)
    return (err / ref.float().norm(dim=-1).clamp_min(1e-6)).max().item()


def _configs():
    from harness_kernels.cutlass.gemm import CONFIGS

    return list(CONFIGS)


@pytest.mark.parametrize("name", _configs())
@pytest.mark.parametrize("layout", ["nt", "nn"])
@pytest.mark.parametrize(
    "mnk", [(1, 1024, 512), (37, 776, 1032), (300, 1024, 2048), (1000, 2048, 512)]
)
def test_gemm_config_matches_fp32(name, layout, mnk):
    from harness_kernels.cutlass.gemm import CONFIGS, RunOptions, prepare_gemm

    config = CONFIGS[name]
    if _cc() < config.min_cc:
        pytest.skip(f"{name} needs sm_{config.min_cc[0]}{config.min_cc[1]}")
    if why := config.unbuildable("bf16", layout == "nt"):
        pytest.skip(f"{name} has no bf16 {layout} library: {why}")
    _require(config.spec("bf16", layout == "nt"))
    m, n, k = mnk
    problem = GemmProblem(m=m, n=n, k=k, dtype="bf16", layout=layout)
    inputs = problem.make_inputs(0, "randn", torch.device("cuda"))
    ref = problem.reference(inputs)
    modes = [RunOptions()]
    if config.streamk:
        modes += [RunOptions("split-k", 3), RunOptions("stream-k"), RunOptions("data-parallel")]
        # the peers' partials added at once (atomics) rather than in turn
        modes += [RunOptions("split-k", 3, reduction="nondeterministic")]
        modes += [RunOptions("stream-k", reduction="nondeterministic")]
    if config.kernel == "sm90":  # the persistent scheduler's raster orders, with a swizzle
        modes += [RunOptions(swizzle=4, raster="along-m"), RunOptions(swizzle=2, raster="along-n")]
    for options in modes:
        launch = prepare_gemm(inputs["a"], inputs["b"], config, options=options)
        assert isinstance(launch, Launch)  # the one launch protocol (harness_kernels.launch)
        for _ in range(3):  # re-launches: split-K flags must be re-zeroed every time
            out = launch()
        torch.cuda.synchronize()
        assert _rel(out, ref) < 1e-2, (name, options)


def _tf32_configs() -> list[str]:
    """The configs a tf32 tuning of the gemm_llama_lowp shapes can pick (M 128, 1024, 8192)."""
    from harness_kernels.cutlass.gemm_tune import sm90_candidates

    names = {c.name for m in (128, 1024, 8192) for c, _ in sm90_candidates(m, 4096, 4096, "tf32")}
    return sorted(names)


@pytest.mark.parametrize("name", _tf32_configs())
@pytest.mark.parametrize("layout", ["nt", "nn"])
@pytest.mark.parametrize("mnk", [(37, 776, 1032), (300, 1024, 2048)])
def test_tf32_gemm_config_matches_fp32(name, layout, mnk):
    """fp32 in and out on TF32 tensor cores; nn runs CUTLASS's register-A mainloop."""
    from harness_kernels.cutlass.gemm import CONFIGS, RunOptions, prepare_gemm

    if _cc() < (9, 0):
        pytest.skip("needs sm_90")
    config = CONFIGS[name]
    _require(config.spec("tf32", layout == "nt"))
    m, n, k = mnk
    problem = GemmProblem(m=m, n=n, k=k, dtype="tf32", layout=layout)
    inputs = problem.make_inputs(0, "randn", torch.device("cuda"))
    ref = problem.reference(inputs)
    options = [RunOptions(), *([RunOptions("split-k", 3)] if config.streamk else [])]
    for option in options:
        launch = prepare_gemm(inputs["a"], inputs["b"], config, options=option)
        for _ in range(3):
            out = launch()
        torch.cuda.synchronize()
        assert out.dtype == torch.float32
        assert _rel(out, ref) < 5e-3, (name, option)  # tf32's 10-bit mantissa, fp32 sums


def test_gemm_replays_in_a_cuda_graph():
    from harness_kernels.cutlass.gemm import CONFIGS, RunOptions, prepare_gemm

    if _cc() < (9, 0):
        pytest.skip("needs sm_90")
    problem = GemmProblem(m=8, n=4096, k=4096, dtype="bf16", layout="nt")
    _require(CONFIGS["sm90-swapab-128x16"].spec("bf16", True))
    inputs = problem.make_inputs(0, "randn", torch.device("cuda"))
    launch = prepare_gemm(
        inputs["a"], inputs["b"], CONFIGS["sm90-swapab-128x16"], options=RunOptions("split-k", 4)
    )
    launch()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        launch()
    launch.out.zero_()
    for _ in range(3):
        graph.replay()
    torch.cuda.synchronize()
    assert _rel(launch.out, problem.reference(inputs)) < 1e-2


@pytest.mark.parametrize(
    "problem",
    [
        GemmProblem(m=1, n=4096, k=4096, dtype="bf16", layout="nt"),
        GemmProblem(m=128, n=6144, k=4096, dtype="bf16", layout="nt"),
        GemmProblem(m=4096, n=4096, k=4096, dtype="fp16", layout="nn"),
        GemmProblem(m=256, n=4096, k=4096, dtype="fp8_e4m3", layout="nt"),
        GemmProblem(m=128, n=4096, k=4096, dtype="tf32", layout="nn"),
        GemmProblem(m=1024, n=4096, k=4096, dtype="tf32", layout="nt"),
    ],
    ids=lambda p: p.label(),
)
def test_tuned_provider_is_correct(problem):
    if _cc() < (9, 0):
        pytest.skip("needs sm_90")
    from harness_kernels.cutlass.gemm_tune import sm90_candidates

    for config, _ in sm90_candidates(problem.m, problem.n, problem.k, problem.dtype):
        _require(config.spec(problem.dtype, problem.layout == "nt"))
    provider = load_all().get("gemm", "own-cutlass")
    device = get_device("cuda")
    assert provider.why_not(problem, device) is None
    inputs = problem.make_inputs(0, "randn", torch.device("cuda"))
    prepared = provider.prepare(problem, inputs, device)
    out = prepared.run()
    torch.cuda.synchronize()
    assert problem.check(out, problem.reference(inputs)).ok, prepared.config
    assert prepared.config["variant"].startswith("sm90-")
    # the GPU that timed the tuner's choice (this one where it tuned here; a carried tune cache
    # may name another machine's, or none): harness gaps reads it to tell a state of this GPU from
    # another machine's
    if prepared.config["tune_source"] == "tuned":
        assert prepared.config["tuned_on"] == device.uuid, prepared.config


@pytest.mark.parametrize(
    "shape",
    [
        (1, 4, 4, 128, 128, 128),
        (2, 8, 2, 256, 256, 128),
        (1, 32, 8, 384, 1024, 128),
        (2, 4, 1, 256, 512, 64),
        (1, 8, 2, 256, 768, 256),  # the warp-specialized kernel alone takes head_dim 256
        # and it alone takes partial tiles (TMA's zero fill, the last KV tile masked)
        (1, 8, 2, 200, 333, 128),
        (2, 4, 4, 1000, 1000, 64),
        (1, 8, 2, 77, 300, 256),
        (1, 4, 2, 1, 333, 128),  # one query row: a tile of 127 (or 191) rows past q_len
        (1, 4, 2, 33, 50, 256),  # fewer keys than one 64- or 80-key tile
        (1, 4, 2, 77, 300, 64),  # one partial 192-row tile; the last 128-key tile partial
    ],
)
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize(
    "kernel",
    [
        "sm80",
        "sm90",
        "fa3",
        "fa3-no-pingpong",
        "fa3-no-overlap",
        "fa3-no-pingpong-no-overlap",
        "fa3-not-persistent",
        "fa3-no-st16",
        "fa3-static",
        "fa3-exp-emu",
        "fa3-tiles",
        "fa3-t128",
    ],
)
def test_fmha_matches_fp32(shape, causal, kernel):
    if _cc() < ((8, 0) if kernel == "sm80" else (9, 0)):
        pytest.skip(f"needs {kernel}")
    from harness_kernels.cutlass.fmha import BLOCK_M, BLOCK_N, WS_FEATURES, fmha_spec, head_dims

    problem = AttentionProblem(*shape, causal=causal, dtype="bf16")
    if problem.head_dim not in head_dims(kernel):
        pytest.skip(f"{kernel} is not built for head_dim {problem.head_dim}")
    if kernel not in WS_FEATURES and (problem.q_len % BLOCK_M or problem.kv_len % BLOCK_N):
        pytest.skip(f"{kernel} takes no partial tiles")
    _require(fmha_spec("bf16", problem.head_dim, kernel, causal=causal, q_len=problem.q_len))
    name = "own-cutlass" if kernel == "sm80" else f"own-cutlass-{kernel}"
    provider = load_all().get("attention", name)
    device = get_device("cuda")
    assert provider.why_not(problem, device) is None
    inputs = problem.make_inputs(0, "randn", torch.device("cuda"))
    prepared = provider.prepare(problem, inputs, device)
    assert isinstance(prepared.run, Launch)  # the one launch protocol (harness_kernels.launch)
    out = prepared.run()
    torch.cuda.synchronize()
    ref = attention_reference(inputs["q"], inputs["k"], inputs["v"], causal)
    assert _rel(out, ref) < 2e-2, prepared.config
    assert _worst_row(out, ref) < 5e-2, prepared.config


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("head_dim", [64, 128, 256])
@pytest.mark.parametrize("kernel", ["fa3", "fa3-tiles", "fa3-t128"])
def test_fmha_dynamic_schedule_covers_every_tile_launch_after_launch(causal, head_dim, kernel):
    """fa3 (HK_DYNAMIC) with more tiles than SMs (the atomic counter hands out all but the first
    grid's worth): every launch writes every output row, so the counters went back to 0 at the
    end of the launch before. The output is poisoned with NaN between launches. fa3 and
    fa3-tiles run it on partial tiles (2048 rows in 192-row tiles at D 64, keys in 176 and
    80), fa3-t128 on 128x128 (128x64)."""
    if _cc() < (9, 0):
        pytest.skip("needs sm_90")
    from harness_kernels.cutlass.fmha import fmha_spec

    problem = AttentionProblem(2, 32, 8, 2048, 2048, head_dim, causal=causal, dtype="bf16")
    _require(fmha_spec("bf16", head_dim, kernel, causal=causal, q_len=problem.q_len))
    provider = load_all().get("attention", f"own-cutlass-{kernel}")
    device = get_device("cuda")
    inputs = problem.make_inputs(0, "randn", torch.device("cuda"))
    prepared = provider.prepare(problem, inputs, device)
    assert prepared.config["dynamic"] is True
    ref = attention_reference(inputs["q"], inputs["k"], inputs["v"], causal)
    for _ in range(3):
        out = prepared.run()
        torch.cuda.synchronize()
        assert _rel(out, ref) < 2e-2, prepared.config
        assert _worst_row(out, ref) < 5e-2, prepared.config
        out.fill_(float("nan"))
