"""On a GPU: every layer op through every provider, and one Llama-3-8B decoder layer from the own
kernels, launched one by one and replayed as a CUDA graph, each checked against its fp32
reference and timed (issue 23). The graph and the eager chain must agree with each other too.
Run on the H200 2026-11-24 (20 passed, results/h200/_logs/decoder_step_gpu_tests.txt); the two
torch decoder-layer tests were added after that run and have not run on a GPU yet."""

import json

import pytest
import torch

from harness.device import get_device
from harness.measure.point import measure_point
from harness.measure.protocol import Protocol
from harness.problems.decoder_layer import DecoderLayerProblem
from harness.problems.layer_ops import (
    AddRmsNormProblem,
    KvAppendProblem,
    RmsNormProblem,
    RopeProblem,
    SiluMulProblem,
)
from harness.providers import load_all

pytestmark = pytest.mark.gpu

QUICK = Protocol(min_samples=5, max_samples=50, max_time_s=0.2, min_time_s=0.05, warmup_ms=20)
LAYER_OPS = {
    "rmsnorm-1": RmsNormProblem(1, 4096),
    "add_rmsnorm-512": AddRmsNormProblem(512, 8192),
    "silu_mul-64": SiluMulProblem(64, 14336),
    "rope-40-heads": RopeProblem(256, 32, 8, 128),
    "kv_append-page16": KvAppendProblem(64, 8, 4096, page_size=16),
    "kv_append-chunk": KvAppendProblem(2, 8, 100, q_len=300, page_size=256),
}


@pytest.mark.parametrize("provider", ["own-triton", "torch-eager", "torch-compile"])
@pytest.mark.parametrize("case", LAYER_OPS)
def test_layer_op_checked_and_timed(case, provider):
    problem = LAYER_OPS[case]
    row = measure_point(problem, load_all().get(problem.op, provider), get_device("cuda"), QUICK)
    assert row["status"] == "ok", row["reason"]
    assert 0 < row["gbps"]


@pytest.mark.parametrize("batch", [1, 64])
def test_decoder_layer_eager_and_graph_pass_and_agree(batch):
    device = get_device("cuda")
    problem = DecoderLayerProblem("llama3_8b", batch, 4096)
    rows = {
        name: measure_point(problem, load_all().get("decoder_layer", name), device, QUICK)
        for name in ("own-triton", "own-triton-graph")
    }
    for name, row in rows.items():
        assert row["status"] == "ok", (name, row["reason"])
        config = json.loads(row["provider_config"])
        assert config["graph"] == (name == "own-triton-graph") and len(config["kernels"]) == 10
    inputs = problem.make_inputs(0, "randn", device.torch_device)
    outs = []
    for name in ("own-triton", "own-triton-graph"):
        prepared = load_all().get("decoder_layer", name).prepare(problem, inputs, device)
        outs.append(prepared.output(prepared.run()).float().clone())
    torch.cuda.synchronize()
    # The same kernels and configs; split-K atomics may add in another order, nothing more.
    diff = torch.linalg.vector_norm(outs[0] - outs[1]) / torch.linalg.vector_norm(outs[0])
    assert float(diff) < 1e-2


@pytest.mark.parametrize("provider", ["torch-eager", "torch-compile"])
def test_torch_decoder_layer_checked_and_timed(provider):
    """PyTorch's layer (HF Llama's ops, pages gathered for SDPA; compiled before and after
    attention): checked against the same fp32 layer and timed."""
    problem = DecoderLayerProblem("llama3_8b", 16, 4096)
    row = measure_point(
        problem, load_all().get("decoder_layer", provider), get_device("cuda"), QUICK
    )
    assert row["status"] == "ok", row["reason"]
