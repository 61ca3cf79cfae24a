"""Vendor GEMM baselines: cuBLAS / hipBLASLt through torch.matmul, cuBLASLt fp8, torch on the CPU."""

from __future__ import annotations

import torch

from harness.device import DeviceInfo
from harness.problems import GemmProblem
from harness.providers.registry import Prepared, register


def _matmul_closure(problem: GemmProblem, inputs: dict) -> Prepared:
    """torch.matmul into a preallocated output, so the timed call allocates nothing."""
    a, b = inputs["a"], inputs["b"]
    out = torch.empty(a.shape[:-1] + (b.shape[-1],), dtype=a.dtype, device=a.device)
    # tf32 is a global switch in torch: set it inside the closure so no other provider inherits it.
    tf32 = problem.dtype == "tf32"
    flags = torch.backends.cuda.matmul

    def run() -> torch.Tensor:
        flags.allow_tf32 = tf32
        return torch.matmul(a, b, out=out)

    return Prepared(run, {"library": "torch.matmul", "allow_tf32": tf32})


def _not_fp8(problem: GemmProblem, device: DeviceInfo) -> str | None:
    if problem.dtype == "fp8_e4m3":
        return "fp8 goes through cublaslt-fp8 (torch._scaled_mm), not torch.matmul"
    return None


@register("cublas", "gemm", "vendor", ("nvidia",), min_cc=(5, 0), supports=_not_fp8)
def cublas(problem: GemmProblem, inputs: dict, device: DeviceInfo) -> Prepared:
    """cuBLAS through torch.matmul (fp16, bf16, fp32, tf32; batched through bmm)."""
    return _matmul_closure(problem, inputs)


@register("hipblaslt", "gemm", "vendor", ("amd",), supports=_not_fp8)
def hipblaslt(problem: GemmProblem, inputs: dict, device: DeviceInfo) -> Prepared:
    """hipBLASLt / rocBLAS through torch.matmul on a ROCm build of torch."""
    return _matmul_closure(problem, inputs)


@register("torch-cpu", "gemm", "vendor", ("cpu",), supports=_not_fp8)
def torch_cpu(problem: GemmProblem, inputs: dict, device: DeviceInfo) -> Prepared:
    """torch.matmul on the host CPU (oneDNN / OpenBLAS), the CPU path's baseline."""
    return _matmul_closure(problem, inputs)


def _scaled_mm_supports(problem: GemmProblem, device: DeviceInfo) -> str | None:
    if problem.dtype != "fp8_e4m3":
        return "fp8 only (dtype fp8_e4m3)"
    if problem.layout != "nt":
        return "torch._scaled_mm needs B column-major: use layout nt"
    if problem.batch != 1:
        return "torch._scaled_mm is not batched"
    if problem.k % 16 or problem.n % 16:
        return "torch._scaled_mm needs K and N multiples of 16"
    return None


def _scaled_mm_closure(inputs: dict, fast_accum: bool) -> Prepared:
    a, b = inputs["a"], inputs["b"]
    sa, sb = inputs["a_scale"], inputs["b_scale"]
    out = torch.empty((a.shape[0], b.shape[1]), dtype=torch.bfloat16, device=a.device)

    def run() -> torch.Tensor:
        return torch._scaled_mm(
            a,
            b,
            scale_a=sa,
            scale_b=sb,
            out_dtype=torch.bfloat16,
            out=out,
            use_fast_accum=fast_accum,
        )

    config = {"library": "torch._scaled_mm", "out_dtype": "bf16", "use_fast_accum": fast_accum}
    return Prepared(run, config)


@register(
    "cublaslt-fp8", "gemm", "vendor", ("nvidia",), min_cc=(8, 9), supports=_scaled_mm_supports
)
def cublaslt_fp8(problem: GemmProblem, inputs: dict, device: DeviceInfo) -> Prepared:
    """cuBLASLt fp8 e4m3 GEMM, per-tensor scales, bf16 out (torch._scaled_mm, default accumulation)."""
    return _scaled_mm_closure(inputs, fast_accum=False)


@register(
    "cublaslt-fp8-fastaccum",
    "gemm",
    "vendor",
    ("nvidia",),
    min_cc=(8, 9),
    supports=_scaled_mm_supports,
)
def cublaslt_fp8_fastaccum(problem: GemmProblem, inputs: dict, device: DeviceInfo) -> Prepared:
    """cuBLASLt fp8 with use_fast_accum=True: the accumulation mode Triton uses on sm_90."""
    return _scaled_mm_closure(inputs, fast_accum=True)
