"""On a GPU with flash-attn-4 and flashinfer installed: every route of both providers is checked
against the fp32 reference and timed, under CUDA events and graph replay, and records its
backend, version and preparation time. Skipped, with the import error, where a package is absent."""

import json

import pytest

from harness.device import get_device
from harness.measure.point import measure_point
from harness.measure.protocol import Protocol
from harness.problems import AttentionProblem
from harness.providers import load_all

pytestmark = pytest.mark.gpu

QUICK = Protocol(min_samples=5, max_samples=50, max_time_s=0.2, min_time_s=0.05, warmup_ms=20)
GQA = dict(q_heads=32, kv_heads=8, dtype="bf16")
PROBLEMS = {
    "prefill-d128-causal": AttentionProblem(2, **GQA, q_len=1024, kv_len=1024, causal=True),
    "prefill-b1-d64": AttentionProblem(1, **GQA, q_len=2048, kv_len=2048, head_dim=64),
    "chunked-b1": AttentionProblem(1, **GQA, q_len=256, kv_len=4096, causal=True),
    "chunked-b4": AttentionProblem(4, **GQA, q_len=256, kv_len=4096, causal=True),
    "decode-b1": AttentionProblem(1, **GQA, q_len=1, kv_len=8192, causal=True),
    "decode-b16": AttentionProblem(16, **GQA, q_len=1, kv_len=4096, causal=True),
    "decode-mqa": AttentionProblem(16, 32, 1, 1, 4096, causal=True),
    "paged-16": AttentionProblem(16, **GQA, q_len=1, kv_len=4000, kv_layout="paged", page_size=16),
    "paged-256": AttentionProblem(8, **GQA, q_len=1, kv_len=9000, kv_layout="paged", page_size=256),
    "paged-spec-4": AttentionProblem(
        8, **GQA, q_len=4, kv_len=2048, causal=True, kv_layout="paged", page_size=16
    ),
}


@pytest.fixture(scope="module", params=["flash-attn-4", "flashinfer"])
def provider(request):
    p = load_all().get("attention", request.param)
    why = p.why_unavailable(get_device("cuda"))
    if why:
        pytest.skip(why)
    return p


@pytest.mark.parametrize("case", PROBLEMS)
def test_checked_and_timed(provider, case):
    device, problem = get_device("cuda"), PROBLEMS[case]
    row = measure_point(problem, provider, device, QUICK)
    if provider.supports(problem, device):
        assert row["status"] == "skipped"
        return
    assert row["status"] == "ok", row["reason"]
    config = json.loads(row["provider_config"])
    print(case, provider.name, f"{row['latency_ms_median'] * 1e3:.1f} us", config)
    assert config["version"] and config["prepare_s"] >= config["first_call_s"]
    if provider.name == "flashinfer":
        assert config["backend"] and config["backend"] != "?"


def test_graph_replay(provider):
    device = get_device("cuda")
    graph = Protocol(timer="cuda-graph", min_samples=5, max_time_s=0.2, min_time_s=0.05)
    for case in ("prefill-d128-causal", "paged-16"):
        row = measure_point(PROBLEMS[case], provider, device, graph)
        assert row["status"] == "ok" and row["timer"] == "cuda-graph", (case, row["reason"])
