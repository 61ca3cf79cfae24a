"""One decoder layer's decode step assembled from the own Triton kernels, fused where vLLM fuses:
residual add + RMSNorm, qkv GEMM, rotary, KV append, split-KV paged decode attention, o GEMM,
residual add + RMSNorm, gate_up GEMM, SiLU-and-multiply, down GEMM (nine launches, plus the
decode's split combine).

Every kernel is prepared (checked, tuned, compiled, its output allocated) before the first call,
each reading the buffer the one before it writes, so a call only launches. With graph=True the
nine launches are captured once as a CUDA graph and a call replays it: what a serving engine's
decode step costs without the host, against the same launches issued one by one.

Tensor parallel: given the rank's shards (heads and kv_heads per rank) and an `all_reduce` that
sums a tensor in place across the ranks (torch.distributed's, NCCL on GPUs), the partial o and
down outputs are all-reduced as steps of their own, inside the graph when there is one, as
vLLM's TP decode step does.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch

from .attention_decode import prepare_decode
from .gemm import prepare_matmul
from .layer_ops import prepare_kv_append, prepare_rmsnorm, prepare_rope, prepare_silu_mul


@dataclass
class DecoderLayerLaunch:
    """The prepared layer: `outputs` = (out [B, hidden], r2 [B, hidden]) after every call."""

    steps: list[tuple[str, Callable[[], Any]]]
    outputs: tuple[torch.Tensor, torch.Tensor]
    config: dict[str, Any] = field(default_factory=dict)
    graph: Any = None  # torch.cuda.CUDAGraph once captured

    @property
    def out(self) -> torch.Tensor:
        return self.outputs[0]

    def __call__(self) -> tuple[torch.Tensor, torch.Tensor]:
        if self.graph is not None:
            self.graph.replay()
        else:
            for _, launch in self.steps:
                launch()
        return self.outputs


def prepare_decoder_layer(
    inputs: dict[str, torch.Tensor],
    *,
    heads: int,
    kv_heads: int,
    eps: float,
    sms: int,
    graph: bool = False,
    all_reduce: Callable[[torch.Tensor], Any] | None = None,
) -> DecoderLayerLaunch:
    """inputs as harness DecoderLayerProblem.make_inputs makes them (x, residual, the four
    weights [N, K], two norm weights, the paged caches, block_table, cache_seqlens (after the
    append), slot_mapping, positions, cos_sin); heads / kv_heads on this rank (of the model at
    tensor parallel 1); all_reduce: the in-place sum across ranks, None at tensor parallel 1."""
    x, residual = inputs["x"], inputs["residual"]
    batch, hidden = x.shape
    head_dim = inputs["k_cache"].shape[-1]
    q_cols, kv_cols = heads * head_dim, kv_heads * head_dim
    steps: list[tuple[str, Callable[[], Any]]] = []

    def add(name: str, launch: Any) -> Any:
        # Run each step once as it is prepared: the next step's inputs are this one's outputs,
        # allocated empty, and prepare_matmul checks and times its candidates on them. Unrun,
        # the GEMMs were tuned on whatever the allocator held (zeros in a fresh process, so
        # the check passed on zeros and the timing was of zeros; garbage after other work, so
        # every candidate failed the check). Every step is idempotent: timing repeats them.
        launch()
        steps.append((name, launch))
        return launch

    norm_in = add("add_rmsnorm", prepare_rmsnorm(x, inputs["w_in"], residual, eps))
    h, r1 = norm_in.outputs
    qkv = add("qkv", prepare_matmul(h, inputs["w_qkv"].t()))
    q = qkv.out[:, :q_cols].view(batch, heads, head_dim)
    k = qkv.out[:, q_cols : q_cols + kv_cols].view(batch, kv_heads, head_dim)
    v = qkv.out[:, q_cols + kv_cols :].view(batch, kv_heads, head_dim)
    rope = add("rope", prepare_rope(q, k, inputs["positions"], inputs["cos_sin"]))
    q_rot, k_rot = rope.outputs
    add(
        "kv_append",
        prepare_kv_append(k_rot, v, inputs["k_cache"], inputs["v_cache"], inputs["slot_mapping"]),
    )
    attn = add(
        "attention",
        prepare_decode(
            q_rot.view(batch, 1, heads, head_dim).transpose(1, 2),  # [B, Hq, 1, D]
            inputs["k_cache"],
            inputs["v_cache"],
            cache_seqlens=inputs["cache_seqlens"],
            block_table=inputs["block_table"],
            causal=True,
        ),
    )
    attn_rows = attn.out.transpose(1, 2).reshape(batch, q_cols)  # a view: out is [B, 1, Hq, D]
    o = add("o", prepare_matmul(attn_rows, inputs["w_o"].t()))
    if all_reduce is not None:  # this rank's heads' share of a @ W_o^T: sum the ranks' shares
        add("all_reduce_o", lambda: all_reduce(o.out))
    norm_post = add("add_rmsnorm_post", prepare_rmsnorm(o.out, inputs["w_post"], r1, eps))
    h2, r2 = norm_post.outputs
    gate_up = add("gate_up", prepare_matmul(h2, inputs["w_gate_up"].t()))
    act = add("silu_mul", prepare_silu_mul(gate_up.out, sms))
    down = add("down", prepare_matmul(act.out, inputs["w_down"].t()))
    if all_reduce is not None:
        add("all_reduce_down", lambda: all_reduce(down.out))
    if attn_rows.data_ptr() != attn.out.data_ptr():
        raise RuntimeError("attention output is not laid out [B, 1, Hq, D]: o would read a copy")
    config: dict[str, Any] = {
        "kernels": [name for name, _ in steps],
        "configs": {name: dict(getattr(launch, "config", {})) for name, launch in steps},
        "graph": graph,
        "all_reduce": all_reduce is not None,
    }
    launch = DecoderLayerLaunch(steps, (down.out, r2), config)
    if graph:
        launch.graph = _capture(launch)
    return launch


def _capture(launch: DecoderLayerLaunch) -> Any:
    """Capture the steps as one CUDA graph (after a warm call on a side stream, as torch asks)."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        launch()  # JIT and autotuning are done; this warms allocator and caches
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        launch()
    torch.cuda.synchronize()
    return graph
