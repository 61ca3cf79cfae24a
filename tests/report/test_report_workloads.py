"""The workload catalog and its derivation: shapes per TP degree and phase, MoE expert tokens,
the torch-free work model against harness.problems, and the generated presets being current."""

import re

import pytest
from script_module import load_script

from harness.config import SWEEPS_DIR
from harness.problems import PROBLEM_TYPES, AttentionProblem
from harness.workloads import MODELS, WORKLOADS, get_model, step_items
from harness.workloads.derive import expert_split, kv_heads_per_rank
from harness.workloads.presets import max_points_for

PROBLEM = PROBLEM_TYPES


def _by_name(items):
    return {i.name: i.problem for i in items}


@pytest.mark.parametrize("w", WORKLOADS, ids=[w.name for w in WORKLOADS])
def test_torch_free_work_model_matches_problems(w):
    for batch in (w.batches[0], w.batches[-1]):
        for item in w.items(batch):
            p = PROBLEM[item.op](**item.problem)
            p.validate()
            assert item.flops() == p.flops(), item
            assert item.min_bytes() == p.min_bytes(), item
            assert item.label() == p.label(), item


def test_paged_attention_bytes_match_problem():
    items = step_items(
        get_model("llama3_8b"), 1, "decode", 3, 1000, kv_layout="paged", page_size=16
    )
    attn = next(i for i in items if i.op == "attention")
    p = AttentionProblem(**attn.problem)
    assert (attn.min_bytes(), attn.label()) == (p.min_bytes(), p.label())


