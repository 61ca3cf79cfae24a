"""The flash-attn-4 and flashinfer providers on the CPU: registration, skip reasons with the
import error, what each supports and why not, the API each point takes, and, through stand-in
modules with the libraries' layouts (fake_attention_libs), that their outputs come back in our
layout and pass the fp32-reference check, also through the point engine."""

from __future__ import annotations

import dataclasses
import json

import pytest
import torch
from fake_attention_libs import block, install_fa4, install_flashinfer

from harness.device import DeviceInfo, get_device
from harness.measure.point import measure_point
from harness.measure.protocol import Protocol
from harness.problems import AttentionProblem
from harness.problems.attention import attention_reference, gather_pages
from harness.providers import attention_fa4, attention_flash, attention_flashinfer, load_all
from harness.providers.attention_flashinfer import flashinfer_route, use_tensor_cores


def _nvidia(name: str, cc: tuple[int, int]) -> DeviceInfo:
    arch = f"sm_{cc[0]}{cc[1]}"
    return DeviceInfo(
        "cuda", 0, "nvidia", name, None, arch, cc, 132, 50 << 20, 80 << 30, None, None
    )


H200, A100, B200 = _nvidia("NVIDIA H200", (9, 0)), _nvidia("A100", (8, 0)), _nvidia("B200", (10, 0))
CPU = get_device("cpu")
QUICK = Protocol(min_samples=3, max_samples=10, max_time_s=0.2, warmup_ms=0)
NAMES = ("flash-attn-4", "flashinfer")


def prefill(**kw) -> AttentionProblem:
    args = dict(batch=2, q_heads=4, kv_heads=2, q_len=24, kv_len=24, head_dim=64, causal=True)
    return AttentionProblem(**{**args, **kw})


def decode(**kw) -> AttentionProblem:
    args = dict(batch=3, q_heads=8, kv_heads=2, q_len=1, kv_len=40, head_dim=64, causal=True)
    return AttentionProblem(**{**args, **kw})


def paged(**kw) -> AttentionProblem:
    return decode(**{"kv_layout": "paged", "page_size": 16, **kw})


# Every route of both providers: dense / paged, batch 1 / more, decode / prefill / chunked
# (q_len < kv_len, causal bottom-right), GQA groups 2 and 8, D 64 and 128.
CASES = {
    "prefill-gqa2": prefill(),
    "prefill-b1-noncausal-d128": prefill(batch=1, causal=False, head_dim=128),
    "chunked-b1": prefill(batch=1, q_len=8, kv_len=40),
    "chunked-b2": prefill(q_len=8, kv_len=40),
    "decode-b1": decode(batch=1),
    "decode-b3-gqa4": decode(),
    "decode-gqa8-tensor-cores": decode(kv_heads=1),
    "paged-decode": paged(),
    "paged-decode-gqa8": paged(kv_heads=1),
    "paged-spec-decode-q4": paged(q_len=4, page_size=32),
}


@pytest.fixture
def registry():
    return load_all()


@pytest.fixture(autouse=True)
def fresh_import_checks():
    """Availability is cached per process; each test decides what is importable."""
    for mod in (attention_fa4, attention_flashinfer, attention_flash):
        mod._import_error.cache_clear()
    yield
    for mod in (attention_fa4, attention_flashinfer, attention_flash):
        mod._import_error.cache_clear()


def test_registered_as_nvidia_vendor_providers(registry):
    for name in NAMES:
        p = registry.get("attention", name)
        assert p.family == "vendor" and p.vendors == ("nvidia",) and p.min_cc == (8, 0)
        assert p.why_unavailable(CPU) == "runs on nvidia, not cpu"
    assert "flash-attn" in registry.names("attention")  # flash-attn 2 stays beside them


@pytest.mark.parametrize(
    "name, module, blocked",
    [
        ("flash-attn-4", "flash_attn.cute", ("flash_attn", "flash_attn.cute")),
        ("flashinfer", "flashinfer", ("flashinfer",)),
    ],
)
def test_absent_package_is_a_skipped_row_with_the_import_error(
    registry, monkeypatch, name, module, blocked
):
    block(monkeypatch, *blocked)
    p = registry.get("attention", name)
    why = p.why_unavailable(H200)
    halted = f"import of {module} halted; None in sys.modules"
    assert why == f"{name} not importable (ModuleNotFoundError: {halted})"
    row = measure_point(prefill(), p, H200, QUICK)  # skipped before anything touches a GPU
    assert row["status"] == "skipped" and row["reason"] == why


