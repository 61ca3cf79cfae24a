"""The decoder layer at tensor parallel 2 (issue 23.4): the ranks' shards add up to the whole
layer (checked in fp32 without processes), and the own kernels' sharded layer runs through
`harness run` on two gloo ranks on the CPU, all-reduces inside the step, checked against the
unsharded fp32 layer on every rank."""

import json

import pytest
import torch

from harness import store
from harness.cli import main
from harness.measure.point import deadline
from harness.problems.attention import attention_reference, gather_pages
from harness.problems.decoder_layer import DecoderLayerProblem
from harness.problems.layer_ops import rms_norm_reference, rope_reference
from harness.report.compose import RowIndex
from harness.workloads import models

TINY = dict(name="tiny", hf_id="none", hidden=256, heads=4, kv_heads=2, head_dim=64,
            intermediate=512, layers=2, vocab=1000)  # fmt: skip
CPU = torch.device("cpu")


@pytest.fixture
def tiny(monkeypatch, tmp_path):
    """The tiny model here and, through HARNESS_MODELS, in every process a run starts."""
    path = tmp_path / "models.json"
    path.write_text(json.dumps({"tiny": TINY}))
    monkeypatch.setenv("HARNESS_MODELS", str(path))
    monkeypatch.setitem(models.MODELS, "tiny", models.ModelConfig(**TINY))
    return path


def _rank_layer_fp32(problem, inp):
    """One rank's layer in fp32 on its shards, up to the two partial sums the all-reduces add."""
    c, tp = problem.config, problem.tp
    B, D, hq, hkv = problem.batch, c.head_dim, c.heads // tp, c.kv_heads // tp
    f = {k: v.float() for k, v in inp.items() if torch.is_tensor(v) and v.is_floating_point()}
    r1 = f["x"] + f["residual"]
    qkv = rms_norm_reference(r1, f["w_in"]) @ f["w_qkv"].T
    q, k, v = qkv.split([hq * D, hkv * D, hkv * D], dim=1)
    cos_sin = inp["cos_sin"][inp["positions"]]
    q, k = rope_reference(q.view(B, hq, D), cos_sin), rope_reference(k.view(B, hkv, D), cos_sin)
    keys = gather_pages(inp["k_cache"], inp["block_table"], problem.kv_len + 1).float()
    values = gather_pages(inp["v_cache"], inp["block_table"], problem.kv_len + 1).float()
    keys[:, :, -1], values[:, :, -1] = k, v.view(B, hkv, D)
    attn = attention_reference(q.view(B, hq, 1, D), keys, values, causal=True)
    return r1, attn.view(B, hq * D) @ f["w_o"].T, f


def test_shards_add_up_to_the_whole_layer(tiny):
    problem = DecoderLayerProblem("tiny", 3, 40, 16, world_size=2)
    problem.validate()
    ranks = [problem.make_inputs(0, "randn", CPU, rank=r) for r in range(2)]
    assert ranks[0]["w_qkv"].shape == (((4 + 2 * 2) // 2) * 64, 256)
    assert ranks[1]["k_cache"].shape[2] == 1 and ranks[0]["w_down"].shape == (256, 256)
    parts = [_rank_layer_fp32(problem, inp) for inp in ranks]
    r2 = parts[0][0] + sum(o for _, o, _ in parts)  # the all-reduce after o, then the residual
    out = 0
    for _, _, f in parts:
        h2 = rms_norm_reference(r2, f["w_post"])
        gate, up = (h2 @ f["w_gate_up"].T).chunk(2, dim=1)
        out = out + (torch.nn.functional.silu(gate) * up) @ f["w_down"].T  # and after down
    whole = problem.reference(ranks[0])
    assert torch.allclose(torch.cat([out, r2], dim=1), whole, rtol=1e-4, atol=1e-4)
    assert torch.equal(whole, problem.reference(ranks[1]))  # every rank checks the same layer


def test_tensor_parallel_is_validated_and_keys_stay_stable(tiny):
    with pytest.raises(ValueError, match="world_size: 3 does not divide"):
        DecoderLayerProblem("tiny", 1, 40, world_size=3).validate()
    with pytest.raises(ValueError, match="rank: 2"):
        problem = DecoderLayerProblem("tiny", 1, 40, world_size=2)
        problem.shard(problem.make_inputs(0, "randn", CPU), 2)
    assert "world_size" not in DecoderLayerProblem("tiny", 1, 40).axes()  # TP 1 keys unchanged
    assert DecoderLayerProblem("tiny", 1, 40, world_size=2).label().endswith(" tp2")


def test_tp2_layer_runs_on_two_gloo_ranks(tiny, tmp_path):
    args = [
        "run",
        "sweep=decoder_layer_tp2",
        "device=cpu",
        "progress=false",
        "providers=[own-triton]",
        "sweep.groups.0.fixed.model=tiny",
        "sweep.groups.0.fixed.kv_len=40",
        "sweep.groups.0.product.batch=[3]",
        "protocol.min_samples=1",  # each sample is a whole layer in the Triton interpreter
        "protocol.max_samples=1",
        "protocol.max_time_s=0.05",
        "protocol.min_time_s=0.01",
        "protocol.warmup_ms=1",
        f"results_dir={tmp_path}",
        "run_id=tp",
    ]
    with deadline(240):
        assert main(args) == 0
    df = store.read_rows(tmp_path / "tp")
    df = df.assign(world_size=df.world_size.fillna(1).astype(int)).set_index("world_size")
    assert set(df.status) == {"ok"}, df[["problem", "status", "reason"]]
    assert sorted(df.index) == [1, 2]  # TP 1 rows leave world_size empty (their keys predate it)
    tp2 = json.loads(df.loc[2, "provider_config"])
    assert tp2["tp"] == 2 and tp2["all_reduce"]
    assert tp2["kernels"][-1] == "all_reduce_down" and "all_reduce_o" in tp2["kernels"]
    assert df.loc[2, "problem"].endswith(" tp2") and df.loc[2, "rel_err"] < 3e-2
    # the report finds each layer by its tensor parallelism (composed TP 2 steps meet the TP 2 row)
    index = RowIndex(store.read_rows(tmp_path / "tp"))
    for tp in (1, 2):
        measured = index.measured_layer("tiny", 3, 40, "bf16", tp)
        assert measured == {"own-triton": pytest.approx(df.loc[tp, "latency_ms_median"])}
