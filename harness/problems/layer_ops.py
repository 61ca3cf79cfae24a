"""The memory-bound kernels a decoder layer runs between its GEMMs and its attention.

A serving engine (vLLM, SGLang) runs, per layer and per token batch: two RMSNorms fused with the
residual add before them, rotary embedding on q and k, SiLU-and-multiply between the gate/up
and down projections, and the append of the new K and V into the paged cache. Each is a stream
of a few bytes per element, so each row is judged in GB/s against the HBM read ceiling.

Axes reuse the row columns: `m` is the token count (batch x new tokens per sequence), `n` the
row width (hidden size, or the intermediate size for SiLU-and-multiply); the KV append takes
the attention problem's axes (batch, q_len new tokens per sequence on top of kv_len cached).
Outputs that a serving engine writes in place (the residual, q and k, the cache) are written
out of place here, with the same bytes, so repeated timed calls see the same inputs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import torch

from harness.problems.attention import HEAD_DIMS, PAGE_SIZES
from harness.problems.base import Problem, fill_tensor, generator, require_choice, require_positive
from harness.problems.dtypes import get_dtype

LAYER_OP_DTYPES = ("fp32", "fp16", "bf16")
RMS_EPS = 1e-5  # Llama-3's rms_norm_eps
ROPE_THETA = 500000.0  # Llama-3's rope_theta
ROPE_MAX_POSITIONS = 8192  # rows of the cos/sin table; positions are drawn below it


def _dtype_bytes(name: str) -> int:
    return get_dtype(name).bytes


def _check_dtype(name: str) -> None:
    require_choice("dtype", name, LAYER_OP_DTYPES)


@dataclass(frozen=True)
class _RowsProblem(Problem):
    """An op over m rows of n elements (tokens x width): its axes, validation, tolerance, label."""

    m: int
    n: int
    dtype: str = "bf16"

    def validate(self) -> None:
        require_positive(m=self.m, n=self.n)
        _check_dtype(self.dtype)

    def tolerance(self) -> float:
        return get_dtype(self.dtype).gemm_tol  # output rounding dominates, as in a GEMM

    def label(self) -> str:
        return f"{self.op} {self.m}x{self.n} {self.dtype}"


@dataclass(frozen=True)
class RmsNormProblem(_RowsProblem):
    """y = x / sqrt(mean(x^2) + eps) * w over rows of n: x [m, n], w [n] -> y [m, n]."""

    op: ClassVar[str] = "rmsnorm"

    def flops(self) -> int:
        return 4 * self.m * self.n  # square, sum, scale, weight: per element

    def min_bytes(self) -> int:
        e = _dtype_bytes(self.dtype)
        return (2 * self.m * self.n + self.n) * e  # x read, y written, w read once

    def make_inputs(self, seed: int, fill: str, device: torch.device) -> dict[str, Any]:
        dt, gen = get_dtype(self.dtype).torch_dtype, generator(seed, device)
        x = fill_tensor((self.m, self.n), dt, fill, gen, device)
        # A trained norm's weights sit near 1; randn around it keeps every column in play.
        w = (1 + 0.1 * fill_tensor((self.n,), torch.float32, fill, gen, device)).to(dt)
        return {"x": x, "weight": w}

    def reference(self, inputs: dict[str, Any]) -> torch.Tensor:
        return rms_norm_reference(inputs["x"].float(), inputs["weight"].float())


@dataclass(frozen=True)
class AddRmsNormProblem(RmsNormProblem):
    """r = x + residual; y = rmsnorm(r) * w: outputs [m, 2n] = [y | r] (both written)."""

    op: ClassVar[str] = "add_rmsnorm"

    def flops(self) -> int:
        return 5 * self.m * self.n

    def min_bytes(self) -> int:
        e = _dtype_bytes(self.dtype)
        return (4 * self.m * self.n + self.n) * e  # x, residual read; y, new residual written

    def make_inputs(self, seed: int, fill: str, device: torch.device) -> dict[str, Any]:
        inputs = super().make_inputs(seed, fill, device)
        gen = generator(seed + 1, device)
        dt = get_dtype(self.dtype).torch_dtype
        inputs["residual"] = fill_tensor((self.m, self.n), dt, fill, gen, device)
        return inputs

    def reference(self, inputs: dict[str, Any]) -> torch.Tensor:
        r = inputs["x"].float() + inputs["residual"].float()
        return torch.cat([rms_norm_reference(r, inputs["weight"].float()), r], dim=-1)


def rms_norm_reference(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """fp32 RMSNorm over the last axis."""
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + RMS_EPS) * w


@dataclass(frozen=True)
class SiluMulProblem(_RowsProblem):
    """y = silu(x[:, :n]) * x[:, n:]: the gate/up projection's output [m, 2n] -> [m, n]."""

    op: ClassVar[str] = "silu_mul"

    def flops(self) -> int:
        return 5 * self.m * self.n  # exp, add, divide, two multiplies: counted as 5

    def min_bytes(self) -> int:
        return 3 * self.m * self.n * _dtype_bytes(self.dtype)

    def make_inputs(self, seed: int, fill: str, device: torch.device) -> dict[str, Any]:
        dt, gen = get_dtype(self.dtype).torch_dtype, generator(seed, device)
        return {"x": fill_tensor((self.m, 2 * self.n), dt, fill, gen, device)}

    def reference(self, inputs: dict[str, Any]) -> torch.Tensor:
        x = inputs["x"].float()
        return torch.nn.functional.silu(x[:, : self.n]) * x[:, self.n :]


