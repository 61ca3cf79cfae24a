"""flash-attn (Dao-AILab) as an optional baseline: skipped, with the reason, when not importable."""

from __future__ import annotations

from functools import lru_cache

from harness.device import DeviceInfo
from harness.problems import AttentionProblem
from harness.providers.registry import Prepared, register


@lru_cache(maxsize=1)
def _import_error() -> str | None:
    try:
        import flash_attn  # noqa: F401
    except Exception as e:  # ImportError, or a binary built for another torch
        return f"flash_attn not importable ({type(e).__name__}: {str(e).splitlines()[0][:120]})"
    return None


def _supports(problem: AttentionProblem, device: DeviceInfo) -> str | None:
    if problem.dtype not in ("fp16", "bf16"):
        return "flash-attn takes fp16/bf16 only"
    if problem.kv_layout == "paged" and problem.page_size % 256:
        return "flash-attn 2 paged KV needs page_size a multiple of 256"
    return None


@register(
    "flash-attn",
    "attention",
    "vendor",
    ("nvidia", "amd"),
    min_cc=(8, 0),
    available=_import_error,
    supports=_supports,
)
def flash_attn_provider(problem: AttentionProblem, inputs: dict, device: DeviceInfo) -> Prepared:
    """flash-attn 2: flash_attn_func (dense) or flash_attn_with_kvcache (paged); bottom-right causal."""
    from flash_attn import flash_attn_func, flash_attn_with_kvcache

    # flash-attn wants [B, S, H, D]; transpose copies happen here, outside the timed window.
    q = inputs["q"].transpose(1, 2).contiguous()
    to_problem_layout = lambda o: o.transpose(1, 2)  # [B, S, H, D] -> [B, H, S, D], check only
    if problem.kv_layout == "dense":
        k = inputs["k"].transpose(1, 2).contiguous()
        v = inputs["v"].transpose(1, 2).contiguous()
        run = lambda: flash_attn_func(q, k, v, causal=problem.causal)
        return Prepared(run, {"api": "flash_attn_func"}, to_problem_layout)
    kc, vc = inputs["k_cache"], inputs["v_cache"]
    seqlens, table = inputs["cache_seqlens"], inputs["block_table"]
    run = lambda: flash_attn_with_kvcache(
        q, kc, vc, cache_seqlens=seqlens, block_table=table, causal=problem.causal
    )
    return Prepared(run, {"api": "flash_attn_with_kvcache"}, to_problem_layout)
