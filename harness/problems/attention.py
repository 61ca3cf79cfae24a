"""Attention forward problem: prefill (q_len == kv_len), chunked prefill and decode (small q_len).

Layouts handed to providers:
  q            [B, Hq, Sq, D]
  dense  k, v  [B, Hkv, Skv, D]
  paged  k_cache, v_cache [num_pages, page_size, Hkv, D] with block_table [B, pages_per_seq]
               (int32, pages shuffled) -- the vLLM / flash-attn paged layout
  cache_seqlens [B] int32 (= kv_len for every sequence; with ragged, AttentionProblem.seq_lens)
Causal masks use bottom-right alignment: query i attends keys j <= i + (kv_len - q_len), with
kv_len the sequence's own length.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from typing import Any, ClassVar

import torch

from harness.problems.base import Problem, fill_tensor, generator, require_choice, require_positive
from harness.problems.dtypes import get_dtype

HEAD_DIMS = (32, 64, 96, 128, 192, 256)
KV_LAYOUTS = ("dense", "paged")
PAGE_SIZES = (16, 32, 64, 128, 256, 512)
ATTENTION_DTYPES = ("fp16", "bf16", "fp32")
# Reference memory cap: the fp32 score block of one query chunk stays under this many bytes.
_REF_CHUNK_BYTES = 1 << 30


def causal_pairs(q_len: int, kv_len: int) -> int:
    """(query, key) pairs a bottom-right-aligned causal mask keeps, the diagonal included."""
    offset = kv_len - q_len
    # Row i keeps keys 0 .. i + offset, clipped to [0, kv_len].
    return sum(min(kv_len, max(0, i + offset + 1)) for i in range(q_len))


@dataclass(frozen=True)
class AttentionProblem(Problem):
    """One attention forward instance (softmax scale 1/sqrt(head_dim))."""

    op: ClassVar[str] = "attention"
    batch: int
    q_heads: int
    kv_heads: int
    q_len: int
    kv_len: int
    head_dim: int = 128
    causal: bool = False
    dtype: str = "bf16"
    kv_layout: str = "dense"
    page_size: int = 0  # 0 for dense caches
    # Paged caches only: sequences of different lengths, as a serving batch holds (seq_lens).
    ragged: bool = False

    @property
    def phase(self) -> str:
        if self.q_len == self.kv_len:
            return "prefill"
        return "decode" if self.q_len <= 16 else "chunked-prefill"

    @property
    def pages_per_seq(self) -> int:
        return -(-self.kv_len // self.page_size) if self.kv_layout == "paged" else 0

    def seq_lens(self) -> list[int]:
        """Each sequence's KV length. kv_len for all; with ragged, spread evenly from kv_len down
        to half of it (not below q_len, not above kv_len), in an order shuffled by a fixed seed:
        a serving batch mixes long and short requests, and every provider, run and GPU sees the
        same lengths (they follow from the problem alone, like its FLOPs and bytes)."""
        if not self.ragged:
            return [self.kv_len] * self.batch
        low = min(self.kv_len, max(self.q_len, self.kv_len // 2))  # the pages hold kv_len
        steps = max(1, self.batch - 1)
        lens = [self.kv_len - b * (self.kv_len - low) // steps for b in range(self.batch)]
        random.Random(self.batch).shuffle(lens)
        return lens

    def axes(self) -> dict[str, Any]:
        """Without ragged when it is off, so points measured before it keep their keys."""
        axes = super().axes()
        if not self.ragged:
            del axes["ragged"]
        return axes

    def validate(self) -> None:
        require_positive(
            batch=self.batch,
            q_heads=self.q_heads,
            kv_heads=self.kv_heads,
            q_len=self.q_len,
            kv_len=self.kv_len,
            head_dim=self.head_dim,
        )
        require_choice("dtype", self.dtype, ATTENTION_DTYPES)
        require_choice("head_dim", self.head_dim, HEAD_DIMS)
        require_choice("kv_layout", self.kv_layout, KV_LAYOUTS)
        if self.q_heads % self.kv_heads:
            raise ValueError(
                f"q_heads: {self.q_heads} is not divisible by kv_heads={self.kv_heads}; "
                "allowed: a multiple of kv_heads"
            )
        if self.causal and self.q_len > self.kv_len:
            raise ValueError(
                f"q_len: {self.q_len} > kv_len={self.kv_len} with causal; allowed: <= kv_len"
            )
        if self.kv_layout == "paged":
            require_choice("page_size", self.page_size, PAGE_SIZES)
        elif self.page_size:
            raise ValueError(f"page_size: {self.page_size} given for a dense cache; allowed: 0")
        if self.ragged and self.kv_layout != "paged":
            raise ValueError("ragged: true needs kv_layout=paged; allowed: false for a dense cache")

    def score_pairs(self) -> int:
        """Computed (query, key) pairs per q_head, summed over the batch's sequences."""
        if self.causal:
            return sum(causal_pairs(self.q_len, n) for n in self.seq_lens())
        return self.q_len * sum(self.seq_lens())

    def flops(self) -> int:
        """QK^T and PV: 2 matmuls x 2 FLOP per multiply-add, only over computed pairs."""
        return 4 * self.q_heads * self.head_dim * self.score_pairs()

    def min_bytes(self) -> int:
        """Q read, each KV head's K and V read once (GQA shares them), O written, and the block
        table's entries for the pages each sequence uses."""
        e = get_dtype(self.dtype).bytes
        q = self.batch * self.q_heads * self.q_len * self.head_dim
        lens = self.seq_lens()
        kv = 2 * self.kv_heads * sum(lens) * self.head_dim
        table = sum(-(-n // self.page_size) for n in lens) * 4 if self.kv_layout == "paged" else 0
        return (2 * q + kv) * e + table

    def tolerance(self) -> float:
        return get_dtype(self.dtype).attention_tol

    def label(self) -> str:
        mask = " causal" if self.causal else ""
        paged = f" paged{self.page_size}" if self.kv_layout == "paged" else ""
        paged += " ragged" if self.ragged else ""
        return (
            f"attn b{self.batch} h{self.q_heads}/{self.kv_heads} s{self.q_len}/{self.kv_len} "
            f"d{self.head_dim}{mask}{paged} {self.dtype}"
        )

    def make_inputs(self, seed: int, fill: str, device: torch.device) -> dict[str, Any]:
        dt = get_dtype(self.dtype).torch_dtype
        gen = generator(seed, device)
        B, Hq, Hkv, Sq, Skv, D = (
            self.batch,
            self.q_heads,
            self.kv_heads,
            self.q_len,
            self.kv_len,
            self.head_dim,
        )
        q = fill_tensor((B, Hq, Sq, D), dt, fill, gen, device)
        seqlens = torch.tensor(self.seq_lens(), dtype=torch.int32, device=device)
        if self.kv_layout == "dense":
            k = fill_tensor((B, Hkv, Skv, D), dt, fill, gen, device)
            v = fill_tensor((B, Hkv, Skv, D), dt, fill, gen, device)
            return {"q": q, "k": k, "v": v, "cache_seqlens": seqlens}
        pages = B * self.pages_per_seq
        k_cache = fill_tensor((pages, self.page_size, Hkv, D), dt, fill, gen, device)
        v_cache = fill_tensor((pages, self.page_size, Hkv, D), dt, fill, gen, device)
        # Pages in shuffled order, as an allocator that has run for a while hands them out.
        perm = torch.randperm(pages, generator=gen, device=device).to(torch.int32)
        block_table = perm.view(B, self.pages_per_seq).contiguous()
        return {
            "q": q,
            "k_cache": k_cache,
            "v_cache": v_cache,
            "block_table": block_table,
            "cache_seqlens": seqlens,
        }

    def reference(self, inputs: dict[str, Any]) -> torch.Tensor:
        if self.kv_layout == "dense":
            return attention_reference(inputs["q"], inputs["k"], inputs["v"], self.causal)
        # Paged: gather a slice of the batch's pages at a time (K and V under _REF_CHUNK_BYTES
        # together), since sequences do not interact. Gathered whole, batch 256 x KV 32768
        # (8 KV heads, D 128) needed 2 x 16 GiB of dense copies beside the 32 GiB cache: the
        # H100's 80 GB ran out in the reference, before any kernel ran (fmha_decode_paged).
        q, table = inputs["q"], inputs["block_table"]
        out = torch.empty(q.shape, dtype=torch.float32, device=q.device)
        if self.ragged:  # one sequence at a time, each gathered to its own length
            for b, n in enumerate(self.seq_lens()):
                k = gather_pages(inputs["k_cache"], table[b : b + 1], n)
                v = gather_pages(inputs["v_cache"], table[b : b + 1], n)
                out[b : b + 1] = attention_reference(q[b : b + 1], k, v, self.causal)
            return out
        per_seq = 2 * self.kv_heads * self.kv_len * self.head_dim * q.element_size()
        step = max(1, _REF_CHUNK_BYTES // max(1, per_seq))
        for b0 in range(0, self.batch, step):
            rows = table[b0 : b0 + step]
            k = gather_pages(inputs["k_cache"], rows, self.kv_len)
            v = gather_pages(inputs["v_cache"], rows, self.kv_len)
            out[b0 : b0 + step] = attention_reference(q[b0 : b0 + step], k, v, self.causal)
        return out


def gather_pages(cache: torch.Tensor, block_table: torch.Tensor, kv_len: int) -> torch.Tensor:
    """[pages, P, Hkv, D] + [B, n] table -> [B, Hkv, kv_len, D] dense copy."""
    B, n = block_table.shape
    P, Hkv, D = cache.shape[1:]
    seq = cache[block_table.long()]  # [B, n, P, Hkv, D]
    return seq.reshape(B, n * P, Hkv, D)[:, :kv_len].permute(0, 2, 1, 3).contiguous()


def attention_reference(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool
) -> torch.Tensor:
    """fp32 softmax(Q K^T / sqrt(D)) V with bottom-right causal mask.

    q [B, Hq, Sq, D], k and v [B, Hkv, Skv, D] -> [B, Hq, Sq, D] fp32. The query heads of a KV
    head are stacked along the query axis ([B, Hkv, group * Sq, D]) rather than K and V copied
    per query head, and fp32 K/V and scores are made a slice of the batch and of the query rows
    at a time, each under _REF_CHUNK_BYTES: a decode batch of 512 x KV 4096 (Llama-3-8B) needed
    32 GiB for expanded fp32 K alone, more than an 80 GB H100 had left beside its inputs.
    """
    B, Hq, Sq, D = q.shape
    Hkv, Skv = k.shape[1], k.shape[2]
    group = Hq // Hkv
    scale = 1.0 / math.sqrt(D)
    out = torch.empty((B, Hq, Sq, D), dtype=torch.float32, device=q.device)
    batch_chunk = max(1, min(B, _REF_CHUNK_BYTES // max(1, 2 * Hkv * Skv * D * 4)))
    cols = torch.arange(Skv, device=q.device)
    for b0 in range(0, B, batch_chunk):
        b1 = min(B, b0 + batch_chunk)
        kf, vf = k[b0:b1].float(), v[b0:b1].float()  # [b, Hkv, Skv, D]
        qg = q[b0:b1].reshape(b1 - b0, Hkv, group * Sq, D)  # head h uses KV head h // group
        og = out[b0:b1].view(b1 - b0, Hkv, group * Sq, D)
        rows_chunk = max(1, min(group * Sq, _REF_CHUNK_BYTES // max(1, (b1 - b0) * Hkv * Skv * 4)))
        for r0 in range(0, group * Sq, rows_chunk):
            r1 = min(group * Sq, r0 + rows_chunk)
            s = torch.matmul(qg[:, :, r0:r1].float(), kf.transpose(-1, -2)) * scale
            if causal:  # row r is query r % Sq of its head
                rows = torch.arange(r0, r1, device=q.device) % Sq + (Skv - Sq)
                s.masked_fill_(cols[None, :] > rows[:, None], float("-inf"))
            og[:, :, r0:r1] = torch.matmul(torch.softmax(s, dim=-1), vf)
    return out
