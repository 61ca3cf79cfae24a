"""Providers of the decoder layer's memory-bound ops (rmsnorm, add_rmsnorm, silu_mul, rope,
kv_append): the own Triton kernels, and PyTorch written the way Hugging Face's Llama writes
them, run eagerly (one kernel per torch op) and through torch.compile (Inductor fuses them).

Every provider writes out of place and returns the problem's outputs; `output` joins them into
the layout the problem's reference has, outside the timed call.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import torch

from harness.device import DeviceInfo
from harness.problems.layer_ops import (
    LAYER_OP_PROBLEMS,
    RMS_EPS,
    AddRmsNormProblem,
    KvAppendProblem,
    RmsNormProblem,
    RopeProblem,
    SiluMulProblem,
    gather_slots,
)
from harness.providers import hf_llama as hf
from harness.providers.registry import Prepared, Unsupported, register

Fn = Callable[[], Any]


# --- how each op's outputs map to its problem's reference layout ----------------------------


def _joined(out: Any) -> torch.Tensor:
    """(y, residual) -> [m, 2n]; (q, k) -> [m, (Hq + Hkv) D]; a single tensor as it is."""
    if isinstance(out, torch.Tensor):
        return out
    if len(out) == 1:
        return out[0]
    return torch.cat([o.flatten(1) for o in out], dim=1)


def _output_for(problem: Any, inputs: dict) -> Callable[[Any], torch.Tensor]:
    if isinstance(problem, KvAppendProblem):
        return lambda caches: gather_slots(caches[0], caches[1], inputs["slot_mapping"])
    return _joined


# --- PyTorch, Hugging Face's formulation (harness/providers/hf_llama.py) ----------------------


def _torch_call(problem: Any, inputs: dict) -> tuple[Callable[..., Any], tuple]:
    """The eager function for the problem and the arguments it is called with."""
    if isinstance(problem, AddRmsNormProblem):
        return hf.add_rms_norm, (inputs["x"], inputs["residual"], inputs["weight"])
    if isinstance(problem, RmsNormProblem):
        return hf.rms_norm, (inputs["x"], inputs["weight"])
    if isinstance(problem, SiluMulProblem):
        return hf.silu_mul, (inputs["x"],)
    if isinstance(problem, RopeProblem):
        return hf.rope, (inputs["q"], inputs["k"], inputs["positions"], inputs["cos_sin"])
    if isinstance(problem, KvAppendProblem):
        names = ("key", "value", "k_cache", "v_cache", "slot_mapping")
        return hf.kv_append, tuple(inputs[n] for n in names)
    raise Unsupported(f"no torch formulation of {problem.op}")


def _prepare_eager(problem: Any, inputs: dict, device: DeviceInfo) -> Prepared:
    """PyTorch eager, Hugging Face Llama's formulation (one kernel per torch op)."""
    fn, args = _torch_call(problem, inputs)
    config = {"formulation": "hf-llama", "torch": torch.__version__}
    return Prepared(lambda: fn(*args), config, _output_for(problem, inputs))


def _prepare_compiled(problem: Any, inputs: dict, device: DeviceInfo) -> Prepared:
    """torch.compile of the Hugging Face formulation (Inductor's fused Triton kernels)."""
    fn, args = _torch_call(problem, inputs)
    (compiled,) = hf.compile_fns(fn)
    compile_s = hf.warm(lambda: compiled(*args), device)
    config = {"formulation": "hf-llama", "compile": hf.COMPILE, "compile_s": compile_s,
              "torch": torch.__version__}  # fmt: skip
    return Prepared(lambda: compiled(*args), config, _output_for(problem, inputs))


# --- own Triton -----------------------------------------------------------------------------


def _own_supports(problem: Any, device: DeviceInfo) -> str | None:
    if isinstance(problem, RopeProblem) and problem.head_dim & (problem.head_dim - 1):
        return "own rope takes a power-of-two head_dim (each half is one Triton block)"
    if isinstance(problem, RmsNormProblem) and problem.n > 32768:
        return "own rmsnorm keeps a row in registers: n <= 32768"
    return None


