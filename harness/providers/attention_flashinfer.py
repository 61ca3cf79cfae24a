"""FlashInfer (`flashinfer-python`) as a baseline: the paged-KV attention library of vLLM and
SGLang, for prefill and decode over dense and paged caches.

Which API a point goes through (flashinfer_route):
  paged, q_len 1         BatchDecodeWithPagedKVCacheWrapper   plan(indptr, indices, last_page_len)
  paged, q_len > 1       BatchPrefillWithPagedKVCacheWrapper  plan(qo_indptr, ... the same)
  dense, batch 1, q 1    single_decode_with_kv_cache
  dense, batch > 1, q 1  BatchDecodeWithPagedKVCacheWrapper, each sequence one page of kv_len
  dense, batch 1         single_prefill_with_kv_cache
  dense, batch > 1       BatchPrefillWithRaggedKVCacheWrapper plan(qo_indptr, kv_indptr)
Dense decode at batch > 1 goes through the decode wrapper (a dense cache is a paged one whose
pages are whole sequences), as a serving engine would: the ragged prefill wrapper with one query
token per sequence ran at 1,100-1,300 GB/s on the H200 where the decode kernel reaches ~2,800.

Decode has two kernels: CUDA-core (FlashInfer's decode kernel) and tensor-core (its prefill
kernels with q_len 1). vLLM and SGLang pick by rule (tensor cores once a KV head serves more
than 4 query heads); here, on a GPU, prepare times both (cold L2, as the harness times) and keeps
the faster, so the baseline is FlashInfer at its best: provider_config records the choice, both
times (`decode_us`) and what the rule would have picked (`rule_tensor_cores`). Off a GPU (the
CPU tests) the rule decides.
The paged prefill wrapper (q_len > 1 over a paged cache: speculative-decoding verification) has
two backends on Hopper. backend="auto" resolves to fa3, a persistent kernel of 128-row query tiles
with no KV split, which ran at 420-980 GB/s on the H200 at q_len 2-8 (session 53,
fmha_decode_serving) where fa2's split-KV kernels, the ones its tensor-core decode uses, ran
at 3,600. On a GPU prepare times "auto" and "fa2" and keeps the faster: `backend` is the choice,
`prefill_us` both times and `auto_backend` what FlashInfer would have picked.
Everything is in FlashInfer's NHD layout: our paged cache already is ([pages, page_size, Hkv,
D]), and our page table becomes its CSR form (attention_interop.page_table_to_csr, ragged
lengths included); dense q, k, v are copied token-major in prepare. (The FA3 single-prefill
binding of 0.7.2 reads kv_len from k.size(0) whatever the layout, so HND views are not used.)

Untimed, in prepare: the wrapper's plan() (`plan_s`; for wrappers it also builds or loads the
JIT module) and a first call (`first_call_s`; JIT for the single_* functions; for decode, the
kept kernel's first call while choosing). Kernels are
compiled by nvcc on first use into ~/.cache/flashinfer (FLASHINFER_WORKSPACE_BASE moves it),
where later points and runs find them. provider_config records the backend FlashInfer picked
(fa2 / fa3 / cudnn ...), the kernel kind for decode, and the package version.
"""

from __future__ import annotations

import time
from functools import lru_cache

import torch

from harness.device import DeviceInfo
from harness.problems import AttentionProblem
from harness.providers.attention_interop import (
    page_table_to_csr,
    to_tokens,
    tokens_to_ours,
    uniform_indptr,
    wall_s,
)
from harness.providers.registry import Prepared, register

PACKAGE = "flashinfer"
HEAD_DIMS = (64, 128, 256)  # DISPATCH_HEAD_DIM in its include/flashinfer/utils.cuh (and 512)
WORKSPACE_BYTES = 256 << 20  # the float workspace of split-KV partial results (vLLM's size)


@lru_cache(maxsize=1)
def _import_error() -> str | None:
    try:
        import flashinfer  # noqa: F401
    except Exception as e:  # ImportError, or a binding built for another torch / CUDA
        text = (str(e).splitlines() or [""])[0][:160]
        return f"{PACKAGE} not importable ({type(e).__name__}: {text})"
    return None


def flashinfer_supports(problem: AttentionProblem, device: DeviceInfo) -> str | None:
    """Why FlashInfer cannot run `problem`, or None."""
    if problem.dtype not in ("fp16", "bf16"):
        return f"{PACKAGE} takes fp16/bf16 (and fp8 KV), not {problem.dtype}"
    if problem.head_dim not in HEAD_DIMS:
        return f"{PACKAGE} dispatches head_dim {HEAD_DIMS} (and 512), not {problem.head_dim}"
    return None


def flashinfer_route(problem: AttentionProblem) -> str:
    """The FlashInfer API that runs `problem` (see the module docstring)."""
    if problem.kv_layout == "paged":
        return "batch_decode_paged" if problem.q_len == 1 else "batch_prefill_paged"
    if problem.batch == 1:
        return "single_decode" if problem.q_len == 1 else "single_prefill"
    return "batch_decode_dense" if problem.q_len == 1 else "batch_prefill_ragged"


