"""FlashAttention-4 (`flash-attn-4`, CuTe DSL; import name flash_attn.cute) as a baseline:
prefill and decode over dense K/V, and paged caches through its page_table.

FA4 is Python: the CuTe DSL compiles a kernel on the first call of each shape class (seconds),
so prepare makes that call, outside the timed window, and records `prepare_s` (conversion,
compilation and the first call) and `first_call_s`. FA4 takes [B, S, H, D]; q, k and v are
copied into it in prepare. A paged cache is ours unchanged: [pages, page_size, Hkv, D] with
page_table = block_table (int32 [B, pages_per_seq]) and seqused_k = cache_seqlens. Its causal
mask is bottom-right aligned (offset seqlen_k - seqlen_q), as ours.

Split-KV: FA4 asserts num_splits == 1 on SM90 (Hopper), so a Hopper decode runs without it,
as FA4 itself would; on SM100 decode asks for FA4's own split heuristic (num_splits=0).
"""

from __future__ import annotations

import time
from functools import lru_cache

from harness.device import DeviceInfo
from harness.problems import AttentionProblem
from harness.providers.attention_interop import bshd_to_ours, to_bshd, wall_s
from harness.providers.registry import Prepared, register

PACKAGE = "flash-attn-4"


@lru_cache(maxsize=1)
def _import_error() -> str | None:
    try:
        import flash_attn.cute  # noqa: F401
    except Exception as e:  # ImportError, or the CuTe DSL failing to load its libraries
        text = (str(e).splitlines() or [""])[0][:160]
        return f"{PACKAGE} not importable ({type(e).__name__}: {text})"
    return None


def _version() -> str:
    """The installed distribution's version (flash_attn.cute.__version__ looks up "fa4")."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(PACKAGE)
    except PackageNotFoundError:
        return "unknown"


def _sm_major(device: DeviceInfo) -> int | None:
    return device.compute_capability[0] if device.compute_capability else None


def fa4_supports(problem: AttentionProblem, device: DeviceInfo) -> str | None:
    """Why FA4 cannot run `problem` on `device` (what its interface asserts), or None."""
    if problem.dtype not in ("fp16", "bf16"):
        return f"{PACKAGE} takes fp16/bf16 (fp8 on SM100 only), not {problem.dtype}"
    major = _sm_major(device)
    if problem.kv_layout == "paged" and major in (8, 12):
        return f"{PACKAGE} has no paged KV on SM{major}x (its interface asserts page_table is None)"
    if major in (10, 11) and problem.head_dim == 192:
        return f"{PACKAGE} on SM100 takes head_dim 8..128 or 256 (192 only with head_dim_v 128)"
    return None


def fa4_num_splits(problem: AttentionProblem, device: DeviceInfo) -> int:
    """1 (no split-KV) everywhere but decode on SM100/SM110, where 0 asks FA4's heuristic."""
    return 0 if problem.phase == "decode" and _sm_major(device) in (10, 11) else 1


@register(
    PACKAGE,
    "attention",
    "vendor",
    ("nvidia",),
    min_cc=(8, 0),
    available=_import_error,
    supports=fa4_supports,
)
def flash_attn_4(problem: AttentionProblem, inputs: dict, device: DeviceInfo) -> Prepared:
    """FlashAttention-4 (CuTe DSL): flash_attn_func, or flash_attn_varlen_func with page_table."""
    from flash_attn.cute import flash_attn_func, flash_attn_varlen_func

    t0 = time.perf_counter()
    q = to_bshd(inputs["q"])  # [B, Sq, Hq, D]
    splits = fa4_num_splits(problem, device)
    if problem.kv_layout == "dense":
        k, v = to_bshd(inputs["k"]), to_bshd(inputs["v"])  # [B, Skv, Hkv, D]
        api = "flash_attn_func"

        def run():
            return flash_attn_func(q, k, v, causal=problem.causal, num_splits=splits)

    else:
        k_cache, v_cache = inputs["k_cache"], inputs["v_cache"]  # [pages, P, Hkv, D]
        table, seqused = inputs["block_table"], inputs["cache_seqlens"]  # [B, n], [B] int32
        api = "flash_attn_varlen_func(page_table)"

        def run():
            return flash_attn_varlen_func(
                q,
                k_cache,
                v_cache,
                seqused_k=seqused,
                page_table=table,
                causal=problem.causal,
                num_splits=splits,
            )

    _, first_call_s = wall_s(run, q.device)  # compiles this shape class
    config = {
        "api": api,
        "version": _version(),
        "layout": "BSHD (copied before timing)",
        "num_splits": "heuristic" if splits == 0 else splits,
        "first_call_s": round(first_call_s, 3),
        "prepare_s": round(time.perf_counter() - t0, 3),
    }
    # FA4 returns (out [B, Sq, Hq, D], lse or None).
    return Prepared(run, config, lambda out: bshd_to_ours(out[0]))
