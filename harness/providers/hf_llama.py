"""Llama's decoder-layer ops as PyTorch writes them (Hugging Face transformers' LlamaRMSNorm,
apply_rotary_pos_emb, LlamaMLP's SiLU-and-multiply; vLLM's torch fallback for the paged KV-cache
write), and how they are compiled: the torch-eager and torch-compile baselines of the layer_ops
problems and of the decoder_layer problem share both."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import torch

from harness.device import DeviceInfo
from harness.problems.attention import gather_pages
from harness.problems.layer_ops import RMS_EPS


def rms_norm(x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    """LlamaRMSNorm.forward: fp32 variance, rounded back before the weight multiplies."""
    xf = x.float()
    xf = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + RMS_EPS)
    return weight * xf.to(x.dtype)


def add_rms_norm(x, residual, weight):
    r = x + residual  # the decoder layer's residual add, in the model dtype
    return rms_norm(r, weight), r


def silu_mul(x: torch.Tensor) -> torch.Tensor:
    n = x.shape[1] // 2
    return torch.nn.functional.silu(x[:, :n]) * x[:, n:]


def rotate_half(x: torch.Tensor) -> torch.Tensor:
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def rope(q, k, positions, cos_sin):
    """apply_rotary_pos_emb with cos/sin gathered at the positions, in the model dtype."""
    half = cos_sin.shape[1] // 2
    rows = cos_sin[positions]  # [m, D]
    cos = torch.cat([rows[:, :half], rows[:, :half]], dim=-1)[:, None].to(q.dtype)
    sin = torch.cat([rows[:, half:], rows[:, half:]], dim=-1)[:, None].to(q.dtype)
    return q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin


def kv_append(key, value, k_cache, v_cache, slots):
    """index_copy_ into the caches viewed as [slots, Hkv, D] (vLLM's torch fallback's scatter)."""
    k_cache.view(-1, *k_cache.shape[2:]).index_copy_(0, slots, key)
    v_cache.view(-1, *v_cache.shape[2:]).index_copy_(0, slots, value)
    return k_cache, v_cache


# --- one decoder layer's decode step, in three pieces as vLLM's piecewise compile cuts it ------


def layer_pre(x, residual, w_in, w_qkv, positions, cos_sin, heads: int, kv_heads: int):
    """Residual add + RMSNorm, the qkv projection and rotary: (q [B, Hq, D], k, v [B, Hkv, D],
    the residual stream)."""
    batch, d = x.shape[0], cos_sin.shape[1]
    h, r1 = add_rms_norm(x, residual, w_in)
    q, k, v = torch.nn.functional.linear(h, w_qkv).split([heads * d, kv_heads * d, kv_heads * d], 1)
    q, k = rope(q.view(batch, heads, d), k.view(batch, kv_heads, d), positions, cos_sin)
    return q, k, v.view(batch, kv_heads, d), r1


def layer_attention(q, k, v, k_cache, v_cache, slots, block_table, kv_len: int):
    """The KV append, then attention of each new query over its sequence's kv_len pages: the
    pages gathered into a dense copy (torch has no paged kernel) and SDPA with GQA."""
    kv_append(k, v, k_cache, v_cache, slots)
    keys = gather_pages(k_cache, block_table, kv_len)
    values = gather_pages(v_cache, block_table, kv_len)
    batch, heads, d = q.shape
    out = torch.nn.functional.scaled_dot_product_attention(
        q.view(batch, heads, 1, d), keys, values, enable_gqa=True
    )  # one query at the end of its sequence sees every key: no mask needed
    return out.view(batch, heads * d)


def layer_post(attn, r1, w_o, w_post, w_gate_up, w_down):
    """o, residual add + RMSNorm, gate_up, SiLU-and-multiply, down: (out, residual stream)."""
    h2, r2 = add_rms_norm(torch.nn.functional.linear(attn, w_o), r1, w_post)
    act = silu_mul(torch.nn.functional.linear(h2, w_gate_up))
    return torch.nn.functional.linear(act, w_down), r2


# --- torch.compile, as both baselines run it ------------------------------------------------

COMPILE = "torch.compile(dynamic=False, fullgraph=True), default mode"


def compiled_supports(problem: Any, device: DeviceInfo) -> str | None:
    if not device.is_gpu:
        return "torch.compile is measured on GPUs (on the CPU it builds C++, not the GPU kernels)"
    return None


def compile_fns(*fns: Callable[..., Any]) -> list[Callable[..., Any]]:
    """Each fn through torch.compile, from a fresh Dynamo: a sweep's shapes would otherwise pile
    up as recompiles of one function until Dynamo's recompile limit fails the rest (H200
    layer_ops, first run)."""
    torch._dynamo.reset()
    return [torch.compile(fn, dynamic=False, fullgraph=True) for fn in fns]


def warm(call: Callable[[], Any], device: DeviceInfo) -> float:
    """Run call once, so Inductor generates and compiles its kernels outside any timing; the
    seconds it took."""
    t0 = time.perf_counter()
    call()
    if device.is_gpu:
        torch.cuda.synchronize(device.index)
    return round(time.perf_counter() - t0, 2)
