"""PyTorch SDPA baselines, one provider per backend, plus a paged-cache baseline built on SDPA.

Causal masks follow the problem's bottom-right alignment: is_causal when q_len == kv_len (the
alignments agree), no mask for a single query row (it sees every key), and torch's
`causal_lower_right` bias otherwise. A backend that refuses a point raises inside SDPA; prepare
runs it once so the refusal becomes a skipped row carrying torch's own reason.
"""

from __future__ import annotations

import warnings
from typing import Any

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

from harness.device import DeviceInfo
from harness.problems import AttentionProblem
from harness.problems.attention import gather_pages
from harness.providers.registry import Prepared, Unsupported, register

_BACKENDS = {
    "sdpa-flash": SDPBackend.FLASH_ATTENTION,
    "sdpa-efficient": SDPBackend.EFFICIENT_ATTENTION,
    "sdpa-cudnn": SDPBackend.CUDNN_ATTENTION,
    "sdpa-math": SDPBackend.MATH,
}


def _mask_args(problem: AttentionProblem, device: torch.device) -> dict:
    if not problem.causal or problem.q_len == 1:
        return {"is_causal": False}
    if problem.q_len == problem.kv_len:
        return {"is_causal": True}
    from torch.nn.attention.bias import causal_lower_right

    return {"attn_mask": causal_lower_right(problem.q_len, problem.kv_len)}


def _sdpa_call(backend: SDPBackend, q, k, v, mask: dict, gqa: bool):
    kwargs: dict[str, Any] = {"enable_gqa": True} if gqa else {}
    with sdpa_kernel(backend):
        return F.scaled_dot_product_attention(q, k, v, **mask, **kwargs)


def _first_working(
    backend: SDPBackend, problem: AttentionProblem, q, k, v
) -> tuple[dict, bool, torch.Tensor]:
    """Try native GQA, then K/V expanded to q_heads (outside the timed window); raise Unsupported."""
    mask = _mask_args(problem, q.device)
    gqa = problem.q_heads != problem.kv_heads
    attempts = [(k, v, gqa)]
    if gqa:
        group = problem.q_heads // problem.kv_heads
        attempts.append((k.repeat_interleave(group, 1), v.repeat_interleave(group, 1), False))
    reasons = []
    for kk, vv, native in attempts:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                out = _sdpa_call(backend, q, kk, vv, mask, native)
                return {"k": kk, "v": vv, "native_gqa": native, "mask": mask}, native, out
            except RuntimeError as e:
                # a message may be empty (RuntimeError()): its type then says what failed
                why = [ln for w in caught for ln in str(w.message).splitlines()[:1]]
                why = why or str(e).splitlines()[:1] or [type(e).__name__]
                reasons.append(("gqa: " if native else "") + "; ".join(why)[:300])
    raise Unsupported(" | ".join(reasons))


def _sdpa_provider(name: str):
    backend = _BACKENDS[name]

    def supports(problem: AttentionProblem, device: DeviceInfo) -> str | None:
        if problem.kv_layout != "dense":
            return "SDPA takes dense K/V only; see sdpa-paged-gather for paged caches"
        if device.vendor == "cpu" and name != "sdpa-math":
            return "only the math backend runs on the CPU"
        return None

    def prepare(problem: AttentionProblem, inputs: dict, device: DeviceInfo) -> Prepared:
        q = inputs["q"]
        state, native, _ = _first_working(backend, problem, q, inputs["k"], inputs["v"])
        k, v, mask = state["k"], state["v"], state["mask"]

        def run() -> torch.Tensor:
            return _sdpa_call(backend, q, k, v, mask, native)

        gqa = "native" if native else "k/v expanded to q_heads before timing"
        return Prepared(run, {"backend": backend.name, "gqa": gqa, "mask": sorted(mask)})

    vendors: tuple[str, ...] = ("nvidia",) if name == "sdpa-cudnn" else ("nvidia", "amd")
    if name == "sdpa-math":
        vendors = ("nvidia", "amd", "intel", "cpu")
    prepare.__doc__ = f"torch SDPA restricted to the {backend.name} backend (dense K/V)."
    register(
        name,
        "attention",
        "vendor",
        vendors,
        min_cc=(8, 0) if name != "sdpa-math" else None,
        supports=supports,
    )(prepare)


for _name in _BACKENDS:
    _sdpa_provider(_name)


def _paged_supports(problem: AttentionProblem, device: DeviceInfo) -> str | None:
    if problem.kv_layout != "paged":
        return "paged caches only"
    if problem.ragged:  # every sequence is gathered to kv_len: the shorter ones would read pad
        return "gathers every sequence to kv_len: ragged lengths would need a mask per sequence"
    return None


@register(
    "sdpa-paged-gather", "attention", "vendor", ("nvidia", "amd", "cpu"), supports=_paged_supports
)
def sdpa_paged_gather(problem: AttentionProblem, inputs: dict, device: DeviceInfo) -> Prepared:
    """Paged cache gathered to dense K/V, then SDPA's default dispatch: the no-kernel baseline."""
    q, kc, vc, table = inputs["q"], inputs["k_cache"], inputs["v_cache"], inputs["block_table"]
    mask = _mask_args(problem, q.device)
    gqa = problem.q_heads != problem.kv_heads
    kwargs: dict[str, Any] = {"enable_gqa": True} if gqa else {}

    def run() -> torch.Tensor:
        k = gather_pages(kc, table, problem.kv_len)
        v = gather_pages(vc, table, problem.kv_len)
        return F.scaled_dot_product_attention(q, k, v, **mask, **kwargs)

    run()  # surface a refusal here, not in the timed loop
    return Prepared(run, {"gather": "torch index + contiguous", "sdpa": "default dispatch"})
