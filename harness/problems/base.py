"""What every problem knows: its axes, exact work, inputs, fp32 reference and correctness rule."""

from __future__ import annotations

import contextlib
import dataclasses
import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, ClassVar

import torch

FILLS = ("randn", "uniform", "zeros")


NON_FINITE = "output has NaN or Inf"  # a Check reason: never a pass, whatever the tolerance


@dataclass(frozen=True)
class Check:
    """Outcome of comparing one output with its fp32 reference."""

    rel_err: float  # ||out - ref||_F / ||ref||_F, NaN if the output has non-finite values
    max_abs_err: float
    tolerance: float
    ok: bool
    reason: str | None = None


class Problem:
    """Base for one operation instance (subclasses are frozen dataclasses)."""

    op: ClassVar[str]
    # Set by @dataclass on every subclass; declared so that dataclasses.asdict(self) type-checks.
    __dataclass_fields__: ClassVar[dict[str, dataclasses.Field[Any]]]

    def validate(self) -> None:
        """Raise ValueError('<field>: <what is wrong>; allowed: ...') for an invalid instance."""

    def flops(self) -> int:
        raise NotImplementedError

    def min_bytes(self) -> int:
        raise NotImplementedError

    def make_inputs(self, seed: int, fill: str, device: torch.device) -> dict[str, Any]:
        raise NotImplementedError

    def reference(self, inputs: dict[str, Any]) -> torch.Tensor:
        """The fp32 result on the same inputs (computed without reduced-precision shortcuts)."""
        raise NotImplementedError

    def tolerance(self) -> float:
        raise NotImplementedError

    def label(self) -> str:
        raise NotImplementedError

    def axes(self) -> dict[str, Any]:
        """The problem's fields as plain values (for point keys and rows)."""
        return dataclasses.asdict(self)

    def intensity(self) -> float:
        """Arithmetic intensity in FLOP per byte of minimum traffic."""
        return self.flops() / max(self.min_bytes(), 1)

    def check(self, out: torch.Tensor, ref: torch.Tensor) -> Check:
        """Compare with the reference by relative Frobenius error; NaN or Inf never passes."""
        tol = self.tolerance()
        if tuple(out.shape) != tuple(ref.shape):
            return Check(
                math.nan, math.nan, tol, False, f"shape {tuple(out.shape)} != {tuple(ref.shape)}"
            )
        o = out.float()
        if not bool(torch.isfinite(o).all()):
            return Check(math.nan, math.nan, tol, False, NON_FINITE)
        diff = o - ref
        ref_norm = float(torch.linalg.vector_norm(ref))
        rel = float(torch.linalg.vector_norm(diff)) / max(ref_norm, 1e-30)
        max_abs = float(diff.abs().max()) if diff.numel() else 0.0
        ok = rel <= tol
        return Check(rel, max_abs, tol, ok, None if ok else f"rel_err {rel:.3g} > tol {tol:.3g}")


@contextlib.contextmanager
def exact_fp32() -> Iterator[None]:
    """Within: fp32 matmuls and convolutions in full fp32, the switches restored after. torch
    keeps TF32 as process-wide switches, and a tf32 GEMM's vendor closure turns the matmul one
    on: a reference computed after it in the same process would be no better than a TF32
    kernel (the GEMM reference guards itself; attention and a decoder layer's did not)."""
    matmul, cudnn = torch.backends.cuda.matmul, torch.backends.cudnn
    before = (matmul.allow_tf32, cudnn.allow_tf32)
    matmul.allow_tf32, cudnn.allow_tf32 = False, False
    try:
        yield
    finally:
        matmul.allow_tf32, cudnn.allow_tf32 = before


def world_size_of(problem: Problem) -> int:
    """Processes that measure `problem` together, one per device in lockstep (collectives, a
    tensor-parallel layer); 1 for everything measured by one process."""
    return int(getattr(problem, "world_size", 1))


def fill_tensor(
    shape: tuple[int, ...],
    dtype: torch.dtype,
    fill: str,
    gen: torch.Generator,
    device: torch.device,
) -> torch.Tensor:
    """A seeded tensor: randn (N(0,1)), uniform (U[-1, 1)) or zeros (only when asked for)."""
    if fill == "zeros":
        return torch.zeros(shape, dtype=dtype, device=device)
    if fill == "randn":
        t = torch.randn(shape, generator=gen, device=device, dtype=torch.float32)
    elif fill == "uniform":
        t = torch.rand(shape, generator=gen, device=device, dtype=torch.float32) * 2 - 1
    else:
        raise ValueError(f"fill: unknown '{fill}'; allowed: {', '.join(FILLS)}")
    return t.to(dtype)


def generator(seed: int, device: torch.device) -> torch.Generator:
    g = torch.Generator(device=device)
    g.manual_seed(seed)
    return g


def require_positive(**fields: int) -> None:
    for name, value in fields.items():
        if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
            raise ValueError(f"{name}: must be a positive integer, got {value!r}")


def require_choice(name: str, value: Any, allowed: tuple | list) -> None:
    if value not in allowed:
        raise ValueError(f"{name}: unknown {value!r}; allowed: {', '.join(map(str, allowed))}")