def test_present_packages_are_available(registry, monkeypatch):
    install_fa4(monkeypatch)
    install_flashinfer(monkeypatch)
    for name in NAMES:
        assert registry.get("attention", name).why_unavailable(H200) is None


def test_fa4_alone_does_not_make_flash_attn_2_available(registry, monkeypatch):
    install_fa4(monkeypatch)  # flash_attn imports, but holds only cute/
    why = registry.get("attention", "flash-attn").why_unavailable(H200)
    assert why.startswith("flash-attn 2 not importable (ImportError: cannot import name")
    assert why.endswith("PyPI has its source only, not built here")


def test_fa4_supports_reasons(registry):
    fa4 = registry.get("attention", "flash-attn-4")
    assert fa4.supports(prefill(), H200) is None
    assert fa4.supports(paged(), H200) is None and fa4.supports(paged(), B200) is None
    assert fa4.supports(decode(head_dim=192), H200) is None
    assert fa4.supports(prefill(dtype="fp32"), H200) == (
        "flash-attn-4 takes fp16/bf16 (fp8 on SM100 only), not fp32"
    )
    assert fa4.supports(paged(), A100) == (
        "flash-attn-4 has no paged KV on SM8x (its interface asserts page_table is None)"
    )
    assert fa4.supports(prefill(), A100) is None
    assert "head_dim 8..128 or 256" in fa4.supports(prefill(head_dim=192), B200)


def test_flashinfer_supports_reasons(registry):
    fi = registry.get("attention", "flashinfer")
    for problem in CASES.values():
        assert fi.supports(problem, H200) is None
    assert fi.supports(decode(dtype="fp32"), H200) == (
        "flashinfer takes fp16/bf16 (and fp8 KV), not fp32"
    )
    assert fi.supports(decode(head_dim=96), H200) == (
        "flashinfer dispatches head_dim (64, 128, 256) (and 512), not 96"
    )


def test_flashinfer_routes_and_tensor_core_rule():
    assert flashinfer_route(paged()) == "batch_decode_paged"
    assert flashinfer_route(paged(q_len=4)) == "batch_prefill_paged"
    assert flashinfer_route(decode(batch=1)) == "single_decode"
    assert flashinfer_route(prefill(batch=1)) == "single_prefill"
    assert flashinfer_route(decode()) == "batch_decode_dense"  # a page per sequence
    assert flashinfer_route(prefill()) == "batch_prefill_ragged"
    assert not use_tensor_cores(decode()) and use_tensor_cores(decode(kv_heads=1))


def test_fa4_split_kv_only_for_decode_on_sm100():
    assert attention_fa4.fa4_num_splits(decode(), H200) == 1  # SM90 asserts num_splits == 1
    assert attention_fa4.fa4_num_splits(decode(), B200) == 0  # FA4's heuristic
    assert attention_fa4.fa4_num_splits(prefill(), B200) == 1


def _prepared(registry, name: str, problem: AttentionProblem, inputs: dict):
    return registry.get("attention", name).prepare(problem, inputs, CPU)


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("name", NAMES)
def test_outputs_in_our_layout_pass_the_reference_check(registry, monkeypatch, name, case):
    fa4, fi = install_fa4(monkeypatch), install_flashinfer(monkeypatch)
    problem = CASES[case]
    inputs = problem.make_inputs(1, "randn", torch.device("cpu"))
    prepared = _prepared(registry, name, problem, inputs)
    out = prepared.output(prepared.run())
    assert out.shape == inputs["q"].shape  # [B, Hq, Sq, D]
    check = problem.check(out, problem.reference(inputs))
    assert check.ok, check.reason
    cfg = prepared.config
    assert cfg["version"] and cfg["prepare_s"] >= cfg["first_call_s"] >= 0
    if name == "flashinfer":
        called = {"batch_decode_dense": "batch_decode_paged"}  # the same wrapper
        assert called.get(cfg["api"], cfg["api"]) == fi.calls[0][0]
        assert cfg["api"] == flashinfer_route(problem)
        assert cfg["backend"] in ("fa2", "fa3") and cfg["kv_layout"] == "NHD"
        if not cfg["api"].startswith("single"):
            assert cfg["plan_s"] >= 0
        if problem.q_len == 1:  # off a GPU the rule picks, and no times are taken
            assert cfg["use_tensor_cores"] == cfg["rule_tensor_cores"] == use_tensor_cores(problem)
            assert "decode_us" not in cfg
    else:
        paged_case = problem.kv_layout == "paged"
        assert cfg["api"].startswith("flash_attn_varlen_func" if paged_case else "flash_attn_func")
        assert fa4.calls[0][1] == {"causal": problem.causal, "num_splits": 1}


