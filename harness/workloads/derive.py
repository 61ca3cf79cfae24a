"""From a model, a tensor-parallel degree, a phase and a batch: the problems one step runs.

Per layer and per rank (tensor parallel as Megatron / vLLM shard it):
    qkv      y = x W^T, W [(Hq + 2 Hkv) D / tp, hidden]     column-parallel: N / tp
    o        W [hidden, Hq D / tp]                           row-parallel:    K / tp
    gate_up  W [2 I / tp, hidden]                            column-parallel
    down     W [hidden, I / tp]                              row-parallel
    attention Hq / tp query heads, Hkv / tp KV heads (one replicated KV head when tp > Hkv)
MoE (Mixtral): a router GEMM (N = experts, replicated) and, with balanced routing, the T x top_k
token assignments spread over min(experts, T x top_k) active experts, each running its own
gate_up and down GEMM at M = ceil(T x top_k / active) with I / tp.
Once per step: the LM head, W [vocab / tp, hidden], on one token per sequence (prefill keeps only
the last position's logits).
GEMMs use layout "nt" (weights stored [N, K], as linear layers keep them).

flops / min_bytes / label here are torch-free copies of harness.problems (reports must not
import torch); tests/report/test_workloads.py checks them against the problems.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from harness.units import fmt_bytes
from harness.workloads.models import ModelConfig

PHASES = ("prefill", "decode")
_IN_BYTES = {"fp32": 4, "tf32": 4, "fp16": 2, "bf16": 2, "fp8_e4m3": 1}
_OUT_BYTES = {"fp32": 4, "tf32": 4, "fp16": 2, "bf16": 2, "fp8_e4m3": 2}  # fp8 GEMMs write bf16
GEMM_AXES = ("m", "n", "k", "dtype", "layout", "batch")
ATTENTION_AXES = (
    "batch",
    "q_heads",
    "kv_heads",
    "q_len",
    "kv_len",
    "head_dim",
    "causal",
    "dtype",
    "kv_layout",
    "page_size",
)
# The decoder layer's memory-bound ops (harness/problems/layer_ops.py), in a layer's order.
LAYER_OPS = ("rmsnorm", "add_rmsnorm", "rope", "kv_append", "silu_mul")
_NORM_AXES = ("m", "n", "dtype")
AXES = {
    "gemm": GEMM_AXES,
    "attention": ATTENTION_AXES,
    "rmsnorm": _NORM_AXES,
    "add_rmsnorm": _NORM_AXES,
    "silu_mul": _NORM_AXES,
    "rope": ("m", "q_heads", "kv_heads", "head_dim", "dtype"),
    "kv_append": ("batch", "kv_heads", "kv_len", "q_len", "head_dim", "page_size", "dtype"),
    "collective": ("collective", "message_bytes", "world_size", "dtype"),
}
# What a step's time is split into in the report (the LM head is a GEMM run once per step).
CATEGORIES = ("GEMMs", "attention", "norms and elementwise", "all-reduce", "LM head")
# Parts a step may be composed without, each leaving a lower bound the report names as one: the
# layer ops (runs older than them) and the all-reduces (measured on a multi-GPU host only).
OPTIONAL_OPS = (*LAYER_OPS, "collective")
KV_APPEND_PAGE = 16  # vLLM's default block size: the append's page where the cache is dense


@dataclass(frozen=True)
class WorkItem:
    """One problem of a step, `count` times per layer (or per step when not per_layer)."""

    name: str  # qkv, o, gate_up, down, attention, router, expert_gate_up, expert_down, lm_head
    op: str  # gemm | attention
    axes: tuple[tuple[str, Any], ...]  # the problem's fields, in AXES[op] order
    count: int = 1
    per_layer: bool = True

    @property
    def problem(self) -> dict[str, Any]:
        return dict(self.axes)

    @property
    def category(self) -> str:
        """One of CATEGORIES."""
        if self.name == "lm_head":
            return "LM head"
        if self.op in LAYER_OPS:
            return "norms and elementwise"
        if self.op == "collective":
            return "all-reduce"
        return "GEMMs" if self.op == "gemm" else "attention"

    def flops(self) -> int:
        return problem_flops(self.op, self.problem)

    def min_bytes(self) -> int:
        return problem_min_bytes(self.op, self.problem)

    def label(self) -> str:
        return problem_label(self.op, self.problem)


def _gemm(name: str, m: int, n: int, k: int, dtype: str, count: int = 1, per_layer: bool = True):
    p = {"m": m, "n": n, "k": k, "dtype": dtype, "layout": "nt", "batch": 1}
    return WorkItem(name, "gemm", tuple((a, p[a]) for a in GEMM_AXES), count, per_layer)


def _item(name: str, op: str, count: int = 1, per_layer: bool = True, **p: Any) -> WorkItem:
    return WorkItem(name, op, tuple((a, p[a]) for a in AXES[op]), count, per_layer)


def kv_heads_per_rank(model: ModelConfig, tp: int) -> int:
    """KV heads one rank holds: split when tp divides them, one replicated head when tp is a
    multiple of them (vLLM's rule)."""
    if model.kv_heads % tp == 0:
        return model.kv_heads // tp
    if tp % model.kv_heads == 0:
        return 1
    raise ValueError(
        f"tp: {tp} neither divides nor is a multiple of {model.name}'s {model.kv_heads} KV heads; "
        "allowed: a divisor or a multiple"
    )


def check_tp(model: ModelConfig, tp: int) -> None:
    if not isinstance(tp, int) or tp <= 0:
        raise ValueError(f"tp: must be a positive integer, got {tp!r}")
    for what, size in (("attention heads", model.heads), ("intermediate size", model.intermediate)):
        if size % tp:
            raise ValueError(
                f"tp: {tp} does not divide {model.name}'s {what} ({size}); allowed: a divisor"
            )
    kv_heads_per_rank(model, tp)


def expert_split(tokens: int, experts: int, top_k: int) -> tuple[int, int]:
    """(active experts, tokens per active expert) under balanced routing of tokens x top_k."""
    assignments = tokens * top_k
    active = min(experts, assignments)
    return active, math.ceil(assignments / active)


def step_items(
    model: ModelConfig,
    tp: int,
    phase: str,
    batch: int,
    context: int,
    dtype: str = "bf16",
    kv_layout: str = "dense",
    page_size: int = 0,
) -> list[WorkItem]:
    """The problems of one forward step on one rank.

    phase "prefill": `batch` sequences of `context` tokens each (causal, q_len = kv_len);
    phase "decode": one new token for each of `batch` sequences against a KV cache of
    `context` tokens (q_len 1).
    """
    model.validate()
    check_tp(model, tp)
    if phase not in PHASES:
        raise ValueError(f"phase: unknown '{phase}'; allowed: {', '.join(PHASES)}")
    if batch <= 0 or context <= 0:
        raise ValueError(f"batch, context: must be positive, got {batch}, {context}")
    tokens = batch * context if phase == "prefill" else batch
    hq, hkv, d = model.heads // tp, kv_heads_per_rank(model, tp), model.head_dim
    items = [
        _gemm("qkv", tokens, (hq + 2 * hkv) * d, model.hidden, dtype),
        _gemm("o", tokens, model.hidden, hq * d, dtype),
    ]
    inter = model.intermediate // tp
    if model.is_moe:
        active, per_expert = expert_split(tokens, model.experts, model.top_k)
        items += [
            _gemm("router", tokens, model.experts, model.hidden, dtype),
            _gemm("expert_gate_up", per_expert, 2 * inter, model.hidden, dtype, count=active),
            _gemm("expert_down", per_expert, model.hidden, inter, dtype, count=active),
        ]
    else:
        items += [
            _gemm("gate_up", tokens, 2 * inter, model.hidden, dtype),
            _gemm("down", tokens, model.hidden, inter, dtype),
        ]
    act = dtype if dtype in ("fp16", "bf16") else "bf16"  # fp8 GEMMs: bf16 activations and cache
    attn_dtype = act
    q_len = context if phase == "prefill" else 1
    attn = {
        "batch": batch,
        "q_heads": hq,
        "kv_heads": hkv,
        "q_len": q_len,
        "kv_len": context,
        "head_dim": d,
        "causal": True,
        "dtype": attn_dtype,
        "kv_layout": kv_layout,
        "page_size": page_size,
    }
    items.append(WorkItem("attention", "attention", tuple((a, attn[a]) for a in ATTENTION_AXES)))
    # The memory-bound kernels a serving engine runs between them (vLLM's Llama): the residual
    # add fused into both RMSNorms, rotary on q and k, the new K/V into the paged cache, and
    # SiLU-and-multiply between gate_up and down (per active expert for an MoE).
    items += [
        _item("norms", "add_rmsnorm", count=2, m=tokens, n=model.hidden, dtype=act),
        _item("rope", "rope", m=tokens, q_heads=hq, kv_heads=hkv, head_dim=d, dtype=act),
        _item(
            "kv_append",
            "kv_append",
            batch=batch,
            kv_heads=hkv,
            kv_len=0 if phase == "prefill" else context,
            q_len=q_len,
            head_dim=d,
            page_size=page_size or KV_APPEND_PAGE,
            dtype=act,
        ),  # fmt: skip
    ]
    if model.is_moe:
        items.append(_item("silu_mul", "silu_mul", count=active, m=per_expert, n=inter, dtype=act))
    else:
        items.append(_item("silu_mul", "silu_mul", m=tokens, n=inter, dtype=act))
    if tp > 1:  # Megatron's two all-reduces per layer: after o and after down, [tokens, hidden]
        message = tokens * model.hidden * _IN_BYTES[act]
        items.append(_item("all_reduce", "collective", count=2, collective="all_reduce",
                           message_bytes=message, world_size=tp, dtype=act))  # fmt: skip
    items.append(
        _item("final_norm", "add_rmsnorm", per_layer=False, m=tokens, n=model.hidden, dtype=act)
    )
    vocab = math.ceil(model.vocab / tp)  # vocab-parallel LM head (servers pad the vocabulary)
    items.append(_gemm("lm_head", batch, vocab, model.hidden, dtype, per_layer=False))
    return items


# --- torch-free copies of harness.problems' work model --------------------------------------


def _causal_pairs(q_len: int, kv_len: int) -> int:
    """Pairs a bottom-right-aligned causal mask keeps (q_len <= kv_len): row i keeps
    i + (kv_len - q_len) + 1 keys."""
    if q_len > kv_len:  # the problem refuses this; clip as harness.problems.attention does
        return sum(min(kv_len, max(0, i + kv_len - q_len + 1)) for i in range(q_len))
    return q_len * (kv_len - q_len + 1) + q_len * (q_len - 1) // 2


def _layer_op_work(op: str, p: dict[str, Any]) -> tuple[int, int]:
    """(flops, min_bytes) of a layer op, as harness/problems/layer_ops.py counts them."""
    e = _IN_BYTES[p["dtype"]]
    if op in ("rmsnorm", "add_rmsnorm"):
        streams = 2 if op == "rmsnorm" else 4
        return (4 if op == "rmsnorm" else 5) * p["m"] * p["n"], (streams * p["m"] + 1) * p["n"] * e
    if op == "silu_mul":
        return 5 * p["m"] * p["n"], 3 * p["m"] * p["n"] * e
    if op == "rope":
        heads = p["q_heads"] + p["kv_heads"]
        qk = 2 * p["m"] * heads * p["head_dim"] * e
        return 3 * p["m"] * heads * p["head_dim"], qk + p["m"] * 8 + p["m"] * p["head_dim"] * 4
    tokens = p["batch"] * p["q_len"]  # kv_append
    return 0, 2 * (2 * tokens * p["kv_heads"] * p["head_dim"] * e) + tokens * 8


def _busbw_factor(p: dict[str, Any]) -> float:
    n = p["world_size"]
    return (2 if p["collective"] == "all_reduce" else 1) * (n - 1) / n


def problem_flops(op: str, p: dict[str, Any]) -> int:
    if op == "collective":
        return 0
    if op in LAYER_OPS:
        return _layer_op_work(op, p)[0]
    if op == "gemm":
        return 2 * p["batch"] * p["m"] * p["n"] * p["k"]
    if op == "attention":
        pairs = _causal_pairs(p["q_len"], p["kv_len"]) if p["causal"] else p["q_len"] * p["kv_len"]
        return 4 * p["batch"] * p["q_heads"] * p["head_dim"] * pairs
    raise ValueError(f"op: unknown '{op}'; allowed: {', '.join(AXES)}")


def resident_bytes_per_rank(
    model: ModelConfig, tp: int, phase: str, batch: int, context: int, dtype: str = "bf16"
) -> int:
    """What one rank must hold to run the step at all: its share of the weights (attention and
    MLP sharded over tp, every expert of an MoE, embedding and LM head split by vocabulary,
    replicated KV heads counted once per rank) and its KV cache for `batch` sequences of
    `context` tokens plus the step's new ones, in `dtype`. Activations and workspaces come on
    top, so a batch over the GPU's memory by this count cannot be served on one GPU per rank."""
    e = _IN_BYTES[dtype]
    hd, kv = model.head_dim, kv_heads_per_rank(model, tp)
    attn = model.hidden * (model.heads // tp) * hd * 2 + model.hidden * kv * hd * 2  # q, o; k, v
    mlp = 3 * model.hidden * model.intermediate // tp * max(1, model.experts)
    router = model.hidden * model.experts
    weights = model.layers * (attn + mlp + router) + 2 * model.vocab * model.hidden // tp
    tokens = context + (1 if phase == "decode" else 0)
    cache = 2 * model.layers * batch * tokens * kv * hd
    return (weights + cache) * e


def problem_min_bytes(op: str, p: dict[str, Any]) -> int:
    if op == "collective":
        return round(2 * _busbw_factor(p) * p["message_bytes"])
    if op in LAYER_OPS:
        return _layer_op_work(op, p)[1]
    if op == "gemm":
        e, out = _IN_BYTES[p["dtype"]], _OUT_BYTES[p["dtype"]]
        return p["batch"] * ((p["m"] * p["k"] + p["k"] * p["n"]) * e + p["m"] * p["n"] * out)
    if op == "attention":
        e = _IN_BYTES[p["dtype"]]
        q = p["batch"] * p["q_heads"] * p["q_len"] * p["head_dim"]
        kv = 2 * p["batch"] * p["kv_heads"] * p["kv_len"] * p["head_dim"]
        pages = -(-p["kv_len"] // p["page_size"]) if p["kv_layout"] == "paged" else 0
        return (2 * q + kv) * e + p["batch"] * pages * 4
    raise ValueError(f"op: unknown '{op}'; allowed: {', '.join(AXES)}")


def problem_label(op: str, p: dict[str, Any]) -> str:
    """The `problem` column the harness writes for these axes."""
    if op == "gemm":
        b = f"{p['batch']}x" if p["batch"] > 1 else ""
        return f"gemm {b}{p['m']}x{p['n']}x{p['k']} {p['dtype']} {p['layout']}"
    if op == "collective":
        return f"{p['collective']} {fmt_bytes(p['message_bytes'])} x{p['world_size']} {p['dtype']}"
    if op in ("rmsnorm", "add_rmsnorm", "silu_mul"):
        return f"{op} {p['m']}x{p['n']} {p['dtype']}"
    if op == "rope":
        return f"rope {p['m']} h{p['q_heads']}/{p['kv_heads']} d{p['head_dim']} {p['dtype']}"
    if op == "kv_append":
        return (
            f"kv_append b{p['batch']} h{p['kv_heads']} s{p['q_len']}/{p['kv_len']} "
            f"d{p['head_dim']} page{p['page_size']} {p['dtype']}"
        )
    mask = " causal" if p["causal"] else ""
    paged = f" paged{p['page_size']}" if p["kv_layout"] == "paged" else ""
    return (
        f"attn b{p['batch']} h{p['q_heads']}/{p['kv_heads']} s{p['q_len']}/{p['kv_len']} "
        f"d{p['head_dim']}{mask}{paged} {p['dtype']}"
    )