CUDA_CORE_GROUPS = (1, 2, 3, 4, 6, 8, 16)  # group sizes its CUDA-core decode instantiates


def use_tensor_cores(problem: AttentionProblem) -> bool:
    """Decode on tensor cores (FlashInfer's prefill kernels) once a KV head serves more than 4
    query heads, else its CUDA-core decode kernel: SGLang's should_use_tensor_core rule (the
    CUDA-core kernel also instantiates only groups 1, 2, 3, 4, 6, 8 and 16)."""
    return problem.q_heads // problem.kv_heads > 4


def _backend_of(wrapper) -> str:
    return str(getattr(wrapper, "resolved_backend", None) or getattr(wrapper, "_backend", "?"))


def _single(problem: AttentionProblem, inputs: dict, fi, config: dict):
    """single_decode / single_prefill (batch 1, dense): run, output mapping."""
    q, (Hq, D) = inputs["q"], (problem.q_heads, problem.head_dim)
    k, v = to_tokens(inputs["k"]), to_tokens(inputs["v"])  # [Skv, Hkv, D]
    if problem.q_len == 1:
        qd = q.reshape(Hq, D)  # [Hq, D]

        def single_decode(tc: bool):
            run = lambda: fi.single_decode_with_kv_cache(
                qd, k, v, kv_layout="NHD", use_tensor_cores=tc
            )
            return run, {"backend": "fa2"}  # tensor cores: its fa2 prefill module, q_len 1

        run = _decode_choice(problem, single_decode, q.device, config)
        return run, lambda o: o.view(1, Hq, 1, D)
    qs = to_tokens(q)  # [Sq, Hq, D]
    config["backend"] = _single_prefill_backend(q, D)
    run = lambda: fi.single_prefill_with_kv_cache(qs, k, v, causal=problem.causal, kv_layout="NHD")
    return run, lambda o: tokens_to_ours(o, 1)


def _single_prefill_backend(q: torch.Tensor, head_dim: int) -> str:
    """What single_prefill_with_kv_cache's backend="auto" resolves to (its own function)."""
    try:
        from flashinfer.utils import PosEncodingMode, determine_attention_backend

        return determine_attention_backend(
            q.device,
            PosEncodingMode.NONE.value,
            False,  # use_fp16_qk_reduction
            False,  # use_custom_mask
            q.dtype,
            q.dtype,
            head_dim_qk=head_dim,
            head_dim_vo=head_dim,
        )
    except Exception as e:  # an internal helper: record that it moved, measure anyway
        return f"auto (unresolved: {type(e).__name__})"


def _batched(problem: AttentionProblem, inputs: dict, fi, route: str, config: dict):
    """The three wrappers: plan (timed into config), run, output mapping."""
    q = inputs["q"]
    B, Hq, Hkv, D = problem.batch, problem.q_heads, problem.kv_heads, problem.head_dim
    dev, dt = q.device, q.dtype
    qt = to_tokens(q)  # [B * Sq, Hq, D]
    types = {"q_data_type": dt, "kv_data_type": dt}
    output = lambda o: tokens_to_ours(o, B)
    if route == "batch_prefill_ragged":
        k, v = to_tokens(inputs["k"]), to_tokens(inputs["v"])  # [B * Skv, Hkv, D]
        w = fi.BatchPrefillWithRaggedKVCacheWrapper(_workspace(dev), "NHD")
        qo_indptr = uniform_indptr(B, problem.q_len, dev)
        kv_indptr = uniform_indptr(B, problem.kv_len, dev)
        plan = lambda: w.plan(qo_indptr, kv_indptr, Hq, Hkv, D, causal=problem.causal, **types)
        _, plan_s = wall_s(plan, dev)
        config.update(plan_s=round(plan_s, 3), backend=_backend_of(w))
        out = torch.empty_like(qt)
        return (lambda: w.run(qt, k, v, out=out)), output
    if route == "batch_decode_dense":  # one page per sequence: [B, Skv, Hkv, D]
        S = problem.kv_len
        kv = tuple(to_tokens(inputs[n]).view(B, S, Hkv, D) for n in ("k", "v"))
        indptr = uniform_indptr(B, 1, dev)
        indices = torch.arange(B, dtype=torch.int32, device=dev)
        last = torch.full((B,), S, dtype=torch.int32, device=dev)
        decode = _decode_wrapper(fi, (indptr, indices, last, Hq, Hkv, D, S), types, qt, kv, dev)
        return _decode_choice(problem, decode, dev, config), output
    P = problem.page_size
    kv = (inputs["k_cache"], inputs["v_cache"])  # NHD pages [pages, P, Hkv, D]
    indptr, indices, last = page_table_to_csr(inputs["block_table"], inputs["cache_seqlens"], P)
    if route == "batch_decode_paged":
        decode = _decode_wrapper(fi, (indptr, indices, last, Hq, Hkv, D, P), types, qt, kv, dev)
        return _decode_choice(problem, decode, dev, config), output
    qo_indptr = uniform_indptr(B, problem.q_len, dev)
    plan_args = (qo_indptr, indptr, indices, last, Hq, Hkv, D, P)

    def prefill(backend: str):
        w = fi.BatchPrefillWithPagedKVCacheWrapper(_workspace(dev), "NHD", backend=backend)
        _, plan_s = wall_s(lambda: w.plan(*plan_args, causal=problem.causal, **types), dev)
        out = torch.empty_like(qt)
        return (lambda: w.run(qt, kv, out=out)), {
            "plan_s": round(plan_s, 3),
            "backend": _backend_of(w),
        }

    return _prefill_choice(prefill, dev, config), output


