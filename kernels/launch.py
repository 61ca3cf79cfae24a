"""The one shape of a prepared own-kernel launch, whichever library built the kernel.

Every public launcher (triton.gemm.prepare_matmul, triton.attention_prefill.prepare_attention,
triton.attention_decode.prepare_decode, cutlass.gemm.prepare_gemm, cutlass.fmha.prepare_fmha)
does all checking, allocation, tuning and compilation up front and returns a Launch: calling it
only starts the kernel(s) on the current stream, so a timer can call it and time nothing else.
CK's FMHA is not here: its binary makes its own inputs and times itself (kernels/ck/fmha_run.py).
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import torch


@runtime_checkable
class Launch(Protocol):
    """A prepared kernel call: no allocation, tuning or host sync when called; returns `out`."""

    out: torch.Tensor  # written by every call (attention also fills `lse` where asked)
    config: dict[str, Any]  # what was chosen and why: tile, stages, tuning, fallbacks

    def __call__(self) -> torch.Tensor: ...