def _prepare_own(problem: Any, inputs: dict, device: DeviceInfo) -> Prepared:
    """Own Triton kernel (one pass per row, fp32 math, out of place)."""
    if device.type == "cpu" and os.environ.get("TRITON_INTERPRET") != "1":
        raise Unsupported("CPU runs need TRITON_INTERPRET=1 before the kernels are imported")
    from harness_kernels.triton import layer_ops as k

    if isinstance(problem, RmsNormProblem):  # and AddRmsNormProblem, its subclass
        residual = inputs["residual"] if isinstance(problem, AddRmsNormProblem) else None
        launch = k.prepare_rmsnorm(
            inputs["x"], inputs["weight"], residual, RMS_EPS, sms=device.sm_count
        )
    elif isinstance(problem, SiluMulProblem):
        launch = k.prepare_silu_mul(inputs["x"], device.sm_count)
    elif isinstance(problem, RopeProblem):
        launch = k.prepare_rope(inputs["q"], inputs["k"], inputs["positions"], inputs["cos_sin"])
    else:
        names = ("key", "value", "k_cache", "v_cache", "slot_mapping")
        launch = k.prepare_kv_append(*(inputs[n] for n in names))
    return Prepared(launch, dict(launch.config), _output_for(problem, inputs))


# Rungs of the own RMSNorm: each pins a kernel choice the headline does not make. Session 84's
# runs also hold `own-triton-one-pass`, which pinned the one-pass kernel while the headline took
# the two-pass one by a rule removed after the run (results/h200/README.md, session 84).
NORM_RUNGS = {
    "own-triton-weight-late": (
        {"weight_late": True, "looped": False},
        "Own Triton RMSNorm, one pass, the weight loaded after the row's sum (a rung)",
    ),
    "own-triton-looped": (
        {"looped": True},
        "Own Triton RMSNorm, always the two-pass persistent kernel (a rung)",
    ),
}


def _norm_rung(pins: dict[str, bool], doc: str) -> Callable[..., Prepared]:
    def prepare(problem: Any, inputs: dict, device: DeviceInfo) -> Prepared:
        if device.type == "cpu" and os.environ.get("TRITON_INTERPRET") != "1":
            raise Unsupported("CPU runs need TRITON_INTERPRET=1 before the kernels are imported")
        from harness_kernels.triton import layer_ops as k

        residual = inputs["residual"] if isinstance(problem, AddRmsNormProblem) else None
        launch = k.prepare_rmsnorm(
            inputs["x"], inputs["weight"], residual, RMS_EPS, sms=device.sm_count, **pins
        )
        return Prepared(launch, dict(launch.config), _output_for(problem, inputs))

    prepare.__doc__ = doc
    return prepare


# Rungs of the own SiLU-and-multiply: the order its grid walks the output (layer_ops.SILU_ORDERS;
# the headline's is "flat"). `silu_mul-order-s86` ran the flat order as `own-triton-flat`, and a
# row's blocks first as `own-triton-cols-first` (as fast as flat; not kept).
SILU_RUNGS = {
    "own-triton-rows-first": (
        "rows",
        "Own Triton SiLU-and-multiply, rows on the grid's first axis (the headline before "
        "session 86; a rung)",
    ),
}


def _silu_rung(order: str, doc: str) -> Callable[..., Prepared]:
    def prepare(problem: Any, inputs: dict, device: DeviceInfo) -> Prepared:
        if device.type == "cpu" and os.environ.get("TRITON_INTERPRET") != "1":
            raise Unsupported("CPU runs need TRITON_INTERPRET=1 before the kernels are imported")
        from harness_kernels.triton import layer_ops as k

        launch = k.prepare_silu_mul(inputs["x"], device.sm_count, order=order)
        return Prepared(launch, dict(launch.config), _output_for(problem, inputs))

    prepare.__doc__ = doc
    return prepare


_ALL = ("nvidia", "amd", "intel", "cpu")
for _name, (_order, _doc) in SILU_RUNGS.items():
    register(_name, "silu_mul", "own", ("nvidia", "amd", "cpu"), supports=_own_supports)(
        _silu_rung(_order, _doc)
    )
for _op in ("rmsnorm", "add_rmsnorm"):
    for _name, (_pins, _doc) in NORM_RUNGS.items():
        register(_name, _op, "own", ("nvidia", "amd", "cpu"), supports=_own_supports)(
            _norm_rung(_pins, _doc)
        )
for _op in LAYER_OP_PROBLEMS:
    register("own-triton", _op, "own", ("nvidia", "amd", "cpu"), supports=_own_supports)(
        _prepare_own
    )
    register("torch-eager", _op, "vendor", _ALL)(_prepare_eager)
    register("torch-compile", _op, "vendor", _ALL, supports=hf.compiled_supports)(_prepare_compiled)
