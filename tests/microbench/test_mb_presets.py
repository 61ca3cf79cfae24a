"""The microbenchmark and ladder presets cover what they claim (point counts are checked for
every preset in tests/test_sweeps.py)."""

from omegaconf import OmegaConf

from harness.config import compose_run_config
from harness.device import DeviceInfo
from harness.providers import load_all
from harness.providers.own_triton import ATTENTION_RUNGS, GEMM_RUNGS, _provider_name
from harness.sweep import expand

H200 = DeviceInfo(
    "cuda", 0, "nvidia", "NVIDIA H200", None, "sm_90", (9, 0), 132, 60 << 20, 141 << 30, None, None
)


def points(name):
    cfg = compose_run_config([f"sweep={name}"])
    return cfg, expand(OmegaConf.to_container(cfg.sweep.groups), load_all())


def test_ladder_has_every_rung_and_each_runs_on_hopper():
    _, pts = points("ladder")
    registry = load_all()
    gemm = {(p.problem.m, p.provider) for p in pts if p.problem.op == "gemm"}
    every = {_provider_name(v) for v in GEMM_RUNGS} | {"cublas"}
    # the wave tiles are offered at N 4608, not at 6144 or 8192 (no-wave-tiles would time "full")
    waves = "own-triton-no-wave-tiles"
    # a capped tie (the tie rules' rungs' one difference) needs a GEMM that reaches the power
    # cap: M 8192
    ties = {"own-triton-burst-ties", "own-triton-tl-ties"}
    assert {prov for mm, prov in gemm if mm == 16} == every - {waves, *ties}
    # bf16 nn at M 8192 is offered no swapped config: there no-swap-ab would time "full" again
    assert {prov for mm, prov in gemm if mm == 8192} == every - {"own-triton-no-swap-ab", waves}
    assert {prov for mm, prov in gemm if mm == 512} == {"own-triton", waves, "cublas"}
    attn = {p.provider for p in pts if p.problem.op == "attention"}
    from harness_kernels.cutlass.fmha import WS_FEATURES

    from harness.providers.own_gluon import RUNGS as GLUON_RUNGS
    from harness.providers.own_gluon import provider_name as gluon_name

    cute_rungs = {f"own-cutlass-{k}" for k in WS_FEATURES} | {"own-cutlass-sm90"}
    gluon_rungs = {gluon_name(r) for r in GLUON_RUNGS}
    own_rungs = {_provider_name(v) for v in ATTENTION_RUNGS} | cute_rungs | gluon_rungs
    assert attn == own_rungs | {"sdpa-cudnn"}
    phases = {(p.problem.phase, p.problem.causal) for p in pts if p.problem.op == "attention"}
    assert phases == {("prefill", False), ("prefill", True), ("decode", True)}
    for p in pts:  # no rung is listed where it would only be skipped
        assert registry.get(p.problem.op, p.provider).supports(p.problem, H200) is None, p.label()


def test_bandwidth_probe_spans_4k_to_4g_reads():
    _, pts = points("probes_bandwidth")
    sizes = sorted(p.problem.working_set_bytes for p in pts)
    assert sizes[0] == 4096 and sizes[-1] == 4 << 30
    assert {p.problem.metric for p in pts} == {"read"}
    assert all(p.problem.traffic_bytes >= 3 << 30 for p in pts)  # every call moves >= 3 GiB


def test_latency_probe_levels_hops_and_hot_l2():
    cfg, pts = points("probes_latency")
    assert cfg.protocol.l2 == "hot"
    sizes = {p.problem.working_set_bytes: p.problem for p in pts}
    assert min(sizes) == 4096 and max(sizes) == 4 << 30
    for ws, p in sizes.items():
        assert p.stride_bytes >= 128  # whole cache lines: no two hops share a line
        if ws <= 64 << 10:  # L1 sets: the cold first lap is < 0.1% of the hops
            assert p.hops >= 1000 * p.slots