def _workspace(dev: torch.device) -> torch.Tensor:
    """A wrapper's float workspace: plan state lives in it, so each wrapper gets its own."""
    return torch.zeros(WORKSPACE_BYTES, dtype=torch.uint8, device=dev)


def _decode_wrapper(fi, plan_args: tuple, types: dict, qt, kv, dev):
    """make(tc) -> (run, config) for BatchDecodeWithPagedKVCacheWrapper, planned (plan_s)."""

    def make(tc: bool):
        w = fi.BatchDecodeWithPagedKVCacheWrapper(_workspace(dev), "NHD", use_tensor_cores=tc)
        out = torch.empty_like(qt)
        _, plan_s = wall_s(lambda: w.plan(*plan_args, **types), dev)
        return (lambda: w.run(qt, kv, out=out)), {
            "plan_s": round(plan_s, 3),
            "backend": _backend_of(w),
        }

    return make


def _timed(made: dict, device: torch.device) -> dict:
    """{option: (cold-L2 us or None, run, cfg + first_call_s)} from {option: (run, cfg)}: each
    run called once (JIT / module load, outside the comparison), then timed if there is a choice."""
    if len(made) > 1:
        from harness_kernels.bench_cold import bench_cold  # the own tuners' cold timer
    timed = {}
    for option, (run, cfg) in made.items():
        _, first_s = wall_s(run, device)
        us = bench_cold(run, device) * 1e3 if len(made) > 1 else None
        timed[option] = (us, run, dict(cfg, first_call_s=round(first_s, 3)))
    return timed


def _decode_choice(problem: AttentionProblem, make, device: torch.device, config: dict):
    """The faster of FlashInfer's CUDA-core and tensor-core decode on a GPU (the rule's pick
    elsewhere); config gets the choice, both times and the rule's pick. make(tc) -> (run, cfg)."""
    rule = use_tensor_cores(problem)
    options = [rule]
    if device.type == "cuda" and problem.q_heads // problem.kv_heads in CUDA_CORE_GROUPS:
        options = [False, True]
    timed = _timed({tc: make(tc) for tc in options}, device)
    tc = min(timed, key=lambda t: timed[t][0]) if len(options) > 1 else rule
    config.update(timed[tc][2], use_tensor_cores=tc, rule_tensor_cores=rule)
    if len(options) > 1:
        config["decode_us"] = {
            ("tensor_cores" if t else "cuda_cores"): round(v[0], 2) for t, v in timed.items()
        }
    return timed[tc][1]


def _prefill_choice(make, device: torch.device, config: dict):
    """The faster of the paged prefill wrapper's "auto" backend and fa2 on a GPU ("auto" alone
    elsewhere, or where it resolves to fa2); config gets the choice (`backend`), both times
    (`prefill_us`) and what "auto" resolved to (`auto_backend`). make(backend) -> (run, cfg)."""
    made = {"auto": make("auto")}
    auto = made["auto"][1]["backend"]  # resolved by plan()
    if device.type == "cuda" and auto != "fa2":
        made["fa2"] = make("fa2")
    timed = _timed(made, device)
    pick = min(timed, key=lambda b: timed[b][0]) if len(timed) > 1 else "auto"
    config.update(timed[pick][2], auto_backend=auto)
    if len(timed) > 1:
        config["prefill_us"] = {v[2]["backend"]: round(v[0], 2) for v in timed.values()}
    return timed[pick][1]


@register(
    PACKAGE,
    "attention",
    "vendor",
    ("nvidia",),
    min_cc=(8, 0),
    available=_import_error,
    supports=flashinfer_supports,
)
def flashinfer_provider(problem: AttentionProblem, inputs: dict, device: DeviceInfo) -> Prepared:
    """FlashInfer: single/batch prefill (ragged or paged) and decode (single or paged), NHD."""
    import flashinfer as fi

    t0 = time.perf_counter()
    route = flashinfer_route(problem)
    config: dict = {"api": route, "version": fi.__version__, "kv_layout": "NHD"}
    if route.startswith("single"):
        run, output = _single(problem, inputs, fi, config)
    else:
        run, output = _batched(problem, inputs, fi, route, config)
    if "first_call_s" not in config:  # decode routes took theirs while choosing the kernel
        _, first_call_s = wall_s(run, inputs["q"].device)
        config["first_call_s"] = round(first_call_s, 3)
    config["prepare_s"] = round(time.perf_counter() - t0, 3)
    return Prepared(run, config, output)