@dataclass(frozen=True)
class RopeProblem(Problem):
    """Rotary embedding (NeoX halves, as Llama is served) on q [m, Hq, D] and k [m, Hkv, D] at
    per-token positions, from an fp32 cos|sin table [ROPE_MAX_POSITIONS, D]. Output
    [m, (Hq + Hkv) D] = rotated q and k, flattened and joined."""

    op: ClassVar[str] = "rope"
    m: int
    q_heads: int
    kv_heads: int
    head_dim: int = 128
    dtype: str = "bf16"

    def validate(self) -> None:
        require_positive(m=self.m, q_heads=self.q_heads, kv_heads=self.kv_heads)
        require_choice("head_dim", self.head_dim, HEAD_DIMS)
        _check_dtype(self.dtype)

    @property
    def heads(self) -> int:
        return self.q_heads + self.kv_heads

    def flops(self) -> int:
        return 3 * self.m * self.heads * self.head_dim  # two multiplies and an add per element

    def min_bytes(self) -> int:
        """q and k read and written, positions (int64) read, each token's table row (fp32)."""
        qk = 2 * self.m * self.heads * self.head_dim * _dtype_bytes(self.dtype)
        return qk + self.m * 8 + self.m * self.head_dim * 4

    def tolerance(self) -> float:
        return get_dtype(self.dtype).gemm_tol

    def label(self) -> str:
        return f"{self.op} {self.m} h{self.q_heads}/{self.kv_heads} d{self.head_dim} {self.dtype}"

    def make_inputs(self, seed: int, fill: str, device: torch.device) -> dict[str, Any]:
        dt, gen = get_dtype(self.dtype).torch_dtype, generator(seed, device)
        q = fill_tensor((self.m, self.q_heads, self.head_dim), dt, fill, gen, device)
        k = fill_tensor((self.m, self.kv_heads, self.head_dim), dt, fill, gen, device)
        positions = torch.randint(
            0, ROPE_MAX_POSITIONS, (self.m,), generator=gen, device=device, dtype=torch.int64
        )
        return {
            "q": q,
            "k": k,
            "positions": positions,
            "cos_sin": rope_table(self.head_dim, device),
        }

    def reference(self, inputs: dict[str, Any]) -> torch.Tensor:
        cos_sin = inputs["cos_sin"][inputs["positions"]]  # [m, D]
        q = rope_reference(inputs["q"].float(), cos_sin)
        k = rope_reference(inputs["k"].float(), cos_sin)
        return torch.cat([q.flatten(1), k.flatten(1)], dim=1)


def rope_table(
    head_dim: int, device: torch.device, positions: int = ROPE_MAX_POSITIONS
) -> torch.Tensor:
    """[positions, D] fp32: cos of each frequency in the first half, sin in the second."""
    inv_freq = 1.0 / (
        ROPE_THETA ** (torch.arange(0, head_dim, 2, dtype=torch.float64, device=device) / head_dim)
    )
    angles = torch.outer(torch.arange(positions, dtype=torch.float64, device=device), inv_freq)
    return torch.cat([angles.cos(), angles.sin()], dim=-1).float()


