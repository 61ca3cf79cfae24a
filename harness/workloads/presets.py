"""Workloads (model, tp, phase, context, batches) and the sweep presets generated from them.

    python scripts/gen_workload_presets.py          # (re)write sweeps/<model>_<phase>.yaml

The same list drives the report's latency-vs-batch figures, so a preset's rows compose into a
step without any mapping by hand. Rendering is torch-free; the script counts points with
harness.sweep.expand (the header must carry the true count).
"""

from __future__ import annotations

import math
import textwrap
from dataclasses import dataclass

from harness.workloads.derive import LAYER_OPS, WorkItem, resident_bytes_per_rank, step_items
from harness.workloads.models import MODELS, ModelConfig

DECODE_BATCHES = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512)
PREFILL_BATCHES = (1, 2, 4, 8, 16)
DECODE_KV_LEN = 4096  # tokens already in the cache when the step runs
PREFILL_SEQ_LEN = 2048  # tokens per prompt
GEMM_PROVIDERS = ("cublas", "hipblaslt", "own-triton")  # hipblaslt: the same preset on AMD
ATTENTION_PROVIDERS = ("sdpa-flash", "sdpa-cudnn", "flash-attn", "own-triton")
LAYER_OP_PROVIDERS = ("own-triton", "torch-compile", "torch-eager")
GUARD_FACTOR = 1.25  # max_points = points x this, rounded up to a multiple of 10


@dataclass(frozen=True)
class Workload:
    """One model served one way: the points of a latency-vs-batch curve."""

    model: str  # key of MODELS
    tp: int
    phase: str  # prefill | decode
    context: int  # prefill: tokens per prompt; decode: KV length
    batches: tuple[int, ...]
    dtype: str = "bf16"
    tag: str = ""  # told apart from the model's default serving: "_tp2"

    @property
    def name(self) -> str:
        return f"{self.model}{self.tag}_{self.phase}"

    @property
    def config(self) -> ModelConfig:
        return MODELS[self.model]

    def items(self, batch: int) -> list[WorkItem]:
        return step_items(self.config, self.tp, self.phase, batch, self.context, self.dtype)

    def resident_bytes(self, batch: int) -> int:
        """Weights and KV cache one rank holds at `batch` (derive.resident_bytes_per_rank)."""
        return resident_bytes_per_rank(
            self.config, self.tp, self.phase, batch, self.context, self.dtype
        )

    def tokens(self, batch: int) -> int:
        """Tokens one step produces (decode) or consumes (prefill)."""
        return batch * self.context if self.phase == "prefill" else batch

    def describe(self) -> str:
        what = (
            f"prefill of {self.context}-token prompts"
            if self.phase == "prefill"
            else f"decode against a {self.context}-token KV cache"
        )
        return (
            f"{self.config.name} ({self.config.hf_id}), tensor parallel {self.tp}, {what}, "
            f"batch {self.batches[0]}..{self.batches[-1]}, {self.dtype}"
        )


# Tensor parallel degrees that fit a 141 GB H200 at bf16 (70B: 35 GB of weights per rank).
_TP = {
    "llama3_8b": 1,
    "llama3_70b": 4,
    "llama3_405b": 8,
    "qwen2_5_7b": 1,
    "qwen2_5_72b": 4,
    "mistral_7b": 1,
    "mixtral_8x7b": 1,
}
WORKLOADS: tuple[Workload, ...] = tuple(
    w
    for model, tp in _TP.items()
    for w in (
        Workload(model, tp, "decode", DECODE_KV_LEN, DECODE_BATCHES),
        Workload(model, tp, "prefill", PREFILL_SEQ_LEN, PREFILL_BATCHES),
    )
) + (
    # Llama-3-70B on two H200s (issue 23): each rank's kernels and the all-reduces between them
    Workload("llama3_70b", 2, "decode", DECODE_KV_LEN, DECODE_BATCHES, tag="_tp2"),
)


def get_workload(name: str) -> Workload:
    for w in WORKLOADS:
        if w.name == name:
            return w
    raise ValueError(f"workload: unknown '{name}'; allowed: {', '.join(w.name for w in WORKLOADS)}")


def _flow(values) -> str:
    return "[" + ", ".join(str(v).lower() if isinstance(v, bool) else str(v) for v in values) + "]"


