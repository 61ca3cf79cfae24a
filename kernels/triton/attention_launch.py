"""What a prepared attention call is, at run time and ahead of time: the AttentionLaunch that
prepare_attention and prepare_decode return, and the compile spec that `harness inspect` and the
AOT tests build for triton.compile.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import torch


class AttentionLaunch:
    """A prepared attention call: output allocated and config chosen; calling it only launches.

    Prefill and decode both return one; it satisfies harness_kernels.launch.Launch."""

    out: torch.Tensor  # [B, Hq, Sq, D], same layout as q
    lse: torch.Tensor | None  # [B, Hq, Sq] fp32, natural log, or None
    config: dict[str, Any]

    def __init__(
        self,
        out: torch.Tensor,
        lse: torch.Tensor | None,
        config: dict[str, Any],
        launches: Sequence[Callable[[], object]],
    ) -> None:
        self.out = out
        self.lse = lse
        self.config = config
        self._launches = tuple(launches)

    def __call__(self) -> torch.Tensor:
        """Launch the kernel(s) on the current stream; no allocation, tuning or host sync."""
        for launch in self._launches:
            launch()
        return self.out

    def __repr__(self) -> str:
        return f"AttentionLaunch(out={tuple(self.out.shape)}, config={self.config})"


# ----------------------------------------------------------------------------------------------
# Ahead-of-time compile specs
# ----------------------------------------------------------------------------------------------


def triton_dtype_name(dtype: torch.dtype) -> str:
    """The Triton signature name of a torch dtype (for AOT specs)."""
    return {torch.float16: "fp16", torch.bfloat16: "bf16", torch.float32: "fp32"}[dtype]


def aot_spec(
    name: str, fn: Any, types: dict[str, str], constexprs: dict[str, Any], options: dict[str, Any]
) -> dict[str, Any]:
    """One compile spec {name, fn, signature, constexprs, attrs, options} for triton.compile.

    Arguments not in `types` or `constexprs` are i32 (sizes, strides). attrs mark pointers and
    strides as divisible by 16, as the JIT infers for aligned tensors at run time."""
    signature = {}
    for arg in fn.arg_names:
        signature[arg] = "constexpr" if arg in constexprs else types.get(arg, "i32")
    attrs = {
        (i,): [["tt.divisibility", 16]]
        for i, arg in enumerate(fn.arg_names)
        if signature[arg].startswith("*") or arg.startswith("stride")
    }
    return dict(
        name=name,
        fn=fn,
        signature=signature,
        constexprs=dict(constexprs),
        attrs=attrs,
        options=dict(options),
    )