def test_llama3_70b_tp4_shapes():
    items = _by_name(step_items(get_model("llama3_70b"), 4, "decode", 8, 4096))
    assert items["qkv"] == {
        "m": 8,
        "n": (16 + 2 * 2) * 128,
        "k": 8192,
        "dtype": "bf16",
        "layout": "nt",
        "batch": 1,
    }
    assert (items["o"]["n"], items["o"]["k"]) == (8192, 2048)
    assert (items["gate_up"]["n"], items["gate_up"]["k"]) == (2 * 28672 // 4, 8192)
    assert (items["down"]["n"], items["down"]["k"]) == (8192, 28672 // 4)
    attn = items["attention"]
    assert (attn["q_heads"], attn["kv_heads"], attn["q_len"], attn["kv_len"]) == (16, 2, 1, 4096)
    assert (items["lm_head"]["m"], items["lm_head"]["n"]) == (8, 128256 // 4)


def test_prefill_tokens_and_causal_attention():
    items = _by_name(step_items(get_model("qwen2_5_7b"), 1, "prefill", 4, 2048))
    assert items["qkv"]["m"] == 4 * 2048 and items["qkv"]["n"] == (28 + 2 * 4) * 128
    attn = items["attention"]
    assert (attn["batch"], attn["q_len"], attn["kv_len"], attn["causal"]) == (4, 2048, 2048, True)
    assert items["lm_head"]["m"] == 4  # logits of the last position only


def test_kv_heads_replicate_past_tp_and_bad_tp_is_refused():
    m = get_model("llama3_405b")
    assert kv_heads_per_rank(m, 8) == 1 and kv_heads_per_rank(m, 16) == 1
    assert kv_heads_per_rank(m, 2) == 4
    with pytest.raises(ValueError, match="tp: 3"):
        step_items(m, 3, "decode", 1, 128)
    with pytest.raises(ValueError, match="phase: unknown"):
        step_items(m, 8, "train", 1, 128)


def test_mixtral_expert_gemms_at_tokens_per_expert():
    assert expert_split(1, 8, 2) == (2, 1)  # one token: two experts, one token each
    assert expert_split(64, 8, 2) == (8, 16)  # 128 assignments over all 8 experts
    assert expert_split(3, 8, 2) == (6, 1)
    items = {i.name: i for i in step_items(get_model("mixtral_8x7b"), 1, "prefill", 2, 1024)}
    assert "gate_up" not in items and items["router"].problem["n"] == 8
    up, down = items["expert_gate_up"], items["expert_down"]
    assert up.count == down.count == 8
    assert up.problem["m"] == 2 * 1024 * 2 // 8 and up.problem["n"] == 2 * 14336
    assert down.problem["k"] == 14336
    # every expert token is computed once: expert FLOPs equal top_k x a dense MLP's
    dense = step_items(get_model("mistral_7b"), 1, "prefill", 2, 1024)
    mlp = sum(i.flops() for i in dense if i.name in ("gate_up", "down"))
    assert up.count * up.flops() + down.count * down.flops() == 2 * mlp


def test_catalog_has_the_issue_models_with_a_source_comment():
    assert {
        "llama3_8b",
        "llama3_70b",
        "llama3_405b",
        "qwen2_5_7b",
        "qwen2_5_72b",
        "mistral_7b",
        "mixtral_8x7b",
    } <= set(MODELS)
    text = (SWEEPS_DIR.parent / "harness/workloads/models.py").read_text()
    for m in MODELS.values():
        assert re.search(rf"# {re.escape(m.hf_id)} config\.json", text), m.name
    assert any(m.is_moe for m in MODELS.values())


def test_generated_presets_are_current_and_guarded():
    gen = load_script("gen_workload_presets")
    files = gen.rendered()
    assert "llama3_8b_decode.yaml" in files and len(files) == len(WORKLOADS)
    for name, text in files.items():
        assert (SWEEPS_DIR / name).read_text() == text, f"{name} is stale: run the generator"
        points = int(re.match(r"# harness run sweep=\S+\s+\(points: (\d+)\)", text).group(1))
        assert f"max_points: {max_points_for(points)}" in text
    decode = (SWEEPS_DIR / "llama3_8b_decode.yaml").read_text()
    assert "m: [1, 2, 4, 8, 16, 32, 64, 128, 256, 512]" in decode


def test_a_decode_step_has_every_kernel_a_serving_engine_runs():
    """Per layer: four GEMMs, attention, two residual-add RMSNorms, rotary, the KV append and
    SiLU-and-multiply; per step: the final norm and the LM head (issue 23)."""
    items = step_items(get_model("llama3_8b"), 1, "decode", 16, 4096)
    per_layer = {(i.name, i.op, i.count) for i in items if i.per_layer}
    assert {("norms", "add_rmsnorm", 2), ("rope", "rope", 1), ("silu_mul", "silu_mul", 1)} <= (
        per_layer
    )
    kv = next(i for i in items if i.op == "kv_append").problem
    assert (kv["batch"], kv["q_len"], kv["kv_len"], kv["kv_heads"]) == (16, 1, 4096, 8)
    once = {i.name: i.category for i in items if not i.per_layer}
    assert once == {"final_norm": "norms and elementwise", "lm_head": "LM head"}
    assert {i.category for i in items} == {"GEMMs", "attention", "norms and elementwise", "LM head"}


def test_a_prefill_appends_its_whole_prompt_to_an_empty_cache():
    items = step_items(get_model("llama3_8b"), 1, "prefill", 2, 2048)
    kv = next(i for i in items if i.op == "kv_append").problem
    assert (kv["batch"], kv["q_len"], kv["kv_len"]) == (2, 2048, 0)
    assert next(i for i in items if i.name == "silu_mul").problem["m"] == 4096


def test_tensor_parallel_steps_carry_two_all_reduces_per_layer():
    """Megatron's row-parallel o and down each end in an all-reduce of [tokens, hidden] (issue
    23.4); one rank has none; the presets leave them to the collectives sweep."""
    items = step_items(get_model("llama3_70b"), 2, "decode", 16, 4096)
    (ar,) = [i for i in items if i.op == "collective"]
    assert (ar.count, ar.per_layer, ar.category) == (2, True, "all-reduce")
    assert ar.problem == {"collective": "all_reduce", "message_bytes": 16 * 8192 * 2,
                          "world_size": 2, "dtype": "bf16"}  # fmt: skip
    assert not [i for i in step_items(get_model("llama3_70b"), 1, "decode", 16, 4096)
                if i.op == "collective"]  # fmt: skip
    text = (SWEEPS_DIR / "llama3_70b_tp2_decode.yaml").read_text()
    assert "op: collective" not in text and "sweep=collectives" in text


def test_an_all_reduce_between_measured_sizes_is_interpolated_and_otherwise_left_out():
    import pandas as pd

    from harness import store
    from harness.report.compose import RowIndex, compose
    from harness.workloads.presets import get_workload

    def row(size, ms):
        r = {c: None for c in store.COLUMNS}
        r.update(op="collective", provider="nccl", family="vendor", status="ok",
                 collective="all_reduce", message_bytes=size, world_size=2, dtype="bf16",
                 latency_ms_median=ms, problem=f"all_reduce {size}", timer="cuda-events",
                 l2="n/a", fill="randn", seed=0, device_name="NVIDIA H200", device_type="cuda",
                 timestamp="2026-11-24T00:00:00+00:00")  # fmt: skip
        return r

    w = get_workload("llama3_70b_tp2_decode")
    rows = pd.DataFrame([row(65536, 0.01), row(262144, 0.04)])  # 64 KiB and 256 KiB
    index = RowIndex(rows)
    (ar,) = [i for i in w.items(8) if i.op == "collective"]  # 8 x 8192 x 2 = 128 KiB
    (cand,) = index.candidates(ar, "own")  # no own collectives: the vendor row stands in
    assert cand["provider"] == "nccl (interpolated)"
    assert cand["latency_ms_median"] == pytest.approx(0.02)  # halfway on log-log axes
    composed = compose(index, w, 8, "own", None)
    (c,) = [c for c in composed.components if c.item.op == "collective"]
    assert (c.provider, c.median_ms) == ("nccl (interpolated)", pytest.approx(0.02))
    step = compose(index, w, 32, "best", None)  # 512 KiB: beyond the measured sizes
    assert "all_reduce" in [i.name for i in step.omitted]


def test_a_tensor_parallel_caption_says_where_its_all_reduces_come_from():
    """A TP step's caption says where the all-reduces it used came from (eager rows: timed
    alone, host launch included; on the 2xH200 the composed TP-2 layer sat 1.26x over the one
    measured as a CUDA graph for that); with no all-reduce row it claims no source and names the
    all-reduce among the parts left out; a TP-1 caption says nothing of all-reduces."""
    import pandas as pd

    from harness import store
    from harness.report.compose import RowIndex, compose
    from harness.report.latency import _caption
    from harness.workloads.presets import get_workload

    empty = RowIndex(pd.DataFrame(columns=store.COLUMNS))
    for name in ("llama3_70b_tp2_decode", "llama3_8b_decode"):
        w = get_workload(name)
        steps = [compose(empty, w, b, "best", None) for b in w.batches]
        caption, _ = _caption(w, steps, 0, 1)
        assert "The all-reduces come from" not in caption, name
        assert ("all_reduce" in caption) is (w.tp > 1), name


def test_graph_replayed_all_reduces_are_a_curve_of_their_own_and_the_caption_names_them():
    """Rows of `collectives_graph` (timer cuda-graph) are never interpolated with the eager
    per-call rows; the faster curve is the step's, and the caption says which was used."""
    import pandas as pd

    from harness import store
    from harness.report.compose import RowIndex, compose
    from harness.report.latency import _caption
    from harness.workloads.presets import get_workload

    def row(size, ms, timer):
        r = {c: None for c in store.COLUMNS}
        r.update(op="collective", provider="nccl", family="vendor", status="ok",
                 collective="all_reduce", message_bytes=size, world_size=2, dtype="bf16",
                 latency_ms_median=ms, problem=f"all_reduce {size}", timer=timer,
                 l2="hot", fill="randn", seed=0, device_name="NVIDIA H100 80GB HBM3",
                 device_type="cuda", timestamp="2026-11-25T00:00:00+00:00")  # fmt: skip
        return r

    w = get_workload("llama3_70b_tp2_decode")
    eager = [row(65536, 0.036, "cuda-events"), row(262144, 0.070, "cuda-events")]
    graph = [row(65536, 0.008, "cuda-graph"), row(262144, 0.012, "cuda-graph")]
    (ar,) = [i for i in w.items(8) if i.op == "collective"]  # 128 KiB: between the sizes
    cands = RowIndex(pd.DataFrame(eager + graph)).candidates(ar, "best")
    by = {c["provider"]: c["latency_ms_median"] for c in cands}
    assert by["nccl (interpolated)"] == pytest.approx((0.036 * 0.070) ** 0.5)
    assert by["nccl (cuda-graph) (interpolated)"] == pytest.approx((0.008 * 0.012) ** 0.5)
    steps = [compose(RowIndex(pd.DataFrame(eager + graph)), w, 8, "best", None)]
    (c,) = [c for c in steps[0].components if c.item.op == "collective"]
    assert c.provider == "nccl (cuda-graph) (interpolated)"
    caption, _ = _caption(w, steps, 1, 1)
    assert "replayed from a CUDA graph" in caption and "host launch" not in caption
    eager_only = [compose(RowIndex(pd.DataFrame(eager)), w, 8, "best", None)]
    assert "timed on its own with its host launch" in _caption(w, eager_only, 1, 1)[0]


def test_a_workload_whose_measured_rows_draw_nothing_gets_no_figure(tmp_path):
    """Rows of two layer ops of Llama-3-8B's decode and nothing else: the layer ops are drawn
    as one group, never whole here, so the figure would show the bound alone (the H100's
    Qwen2.5-7B decode, 3 of 100 problems): none is made. With every problem measured, one is."""
    import pandas as pd
    from report_fixtures import speed_row, workload_rows

    from harness.report.latency import workload_reports
    from harness.workloads.derive import LAYER_OPS
    from harness.workloads.presets import get_workload

    w = get_workload("llama3_8b_decode")
    few = [i for i in w.items(1) if i.op in LAYER_OPS and i.per_layer][:2]
    rows = pd.DataFrame([speed_row("h200", i.op, i.problem, "torch-eager", "r") for i in few])
    names = {r.workload.name for r in workload_reports(rows, {}, tmp_path)}
    assert "llama3_8b_decode" not in names
    whole = pd.DataFrame(workload_rows("h200", "r", w.batches))
    assert "llama3_8b_decode" in {r.workload.name for r in workload_reports(whole, {}, tmp_path)}


def test_a_batch_whose_weights_and_cache_exceed_the_gpu_says_so(tmp_path):
    """Llama-3-8B decode at KV 4096 on a 141 GB H200: from batch 256 one GPU cannot hold the
    weights (16 GB) and the KV cache; the caption and the steps table say so."""
    import pandas as pd
    from report_fixtures import workload_rows

    from harness.report.latency import workload_reports
    from harness.workloads.presets import get_workload

    w = get_workload("llama3_8b_decode")
    assert 16.0e9 < w.resident_bytes(1) < 17.0e9  # 8.03B parameters less nothing, in bf16
    rows = pd.DataFrame(workload_rows("h200", "r", w.batches)).assign(
        device_memory_bytes=141 * 10**9
    )
    (report,) = [r for r in workload_reports(rows, {}, tmp_path) if r.workload.name == w.name]
    assert "Batch 256, 512: one rank's weights and KV cache alone exceed" in report.figure.caption
    fits = dict(zip(report.table["batch"], report.table["fits one GPU"], strict=True))
    assert fits[128] == "yes" and fits[256] == "no"
