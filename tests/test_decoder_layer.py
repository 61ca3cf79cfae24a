"""The decoder_layer problem: one layer's decode step from the own kernels, checked whole against
an fp32 layer on the CPU (interpreter, a tiny Llama-shaped model), and its rows beside the
composed step in the report's tables."""

import pandas as pd
import pytest
import torch

from harness import store
from harness.device import DeviceInfo
from harness.problems.decoder_layer import DecoderLayerProblem
from harness.providers import load_all
from harness.report.compose import RowIndex, compose, steps_table
from harness.workloads import models
from harness.workloads.derive import step_items
from harness.workloads.models import ModelConfig
from harness.workloads.presets import get_workload

CPU = DeviceInfo("cpu", 0, "cpu", "cpu", None, "x86_64", None, 2, None, None, None, None)
TINY = ModelConfig("tiny", "none", hidden=256, heads=4, kv_heads=2, head_dim=64,
                   intermediate=512, layers=2, vocab=1000)  # fmt: skip


@pytest.fixture
def tiny(monkeypatch):
    monkeypatch.setitem(models.MODELS, "tiny", TINY)
    return DecoderLayerProblem("tiny", 3, 40, 16)


def _prepared(problem):
    inputs = problem.make_inputs(0, "randn", torch.device("cpu"))
    prepared = load_all().get("decoder_layer", "own-triton").prepare(problem, inputs, CPU)
    return prepared, problem.reference(inputs)


def test_own_layer_matches_the_fp32_layer(tiny):
    tiny.validate()
    prepared, ref = _prepared(tiny)
    check = tiny.check(prepared.output(prepared.run()), ref)
    assert check.ok, check.reason
    assert prepared.config["kernels"] == [
        "add_rmsnorm", "qkv", "rope", "kv_append", "attention", "o", "add_rmsnorm_post",
        "gate_up", "silu_mul", "down",
    ]  # fmt: skip


def test_a_layer_that_skips_the_kv_append_fails_the_check(tiny):
    """Attention then reads the cache slot's old contents for the new token: caught."""
    inputs = tiny.make_inputs(0, "randn", torch.device("cpu"))
    prepared = load_all().get("decoder_layer", "own-triton").prepare(tiny, inputs, CPU)
    ref = tiny.reference(inputs)
    fresh = tiny.make_inputs(0, "randn", torch.device("cpu"))
    for cache in ("k_cache", "v_cache"):  # preparing ran the append once: undo it
        inputs[cache].copy_(fresh[cache])
    launch = prepared.run
    launch.steps = [(name, step) for name, step in launch.steps if name != "kv_append"]
    assert not tiny.check(prepared.output(prepared.run()), ref).ok


def test_work_is_the_sum_of_the_composed_layer(tiny):
    items = [i for i in step_items(TINY, 1, "decode", 3, 40, "bf16", "paged", 16) if i.per_layer]
    assert tiny.flops() == sum(i.flops() * i.count for i in items)
    assert tiny.min_bytes() == sum(i.min_bytes() * i.count for i in items)


def test_moe_models_and_unknown_models_are_refused():
    with pytest.raises(ValueError, match="^model"):
        DecoderLayerProblem("mixtral_8x7b", 1, 64).validate()
    with pytest.raises(ValueError, match="^model"):
        DecoderLayerProblem("gpt-5", 1, 64).validate()


def test_the_graph_provider_needs_an_nvidia_gpu(tiny):
    reason = load_all().get("decoder_layer", "own-triton-graph").why_not(tiny, CPU)
    assert reason and "nvidia" in reason.lower()


def _layer_row(provider: str, batch: int, ms: float) -> dict:
    row = {c: None for c in store.COLUMNS}
    row.update(
        op="decoder_layer", provider=provider, family="own", status="ok", model="llama3_8b",
        batch=batch, kv_len=4096, page_size=16, dtype="bf16", latency_ms_median=ms,
        problem=f"decoder_layer llama3_8b b{batch} kv4096 page16 bf16", timer="cuda-events",
        l2="cold", fill="randn", seed=0, device_name="NVIDIA H200", device_type="cuda",
        timestamp="2026-11-24T00:00:00+00:00",
    )  # fmt: skip
    return row


def test_measured_layers_stand_beside_the_composed_step():
    rows = pd.DataFrame(
        [
            _layer_row("own-triton-graph", 16, 0.25),
            _layer_row("own-triton", 16, 0.4),
            _layer_row("torch-eager", 16, 0.84),
        ]
    )
    step = compose(RowIndex(rows), get_workload("llama3_8b_decode"), 16, "own", None)
    assert step.measured_layer == {"own-triton-graph": 0.25, "own-triton": 0.4, "torch-eager": 0.84}
    line = steps_table([step]).iloc[0]
    assert line["measured layer ms (graph)"] == 0.25 and line["measured layer ms (eager)"] == 0.4
    # PyTorch's layer is shown beside them, never used as "measured"
    assert line["PyTorch layer ms (eager)"] == 0.84 and line["PyTorch layer ms (compiled)"] is None
    assert pd.isna(line["composed / measured"])  # nothing composed: no GEMM rows here
    other = compose(RowIndex(rows), get_workload("llama3_8b_decode"), 32, "own", None)
    assert other.measured_layer == {}


def test_each_gemm_is_prepared_on_the_values_its_step_reads(tiny, monkeypatch):
    """prepare_matmul checks and times its candidates on its `a` as it is at prepare time: that
    must already be the previous step's output, not the empty buffer it was allocated as."""
    import harness_kernels.triton.decoder_layer as layer

    seen: list[tuple[torch.Tensor, torch.Tensor]] = []  # (a itself, its values at prepare)
    real = layer.prepare_matmul

    def snapshot(a, b, *args, **kwargs):
        seen.append((a, a.clone()))
        return real(a, b, *args, **kwargs)

    monkeypatch.setattr(layer, "prepare_matmul", snapshot)
    prepared, _ = _prepared(tiny)
    prepared.run()  # the chain once more: each GEMM's input now holds its step's value
    assert len(seen) == 4  # qkv, o, gate_up, down
    for a, at_prepare in seen:
        assert torch.equal(at_prepare, a) and at_prepare.abs().sum() > 0


def test_the_torch_layer_matches_the_fp32_layer(tiny):
    """The torch-eager baseline (HF Llama's ops, pages gathered for SDPA) passes the same check,
    and appends the new token to the cache as the own layer does."""
    inputs = tiny.make_inputs(0, "randn", torch.device("cpu"))
    ref = tiny.reference(inputs)
    prepared = load_all().get("decoder_layer", "torch-eager").prepare(tiny, inputs, CPU)
    check = tiny.check(prepared.output(prepared.run()), ref)
    assert check.ok, check.reason
    fresh = tiny.make_inputs(0, "randn", torch.device("cpu"))
    slots = inputs["slot_mapping"]
    written = inputs["k_cache"].flatten(0, 1)[slots]
    assert not torch.equal(written, fresh["k_cache"].flatten(0, 1)[slots])


def test_torch_compile_of_the_layer_is_for_gpus(tiny):
    provider = load_all().get("decoder_layer", "torch-compile")
    assert "GPU" in provider.supports(tiny, CPU)