def sweep_groups(w: Workload) -> list[tuple[str, dict]]:
    """(comment, group) pairs: GEMMs whose M follows the same series share a group (product over
    M, zip over N, K); attention is one group over batch."""
    series: dict[tuple[int, ...], list[WorkItem]] = {}
    attention: list[WorkItem] = []
    layer_ops: dict[tuple, tuple[list[str], dict, dict]] = {}  # key -> names, product, fixed
    for name in dict.fromkeys(i.name for i in w.items(w.batches[0])):
        per_batch = [next(i for i in w.items(b) if i.name == name) for b in w.batches]
        if per_batch[0].op == "attention":
            attention = per_batch
            continue
        if per_batch[0].op == "collective":  # measured by sweeps/collectives.yaml on its host
            continue
        if per_batch[0].op in LAYER_OPS:
            axis = "batch" if per_batch[0].op == "kv_append" else "m"
            fixed = {k: v for k, v in per_batch[0].problem.items() if k != axis}
            values = list(dict.fromkeys(i.problem[axis] for i in per_batch))
            key = (per_batch[0].op, tuple(fixed.items()), tuple(values))
            layer_ops.setdefault(key, ([], {axis: values}, fixed))[0].append(name)
            continue
        ms = tuple(dict.fromkeys(i.problem["m"] for i in per_batch))
        series.setdefault(ms, []).append(per_batch[0])
    groups = []
    for ms, items in series.items():
        comment = ", ".join(i.name for i in items)
        group = {
            "op": "gemm",
            "providers": list(GEMM_PROVIDERS),
            "product": {"m": list(ms)},
            "fixed": {"dtype": w.dtype, "layout": "nt"},
            "zip": {"n": [i.problem["n"] for i in items], "k": [i.problem["k"] for i in items]},
        }
        groups.append((comment, group))
    fixed = {k: v for k, v in attention[0].problem.items() if k != "batch"}
    if fixed.get("kv_layout") == "dense":
        fixed = {k: v for k, v in fixed.items() if k not in ("kv_layout", "page_size")}
    groups.append(
        (
            "attention",
            {
                "op": "attention",
                "providers": list(ATTENTION_PROVIDERS),
                "product": {"batch": list(w.batches)},
                "fixed": fixed,
            },
        )
    )
    for (op, _, _), (names, product, fixed) in layer_ops.items():
        group = {"op": op, "providers": list(LAYER_OP_PROVIDERS), "product": product}
        groups.append((", ".join(names), {**group, "fixed": fixed}))
    return groups


def max_points_for(points: int) -> int:
    return int(math.ceil(points * GUARD_FACTOR / 10) * 10)


def render(w: Workload, points: int) -> str:
    """The preset file: header with command and point count, then values only."""
    m = w.config
    lines = [
        f"# harness run sweep={w.name}    (points: {points})",
        "# Generated by `python scripts/gen_workload_presets.py` from harness/workloads; do not edit.",
        *textwrap.wrap(f"{w.describe()}.", 98, initial_indent="# ", subsequent_indent="# "),
        "# One step's problems on one rank: per layer the projection GEMMs (y = x W^T, layout nt,",
        "# N or K divided by tp), attention, the two residual-add RMSNorms, rotary, the KV-cache",
        "# append and SiLU-and-multiply; once per step the final norm and the LM head on one token",
        "# per sequence.",
    ]
    if m.is_moe:
        lines.append(
            f"# MoE: {m.experts} experts, top-{m.top_k}; expert GEMMs at the tokens each "
            "active expert sees under balanced routing."
        )
    if w.tp > 1:
        lines.append(
            f"# The two all-reduces per layer ({w.tp} ranks) come from `harness run "
            f"sweep=collectives` on a {w.tp}-GPU host."
        )
    lines += [
        "sweep:",
        f"  name: {w.name}",
        f"  description: {m.name} TP{w.tp} {w.phase} step, context {w.context}, "
        f"batch {w.batches[0]}..{w.batches[-1]}, {w.dtype}",
        f"  max_points: {max_points_for(points)}",
        "  groups:",
    ]
    for comment, g in sweep_groups(w):
        lines.append(f"    # {comment}")
        lines.append(f"    - op: {g['op']}")
        lines.append(f"      providers: {_flow(g['providers'])}")
        for part in ("product", "fixed", "zip"):
            if part in g:
                body = ", ".join(
                    f"{k}: {_flow(v) if isinstance(v, list) else _scalar(v)}"
                    for k, v in g[part].items()
                )
                lines.append(f"      {part}: {{{body}}}")
    return "\n".join(lines) + "\n"


def _scalar(v) -> str:
    return str(v).lower() if isinstance(v, bool) else str(v)
