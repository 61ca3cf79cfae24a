"""One decoder layer's decode step, measured whole: the problem the composed step is held against.

For `batch` sequences with `kv_len` tokens cached, one new token each, a Llama-style layer on one
rank (tensor parallel 1) runs, as vLLM does:

    r1 = x + residual;  h = rmsnorm(r1) * w_in               (fused residual add + RMSNorm)
    q, k, v = split(h @ W_qkv^T);  q, k = rope(q, k, pos)
    append k, v to the paged cache at position kv_len
    a = attention(q, cache[: kv_len + 1])                    (GQA, the new token sees all)
    r2 = a @ W_o^T + r1;  h2 = rmsnorm(r2) * w_post          (fused again)
    out = (silu(g) * u) @ W_down^T,  [g | u] = h2 @ W_gate_up^T

and hands (out, r2) to the next layer, whose first norm adds them. Output [batch, 2 hidden] =
[out | r2]. Model sizes come from the workload catalog (harness/workloads/models.py).

Tensor parallel (tp > 1, Megatron style, as vLLM shards a Llama layer): each of tp ranks holds
1/tp of the query and KV heads (its rows of W_qkv, its columns of W_o, its KV-cache heads) and
1/tp of the MLP (its rows of gate and of up, its columns of W_down), so a and (silu(g) * u) are
the rank's slices and a @ W_o^T and the down projection are partial sums: one all-reduce after
each completes them, and every rank ends with the whole [out | r2]. The ranks run in lockstep
(harness.collectives), each drawing the full layer from the same seed and keeping its shards;
the check holds every rank's output against the unsharded fp32 layer.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

import torch

from harness.problems.attention import PAGE_SIZES, attention_reference, gather_pages
from harness.problems.base import Problem, fill_tensor, generator, require_choice, require_positive
from harness.problems.dtypes import get_dtype
from harness.problems.layer_ops import rms_norm_reference, rope_reference, rope_table
from harness.workloads.derive import step_items
from harness.workloads.models import MODELS, ModelConfig

# Intermediates are rounded to bf16 between seven kernels (two GEMM outputs feed GEMMs again),
# so the layer's error is a few times one GEMM's; 3e-2 still fails a wrong kernel by orders.
LAYER_TOL = {"bf16": 3e-2, "fp16": 1e-2}


@dataclass(frozen=True)
class DecoderLayerProblem(Problem):
    """One decode step of one decoder layer of `model` on `world_size` tensor-parallel ranks."""

    op: ClassVar[str] = "decoder_layer"
    model: str
    batch: int
    kv_len: int
    page_size: int = 16
    dtype: str = "bf16"
    # Tensor-parallel ranks, one process per device in lockstep (harness.collectives runs every
    # problem with more than one); named as the rows' column is.
    world_size: int = 1

    @property
    def tp(self) -> int:
        return self.world_size

    def axes(self) -> dict[str, Any]:
        """Without world_size at 1, so points measured before tensor parallel keep their keys."""
        axes = super().axes()
        if self.world_size == 1:
            del axes["world_size"]
        return axes

    @property
    def phase(self) -> str:
        return "decode"

    @property
    def config(self) -> ModelConfig:
        return MODELS[self.model]

    def validate(self) -> None:
        require_choice("model", self.model, [m for m, c in MODELS.items() if not c.is_moe])
        require_positive(batch=self.batch, kv_len=self.kv_len)
        require_choice("page_size", self.page_size, PAGE_SIZES)
        require_choice("dtype", self.dtype, tuple(LAYER_TOL))
        require_positive(world_size=self.world_size)
        c = self.config
        for name, size in (
            ("heads", c.heads),
            ("kv_heads", c.kv_heads),
            ("intermediate", c.intermediate),
        ):
            if size % self.tp:
                raise ValueError(
                    f"world_size: {self.tp} does not divide {self.model}'s {name} ({size})"
                )

    def _items(self):
        items = step_items(self.config, self.tp, "decode", self.batch, self.kv_len, self.dtype,
                           "paged", self.page_size)  # fmt: skip
        return [i for i in items if i.per_layer]

    def flops(self) -> int:
        """The per-layer kernels' work on one rank, as the composition counts it."""
        return sum(i.flops() * i.count for i in self._items())

    def min_bytes(self) -> int:
        """Sum of every per-layer kernel's minimum bytes (each kernel reads its inputs from HBM)."""
        return sum(i.min_bytes() * i.count for i in self._items())

    def tolerance(self) -> float:
        return LAYER_TOL[self.dtype]

    def label(self) -> str:
        tp = f" tp{self.tp}" if self.tp > 1 else ""
        return (
            f"decoder_layer {self.model} b{self.batch} kv{self.kv_len} "
            f"page{self.page_size} {self.dtype}{tp}"
        )

    @property
    def pages_per_seq(self) -> int:
        return -(-(self.kv_len + 1) // self.page_size)

    def make_inputs(
        self, seed: int, fill: str, device: torch.device, rank: int = 0
    ) -> dict[str, Any]:
        """The layer's inputs; with tp > 1, rank `rank`'s shards, and under "full" the whole
        layer's tensors (the same on every rank) that the reference reads."""
        full = self._full_inputs(seed, fill, device)
        if self.tp == 1:
            return full
        return {**full, **self.shard(full, rank), "full": full}

    def shard(self, full: dict[str, Any], rank: int) -> dict[str, torch.Tensor]:
        """Rank `rank`'s slices of the sharded tensors: its query and KV heads' rows of W_qkv,
        its query heads' columns of W_o, its rows of gate and of up, its columns of W_down, its
        KV heads of both caches. Other inputs are replicated."""
        c, tp = self.config, self.tp
        if not 0 <= rank < tp:
            raise ValueError(f"rank: {rank}; allowed: 0..{tp - 1}")
        D, hq, hkv, inter = c.head_dim, c.heads // tp, c.kv_heads // tp, c.intermediate // tp

        def rows(w: torch.Tensor, start: int, n: int) -> torch.Tensor:
            return w[start + rank * n : start + (rank + 1) * n]

        w_qkv = full["w_qkv"]
        q_end, k_end = c.heads * D, (c.heads + c.kv_heads) * D
        heads = slice(rank * hkv, (rank + 1) * hkv)
        return {
            "w_qkv": torch.cat(
                [rows(w_qkv, 0, hq * D), rows(w_qkv, q_end, hkv * D), rows(w_qkv, k_end, hkv * D)]
            ),
            "w_o": full["w_o"][:, rank * hq * D : (rank + 1) * hq * D].contiguous(),
            "w_gate_up": torch.cat(
                [rows(full["w_gate_up"], 0, inter), rows(full["w_gate_up"], c.intermediate, inter)]
            ),
            "w_down": full["w_down"][:, rank * inter : (rank + 1) * inter].contiguous(),
            "k_cache": full["k_cache"][:, :, heads].contiguous(),
            "v_cache": full["v_cache"][:, :, heads].contiguous(),
        }

    def _full_inputs(self, seed: int, fill: str, device: torch.device) -> dict[str, Any]:
        c, dt = self.config, get_dtype(self.dtype).torch_dtype
        gen = generator(seed, device)
        B, H, D = self.batch, c.hidden, c.head_dim
        hq, hkv, inter = c.heads, c.kv_heads, c.intermediate

        def weight(n: int, k: int) -> torch.Tensor:  # [N, K], as a Linear layer stores it
            # 1/sqrt(K) keeps every activation O(1), as trained weights do
            w = fill_tensor((n, k), torch.float32, fill, gen, device) / math.sqrt(k)
            return w.to(dt)

        def norm_weight() -> torch.Tensor:
            return (1 + 0.1 * fill_tensor((H,), torch.float32, fill, gen, device)).to(dt)

        pages = B * self.pages_per_seq
        cache = (pages, self.page_size, hkv, D)
        table = torch.randperm(pages, generator=gen, device=device).to(torch.int32)
        table = table.view(B, self.pages_per_seq).contiguous()
        pos = self.kv_len  # the new token's position in every sequence
        slots = table[:, pos // self.page_size].long() * self.page_size + pos % self.page_size
        table_rows = max(pos + 1, 8192)
        return {
            "x": fill_tensor((B, H), dt, fill, gen, device),
            "residual": fill_tensor((B, H), dt, fill, gen, device),
            "w_in": norm_weight(),
            "w_post": norm_weight(),
            "w_qkv": weight((hq + 2 * hkv) * D, H),
            "w_o": weight(H, hq * D),
            "w_gate_up": weight(2 * inter, H),
            "w_down": weight(H, inter),
            "k_cache": fill_tensor(cache, dt, fill, gen, device),
            "v_cache": fill_tensor(cache, dt, fill, gen, device),
            "block_table": table,
            "cache_seqlens": torch.full((B,), pos + 1, dtype=torch.int32, device=device),
            "slot_mapping": slots.contiguous(),
            "positions": torch.full((B,), pos, dtype=torch.int64, device=device),
            "cos_sin": rope_table(D, device, table_rows),
        }

    def reference(self, inputs: dict[str, Any]) -> torch.Tensor:
        """fp32 throughout, the whole layer (tensor parallel or not); the caches are read, the
        appended token taken from k and v."""
        inputs = inputs.get("full", inputs)
        c = self.config
        B, D, hq, hkv = self.batch, c.head_dim, c.heads, c.kv_heads
        f = {
            k: v.float() for k, v in inputs.items() if torch.is_tensor(v) and v.is_floating_point()
        }
        r1 = f["x"] + f["residual"]
        h = rms_norm_reference(r1, f["w_in"])
        qkv = h @ f["w_qkv"].T
        q, k, v = qkv.split([hq * D, hkv * D, hkv * D], dim=1)
        cos_sin = inputs["cos_sin"][inputs["positions"]]
        q = rope_reference(q.view(B, hq, D), cos_sin)
        k = rope_reference(k.view(B, hkv, D), cos_sin)
        keys = gather_pages(inputs["k_cache"], inputs["block_table"], self.kv_len + 1).float()
        values = gather_pages(inputs["v_cache"], inputs["block_table"], self.kv_len + 1).float()
        keys[:, :, -1] = k
        values[:, :, -1] = v.view(B, hkv, D)
        attn = attention_reference(q.view(B, hq, 1, D), keys, values, causal=True)
        r2 = attn.view(B, hq * D) @ f["w_o"].T + r1
        h2 = rms_norm_reference(r2, f["w_post"])
        gate, up = (h2 @ f["w_gate_up"].T).chunk(2, dim=1)
        out = (torch.nn.functional.silu(gate) * up) @ f["w_down"].T
        return torch.cat([out, r2], dim=1)
