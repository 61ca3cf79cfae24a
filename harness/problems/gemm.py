"""GEMM problem: C[batch, M, N] = A[batch, M, K] @ B[batch, K, N], fp32 accumulation."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import torch

from harness.problems.base import Problem, fill_tensor, generator, require_choice, require_positive
from harness.problems.dtypes import OUT_BYTES, get_dtype

# nn: B stored row-major [K, N].  nt: B stored as W [N, K] row-major and used as W^T, which is
# how linear layers keep their weights (y = x W^T), so LLM projection shapes use "nt".
LAYOUTS = ("nn", "nt")
FP8_MAX = 448.0  # largest finite e4m3 value


@dataclass(frozen=True)
class GemmProblem(Problem):
    """One GEMM instance; A is row-major, B per `layout`."""

    op: ClassVar[str] = "gemm"
    m: int
    n: int
    k: int
    dtype: str = "bf16"
    layout: str = "nn"
    batch: int = 1

    def validate(self) -> None:
        require_positive(m=self.m, n=self.n, k=self.k, batch=self.batch)
        get_dtype(self.dtype)
        require_choice("layout", self.layout, LAYOUTS)

    def flops(self) -> int:
        return 2 * self.batch * self.m * self.n * self.k

    def min_bytes(self) -> int:
        """A and B read once, C written once."""
        dt = get_dtype(self.dtype)
        reads = (self.m * self.k + self.k * self.n) * dt.bytes
        writes = self.m * self.n * OUT_BYTES[dt.out_name]
        return self.batch * (reads + writes)

    def tolerance(self) -> float:
        # Error of an fp32-accumulated dot grows ~sqrt(K) for reduced-precision outputs only
        # through output rounding, so the per-dtype constant holds for every K we sweep.
        return get_dtype(self.dtype).gemm_tol

    def label(self) -> str:
        b = f"{self.batch}x" if self.batch > 1 else ""
        return f"gemm {b}{self.m}x{self.n}x{self.k} {self.dtype} {self.layout}"

    def make_inputs(self, seed: int, fill: str, device: torch.device) -> dict[str, Any]:
        """{'a': [batch?, M, K], 'b': [batch?, K, N] view (column-major for nt), scales for fp8}."""
        dt = get_dtype(self.dtype)
        gen = generator(seed, device)
        lead = (self.batch,) if self.batch > 1 else ()
        if self.dtype == "fp8_e4m3":
            a32 = fill_tensor(lead + (self.m, self.k), torch.float32, fill, gen, device)
            w32 = fill_tensor(lead + self._b_storage_shape(), torch.float32, fill, gen, device)
            a, a_scale = quantize_fp8(a32)
            w, b_scale = quantize_fp8(w32)
            return {"a": a, "b": self._b_view(w), "a_scale": a_scale, "b_scale": b_scale}
        a = fill_tensor(lead + (self.m, self.k), dt.torch_dtype, fill, gen, device)
        w = fill_tensor(lead + self._b_storage_shape(), dt.torch_dtype, fill, gen, device)
        return {"a": a, "b": self._b_view(w)}

    def _b_storage_shape(self) -> tuple[int, int]:
        return (self.k, self.n) if self.layout == "nn" else (self.n, self.k)

    def _b_view(self, w: torch.Tensor) -> torch.Tensor:
        return w if self.layout == "nn" else w.transpose(-1, -2)

    def reference(self, inputs: dict[str, Any]) -> torch.Tensor:
        a, b = inputs["a"].float(), inputs["b"].float()
        if self.dtype == "fp8_e4m3":
            a = a * inputs["a_scale"]
            b = b * inputs["b_scale"]
        return _fp32_matmul(a, b)


def quantize_fp8(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-tensor e4m3 quantization: x ~= q * scale, scale a float32 scalar tensor."""
    amax = x.abs().amax().clamp(min=1e-12)
    scale = (amax / FP8_MAX).to(torch.float32)
    q = (x / scale).clamp(-FP8_MAX, FP8_MAX).to(torch.float8_e4m3fn)
    return q, scale


def _fp32_matmul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """True fp32 product: tf32 must be off, or the reference is no better than the kernel."""
    if a.is_cuda:
        prev = torch.backends.cuda.matmul.allow_tf32
        torch.backends.cuda.matmul.allow_tf32 = False
        try:
            return torch.matmul(a, b)
        finally:
            torch.backends.cuda.matmul.allow_tf32 = prev
    return torch.matmul(a, b)
