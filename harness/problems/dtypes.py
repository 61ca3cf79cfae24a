"""The dtype vocabulary: names used in configs and rows, their torch types, sizes and tolerances."""

from __future__ import annotations

from dataclasses import dataclass

import torch


@dataclass(frozen=True)
class DType:
    """One input precision as named in configs and rows."""

    name: str
    torch_dtype: torch.dtype  # storage type of the inputs
    bytes: int  # bytes per input element
    out_name: str  # precision of the output
    # Relative Frobenius error ||out - ref|| / ||ref|| allowed against an fp32 reference on the
    # same inputs. Output rounding alone gives ~2^-(mantissa bits + 1); the rest is headroom for
    # different accumulation orders and, in attention, P rounded to the input type before P @ V.
    gemm_tol: float
    attention_tol: float


_DTYPES = {
    "fp32": DType("fp32", torch.float32, 4, "fp32", 1e-5, 1e-5),
    # fp32 storage, tensor-float-32 math (10-bit mantissa) in the matrix units.
    "tf32": DType("tf32", torch.float32, 4, "fp32", 5e-3, 5e-3),
    "fp16": DType("fp16", torch.float16, 2, "fp16", 2e-3, 5e-3),
    "bf16": DType("bf16", torch.bfloat16, 2, "bf16", 1e-2, 2e-2),
    # fp8 e4m3 inputs with per-tensor scales, bf16 output; the reference uses the same fp8 values.
    "fp8_e4m3": DType("fp8_e4m3", torch.float8_e4m3fn, 1, "bf16", 1e-2, 2e-2),
}

OUT_BYTES = {"fp32": 4, "fp16": 2, "bf16": 2}


def dtype_names() -> list[str]:
    return list(_DTYPES)


def get_dtype(name: str) -> DType:
    """Look up a dtype by config name; raises ValueError naming the allowed values."""
    try:
        return _DTYPES[name]
    except KeyError:
        raise ValueError(f"dtype: unknown '{name}'; allowed: {', '.join(_DTYPES)}") from None


def torch_dtype_of(name: str) -> torch.dtype:
    return {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}[name]
