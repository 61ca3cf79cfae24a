"""flash-attn 2 (Dao-AILab) as an optional baseline: skipped, with the reason, when not importable.

PyPI has flash-attn 2 as source only (2.8.3: pip install compiles it with nvcc, a long build), so
our GPU images lack it and its rows are skipped; FlashAttention-4 is the `flash-attn-4` provider.
Both packages own the import name flash_attn (FA4 installs only flash_attn/cute), so this one
asks for FA2's own entry points, not for the package."""

from __future__ import annotations

from functools import lru_cache

from harness.device import DeviceInfo
from harness.problems import AttentionProblem
from harness.providers.registry import Prepared, register


@lru_cache(maxsize=1)
def _import_error() -> str | None:
    try:
        from flash_attn import flash_attn_func, flash_attn_with_kvcache  # noqa: F401
    except Exception as e:  # ImportError, or a binary built for another torch
        why = f"{type(e).__name__}: {(str(e).splitlines() or [''])[0][:120]}"
        return f"flash-attn 2 not importable ({why}); PyPI has its source only, not built here"
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
