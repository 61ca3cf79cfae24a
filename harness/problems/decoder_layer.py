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
    """One decode step of one decoder layer of `model` (tensor parallel 1)."""

    op: ClassVar[str] = "decoder_layer"
    model: str
    batch: int
    kv_len: int
    page_size: int = 16
    dtype: str = "bf16"

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

    def _items(self):
        items = step_items(self.config, 1, "decode", self.batch, self.kv_len, self.dtype,
                           "paged", self.page_size)  # fmt: skip
        return [i for i in items if i.per_layer]

    def flops(self) -> int:
        """The per-layer kernels' work, as the composition counts it."""
        return sum(i.flops() * i.count for i in self._items())

    def min_bytes(self) -> int:
        """Sum of every per-layer kernel's minimum bytes (each kernel reads its inputs from HBM)."""
        return sum(i.min_bytes() * i.count for i in self._items())

    def tolerance(self) -> float:
        return LAYER_TOL[self.dtype]

    def label(self) -> str:
        return (
            f"decoder_layer {self.model} b{self.batch} kv{self.kv_len} "
            f"page{self.page_size} {self.dtype}"
        )

    @property
    def pages_per_seq(self) -> int:
        return -(-(self.kv_len + 1) // self.page_size)

    def make_inputs(self, seed: int, fill: str, device: torch.device) -> dict[str, Any]:
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
        """fp32 throughout; the caches are read, the appended token taken from k and v."""
        c = self.config
        B, D, hq, hkv = self.batch, c.head_dim, c.heads, c.kv_heads
        f = {k: v.float() for k, v in inputs.items() if v.is_floating_point()}
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