@pytest.mark.parametrize("name", NAMES)
def test_ragged_cache_lengths(registry, monkeypatch, name):
    """Sequences of different lengths in one paged cache (the last pages partly used)."""
    install_fa4(monkeypatch)
    install_flashinfer(monkeypatch)
    problem = paged(kv_len=64)
    inputs = problem.make_inputs(2, "randn", torch.device("cpu"))
    inputs["cache_seqlens"] = torch.tensor([64, 17, 1], dtype=torch.int32)
    prepared = _prepared(registry, name, problem, inputs)
    out = prepared.output(prepared.run()).float()
    k = gather_pages(inputs["k_cache"], inputs["block_table"], 64)  # [B, Hkv, 64, D]
    v = gather_pages(inputs["v_cache"], inputs["block_table"], 64)
    for b, n in enumerate([64, 17, 1]):
        ref = attention_reference(
            inputs["q"][b : b + 1], k[b : b + 1, :, :n], v[b : b + 1, :, :n], True
        )
        assert torch.allclose(out[b : b + 1], ref, atol=2e-2), (name, b)


@pytest.mark.parametrize("name", NAMES)
def test_point_engine_checks_and_times_them(registry, monkeypatch, name):
    """measure_point end to end on the CPU (the providers' vendor list widened for the test)."""
    install_fa4(monkeypatch)
    install_flashinfer(monkeypatch)
    provider = dataclasses.replace(registry.get("attention", name), vendors=("nvidia", "cpu"))
    row = measure_point(paged(), provider, CPU, QUICK)
    assert row["status"] == "ok", row["reason"]
    assert row["rel_err"] < row["tolerance"] and row["n_samples"] >= 3
    config = json.loads(row["provider_config"])
    assert {"version", "prepare_s", "first_call_s"} <= set(config)
    if name == "flashinfer":
        assert config["backend"] == "fa2" and config["api"] == "batch_decode_paged"


@pytest.mark.parametrize("fa2_us, pick", [(3.0, "fa2"), (30.0, "fa3")])
def test_paged_prefill_keeps_the_faster_backend_on_a_gpu(monkeypatch, fa2_us, pick):
    """q_len > 1 over pages: "auto" (fa3 on Hopper) and fa2 are both planned, called once and
    timed on a GPU; the faster runs, and provider_config says what "auto" would have run.
    (The times come from a stand-in cold timer: the choice rule is what is tested here.)"""
    import harness_kernels.bench_cold as bench

    made = []

    def make(backend: str):
        made.append(backend)
        resolved = "fa3" if backend == "auto" else backend
        return (lambda: resolved), {"plan_s": 0.0, "backend": resolved}

    times = {"fa3": 10.0, "fa2": fa2_us}  # us
    monkeypatch.setattr(bench, "bench_cold", lambda run, device: times[run()] / 1e3)
    monkeypatch.setattr(attention_flashinfer, "wall_s", lambda fn, device: (fn(), 0.0))
    config: dict = {}
    run = attention_flashinfer._prefill_choice(make, torch.device("cuda"), config)
    assert made == ["auto", "fa2"] and run() == pick
    assert config["backend"] == pick and config["auto_backend"] == "fa3"
    assert config["prefill_us"] == {"fa3": 10.0, "fa2": fa2_us}
    # off a GPU, or where "auto" is already fa2: one wrapper, no times
    for device, auto in ((torch.device("cpu"), "fa3"), (torch.device("cuda"), "fa2")):
        asked = []

        def one(backend: str, auto=auto, asked=asked):
            asked.append(backend)
            return (lambda: auto), {"plan_s": 0.0, "backend": auto}

        config = {}
        run = attention_flashinfer._prefill_choice(one, device, config)
        assert asked == ["auto"] and run() == auto
        assert config["backend"] == config["auto_backend"] == auto
        assert "prefill_us" not in config


def test_paged_prefill_route_plans_auto_off_a_gpu(registry, monkeypatch):
    """Off a GPU the paged prefill route plans one wrapper, backend "auto"."""
    install_fa4(monkeypatch)
    fi = install_flashinfer(monkeypatch)
    problem = paged(q_len=4)
    inputs = problem.make_inputs(1, "randn", torch.device("cpu"))
    prepared = _prepared(registry, "flashinfer", problem, inputs)
    assert [c[0] for c in fi.calls] == ["batch_prefill_paged"]
    cfg = prepared.config
    assert cfg["api"] == "batch_prefill_paged" and cfg["backend"] == cfg["auto_backend"] == "fa3"
    out = prepared.output(prepared.run())
    assert problem.check(out, problem.reference(inputs)).ok