def rope_reference(x: torch.Tensor, cos_sin: torch.Tensor) -> torch.Tensor:
    """x [m, H, D] fp32 rotated by cos_sin [m, D] (NeoX: the two halves of D form the pairs)."""
    half = x.shape[-1] // 2
    cos, sin = cos_sin[:, None, :half], cos_sin[:, None, half:]
    x1, x2 = x[..., :half], x[..., half:]
    return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1)


@dataclass(frozen=True)
class KvAppendProblem(Problem):
    """Write q_len new tokens' K and V [batch * q_len, Hkv, D] into a paged cache
    [pages, page_size, Hkv, D] after kv_len cached tokens, through a shuffled block table (the
    slot of each token computed here, as the engine's scheduler does). Output: the written
    slots gathered back, [tokens, 2, Hkv, D]; the check is exact."""

    op: ClassVar[str] = "kv_append"
    batch: int
    kv_heads: int
    kv_len: int
    q_len: int = 1
    head_dim: int = 128
    page_size: int = 16
    dtype: str = "bf16"

    def validate(self) -> None:
        require_positive(batch=self.batch, kv_heads=self.kv_heads, q_len=self.q_len)
        if not isinstance(self.kv_len, int) or self.kv_len < 0:  # 0: a prefill's first append
            raise ValueError(f"kv_len: must be a non-negative integer, got {self.kv_len!r}")
        require_choice("head_dim", self.head_dim, HEAD_DIMS)
        require_choice("page_size", self.page_size, PAGE_SIZES)
        _check_dtype(self.dtype)

    @property
    def tokens(self) -> int:
        return self.batch * self.q_len

    @property
    def pages_per_seq(self) -> int:
        return -(-(self.kv_len + self.q_len) // self.page_size)

    def flops(self) -> int:
        return 0

    def min_bytes(self) -> int:
        """New K and V read and written once, one int64 slot per token read."""
        kv = 2 * self.tokens * self.kv_heads * self.head_dim * _dtype_bytes(self.dtype)
        return 2 * kv + self.tokens * 8

    def tolerance(self) -> float:
        return 0.0  # a copy: every element exact

    def label(self) -> str:
        return (
            f"{self.op} b{self.batch} h{self.kv_heads} s{self.q_len}/{self.kv_len} "
            f"d{self.head_dim} page{self.page_size} {self.dtype}"
        )

    def make_inputs(self, seed: int, fill: str, device: torch.device) -> dict[str, Any]:
        dt, gen = get_dtype(self.dtype).torch_dtype, generator(seed, device)
        shape = (self.tokens, self.kv_heads, self.head_dim)
        key = fill_tensor(shape, dt, fill, gen, device)
        value = fill_tensor(shape, dt, fill, gen, device)
        pages = self.batch * self.pages_per_seq
        cache_shape = (pages, self.page_size, self.kv_heads, self.head_dim)
        # Pages shuffled as a long-running allocator hands them out (the attention problem's rule).
        table = torch.randperm(pages, generator=gen, device=device).view(self.batch, -1)
        pos = self.kv_len + torch.arange(self.q_len, device=device)  # [q_len]
        page = table[:, pos // self.page_size]  # [batch, q_len]
        slots = (page * self.page_size + pos % self.page_size).reshape(-1).contiguous()
        return {
            "key": key,
            "value": value,
            "k_cache": torch.zeros(cache_shape, dtype=dt, device=device),
            "v_cache": torch.zeros(cache_shape, dtype=dt, device=device),
            "slot_mapping": slots,
        }

    def reference(self, inputs: dict[str, Any]) -> torch.Tensor:
        return torch.stack([inputs["key"], inputs["value"]], dim=1).float()


def gather_slots(k_cache: torch.Tensor, v_cache: torch.Tensor, slots: torch.Tensor) -> torch.Tensor:
    """The cache rows at `slots` as [tokens, 2, Hkv, D] (what KvAppendProblem checks)."""
    flat_k = k_cache.view(-1, *k_cache.shape[2:])
    flat_v = v_cache.view(-1, *v_cache.shape[2:])
    return torch.stack([flat_k[slots], flat_v[slots]], dim=1)


LAYER_OP_PROBLEMS: dict[str, type[Problem]] = {
    p.op: p
    for p in (RmsNormProblem, AddRmsNormProblem, SiluMulProblem, RopeProblem, KvAppendProblem)
}
