"""Operand checks of the own Triton GEMM: shapes, layouts and dtypes it takes, and which fast
paths (TMA loads and stores, a K-major copy of B) the operands allow on one device.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from .gemm_configs import GemmConfig
from .gemm_target import KernelTarget

IN_DTYPES = (torch.float16, torch.bfloat16, torch.float32, torch.float8_e4m3fn)
OUT_DTYPES = (torch.float16, torch.bfloat16, torch.float32)


@dataclass(frozen=True)
class GemmOperands:
    """Validated operands of one GEMM; `b_is_nk` means B is the transpose of a row-major [N, K].

    The tensors one launch reads, not the harness's GemmProblem (a point's axes, FLOPs, bytes)."""

    a: torch.Tensor  # [M, K], unit column stride
    b: torch.Tensor  # [K, N], row-major or column-major
    out_dtype: torch.dtype
    a_scale: torch.Tensor | None  # fp8 only: 1-element float32 on a's device
    b_scale: torch.Tensor | None
    input_precision: str  # what tl.dot receives: "tf32" | "ieee"
    b_is_nk: bool

    @property
    def mnk(self) -> tuple[int, int, int]:
        return self.a.shape[0], self.b.shape[1], self.a.shape[1]

    @property
    def out_bytes(self) -> int:
        return torch.empty((), dtype=self.out_dtype).element_size()


def check_operands(
    a: torch.Tensor,
    b: torch.Tensor,
    out_dtype: torch.dtype | None,
    a_scale: torch.Tensor | None,
    b_scale: torch.Tensor | None,
    fp32_precision: str,
    dev: KernelTarget,
) -> GemmOperands:
    """Validate shapes, layouts and dtypes; raise ValueError with the reason otherwise."""
    if a.dim() != 2 or b.dim() != 2 or a.shape[1] != b.shape[0]:
        raise ValueError(f"need a [M, K] and b [K, N]; got {tuple(a.shape)} and {tuple(b.shape)}")
    if a.dtype != b.dtype or a.dtype not in IN_DTYPES:
        raise ValueError(f"a and b must share one of {IN_DTYPES}; got {a.dtype}, {b.dtype}")
    if a.device != b.device:
        raise ValueError(f"a on {a.device} but b on {b.device}")
    if a.numel() == 0 or b.numel() == 0:
        raise ValueError(f"empty GEMM {tuple(a.shape)} @ {tuple(b.shape)}")
    if a.stride(1) != 1 and a.shape[1] > 1:
        raise ValueError(f"a must be row-major (unit column stride); strides {a.stride()}")
    b_row = b.stride(1) == 1 or b.shape[1] == 1
    b_col = b.stride(0) == 1 or b.shape[0] == 1
    if not (b_row or b_col):
        raise ValueError(f"b must be row- or column-major; strides {b.stride()}")
    b_is_nk = b_col and not (b_row and b.stride(1) == 1)
    is_fp8 = a.dtype == torch.float8_e4m3fn
    if is_fp8:
        for name, s in (("a_scale", a_scale), ("b_scale", b_scale)):
            if s is None or s.numel() != 1 or s.dtype != torch.float32 or s.device != a.device:
                raise ValueError(f"fp8 needs {name}: a 1-element float32 tensor on {a.device}")
        assert a_scale is not None and b_scale is not None  # checked just above
        a_scale, b_scale = a_scale.reshape(1), b_scale.reshape(1)
        if dev.backend == "cuda" and dev.capability < 89:
            raise ValueError(f"float8_e4m3fn needs sm_89+ (Ada/Hopper); device is {dev.arch}")
    elif a_scale is not None or b_scale is not None:
        raise ValueError("a_scale/b_scale are only for float8_e4m3fn inputs")
    out_dtype = out_dtype or (torch.bfloat16 if is_fp8 else a.dtype)
    if out_dtype not in OUT_DTYPES:
        raise ValueError(f"out_dtype must be one of {OUT_DTYPES}; got {out_dtype}")
    if fp32_precision not in ("tf32", "ieee"):
        raise ValueError(f"fp32_precision must be 'tf32' or 'ieee'; got {fp32_precision!r}")
    # AMD's Triton has no tf32 dot (CDNA3's xf32 is not exposed): fp32 runs as fp32 MFMA there.
    tf32 = a.dtype == torch.float32 and fp32_precision == "tf32" and dev.backend != "hip"
    for name, numel in (("a", a.numel()), ("b", b.numel()), ("c", a.shape[0] * b.shape[1])):
        if numel >= 2**31:
            raise ValueError(f"{name} has >= 2**31 elements; 32-bit offsets would overflow")
    return GemmOperands(a, b, out_dtype, a_scale, b_scale, "tf32" if tf32 else "ieee", b_is_nk)


def tma_support(p: GemmOperands, cfg: GemmConfig, dev: KernelTarget) -> tuple[bool, bool, str]:
    """(load via TMA, store via TMA, reason for any fallback). TMA needs sm_90+, 16-byte aligned
    bases and row strides, and boxes whose inner dimension spans at least 16 bytes."""
    if not cfg.tma:
        return False, False, "disabled by config"
    if dev.capability < 90:
        return False, False, f"no TMA on {dev.arch}"
    m, n, k = p.mnk
    ebytes = p.a.element_size()
    inner_b = cfg.block_k if p.b_is_nk else cfg.block_n
    b_row_stride = p.b.stride(1) if p.b_is_nk else p.b.stride(0)
    reasons = []
    if p.a.data_ptr() % 16 or (p.a.stride(0) * ebytes) % 16 or cfg.block_k * ebytes < 16:
        reasons.append("A base/row stride not 16-byte aligned (K*elem % 16) or box too narrow")
    if p.b.data_ptr() % 16 or (b_row_stride * ebytes) % 16 or inner_b * ebytes < 16:
        reasons.append("B base/row stride not 16-byte aligned or box too narrow")
    load_ok = not reasons
    store_n = cfg.block_n // 2 if cfg.epilogue_subtile else cfg.block_n
    store_ok = load_ok and (n * p.out_bytes) % 16 == 0 and store_n * p.out_bytes >= 16
    if load_ok and not store_ok:
        reasons.append("C row stride (N*elem) not 16-byte aligned: pointer stores")
    return load_ok, store_ok, "; ".join(reasons)


def transposes_b(p: GemmOperands, dev: KernelTarget, rung: str) -> bool:
    """Whether to also time configs that copy a row-major B K-major first: tf32 on Hopper, where
    wgmma takes 32-bit B only K-major (16-bit types transpose in the descriptor for free). On the
    H200 the own kernel ran tf32 nn problems at 19-20% of the tf32 peak; the in-kernel re-layout
    is the suspected cause (seen in the AOT code, not yet confirmed by a measurement)."""
    return (
        p.input_precision == "tf32"
        and not p.b_is_nk
        and dev.backend == "cuda"
        and dev.capability >= 90
        and rung != "no-tensor-cores"
    )
