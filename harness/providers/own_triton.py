"""The project's own Triton kernels and their ladder rungs (each rung removes one feature).

GEMM rungs (kernels/triton/gemm.py documents what each removes):
  own-triton, own-triton-no-gluon, own-triton-no-swap-ab, own-triton-no-wave-tiles,
  own-triton-burst-ties (a capped tie between the `tl` and Gluon kernels broken by a burst pair,
  the rule before session 85), own-triton-tl-ties (the tie given to `tl` without timing it
  again, sessions 85-100), own-triton-no-tma, own-triton-no-pipeline,
  own-triton-not-persistent, own-triton-no-splitk, own-triton-no-tensor-cores
Attention rungs (kernels/triton/attention_prefill.py, attention_decode.py):
  own-triton, own-triton-no-gluon (the `tl` kernel alone, where own-triton on sm_90 also tunes
  the Gluon FMHA and runs the faster: attention_choice.py; for decode the Gluon decode's tiles
  join the `tl` kernel's in one search: attention_decode.py), own-triton-q-reload (prefill
  only), own-triton-no-pipeline, own-triton-no-tma (for decode the `tl` kernel alone too),
  own-triton-reg-stage (prefill only: the study's register trick), own-triton-no-split (decode
  only), own-triton-no-balanced (decode only: full without the Gluon decode's balanced runs),
  own-triton-no-longest-first (decode only: the Gluon decode's work items in item order),
  own-triton-no-early-start (decode only: each Gluon decode item's Q box and first page lookup
  wait on its length's load, as before session 107)
On the CPU the kernels run under the Triton interpreter, which must be switched on before the
kernel modules are imported (the CLI does so for device=cpu).
"""

from __future__ import annotations

import os

# the GEMM kernel's own rung list (gemm_configs imports no triton.jit kernel)
from harness_kernels.triton.gemm_configs import RUNGS as GEMM_RUNGS

from harness.device import DeviceInfo
from harness.problems import AttentionProblem, GemmProblem
from harness.providers.registry import Prepared, Unsupported, register

VENDORS = ("nvidia", "amd", "cpu")
ATTENTION_RUNGS = (
    "full",
    "no-gluon",
    "q-reload",
    "no-pipeline",
    "no-tma",
    "reg-stage",
    "no-split",
    "no-balanced",
    "no-longest-first",
    "no-early-start",
)
PREFILL_ONLY = ("q-reload", "reg-stage")
DECODE_ONLY = ("no-split", "no-balanced", "no-longest-first", "no-early-start")
DECODE_MAX_Q = 8


def _provider_name(rung: str) -> str:
    return "own-triton" if rung == "full" else f"own-triton-{rung}"


def _require_interpreter_on_cpu(device: DeviceInfo) -> None:
    if device.type == "cpu" and os.environ.get("TRITON_INTERPRET") != "1":
        raise Unsupported("CPU runs need TRITON_INTERPRET=1 before the kernels are imported")


def _gemm_supports(problem: GemmProblem, device: DeviceInfo) -> str | None:
    if problem.batch != 1:
        return "batched GEMM is not implemented in the own Triton kernel"
    return None


def _gemm_rung(rung: str) -> None:
    def prepare(problem: GemmProblem, inputs: dict, device: DeviceInfo) -> Prepared:
        _require_interpreter_on_cpu(device)
        from harness_kernels.triton.gemm import prepare_matmul

        launch = prepare_matmul(
            inputs["a"],
            inputs["b"],
            rung=rung,
            a_scale=inputs.get("a_scale"),
            b_scale=inputs.get("b_scale"),
            fp32_precision="tf32" if problem.dtype == "tf32" else "ieee",
        )
        return Prepared(launch, dict(launch.config))

    prepare.__doc__ = f"Own Triton GEMM, ladder rung '{rung}'."
    register(
        _provider_name(rung),
        "gemm",
        "own",
        VENDORS,
        supports=_gemm_supports,
        compiles_ahead=True,
    )(prepare)


def _is_decode(problem: AttentionProblem) -> bool:
    return problem.q_len <= DECODE_MAX_Q and problem.q_len < problem.kv_len


def _attention_supports_for(rung: str):
    def supports(problem: AttentionProblem, device: DeviceInfo) -> str | None:
        if problem.dtype not in ("fp16", "bf16"):
            return "own attention kernels take fp16/bf16"
        if problem.head_dim not in (64, 128, 256):
            return "own attention kernels take head_dim 64, 128 or 256"
        decode = _is_decode(problem)
        if problem.kv_layout == "paged" and not decode:
            return f"paged caches go through the decode kernel (q_len <= {DECODE_MAX_Q})"
        if rung in DECODE_ONLY and not decode:
            return f"{rung} is a decode rung"
        if rung in PREFILL_ONLY and decode:
            return f"{rung} is a prefill rung"
        return None

    return supports


def _attention_rung(rung: str) -> None:
    def prepare(problem: AttentionProblem, inputs: dict, device: DeviceInfo) -> Prepared:
        _require_interpreter_on_cpu(device)
        if _is_decode(problem):
            from harness_kernels.triton.attention_decode import prepare_decode

            dense = problem.kv_layout == "dense"
            launch = prepare_decode(
                inputs["q"],
                inputs["k"] if dense else inputs["k_cache"],
                inputs["v"] if dense else inputs["v_cache"],
                cache_seqlens=inputs["cache_seqlens"],
                block_table=None if dense else inputs["block_table"],
                causal=problem.causal,
                rung=rung,
            )
        elif rung == "full":
            from harness_kernels.triton.attention_choice import prepare_best_attention

            launch = prepare_best_attention(
                inputs["q"], inputs["k"], inputs["v"], causal=problem.causal
            )
        else:
            from harness_kernels.triton.attention_prefill import prepare_attention

            # no-gluon is the full `tl` kernel without the Gluon alternative
            tl_rung = "full" if rung == "no-gluon" else rung
            launch = prepare_attention(
                inputs["q"], inputs["k"], inputs["v"], causal=problem.causal, rung=tl_rung
            )
            if rung == "no-gluon":
                launch.config["variant"] = rung
        return Prepared(launch, dict(launch.config))

    prepare.__doc__ = f"Own Triton attention (prefill FMHA / split-KV decode), rung '{rung}'."
    register(
        _provider_name(rung),
        "attention",
        "own",
        VENDORS,
        supports=_attention_supports_for(rung),
        compiles_ahead=True,
    )(prepare)


for _rung in GEMM_RUNGS:
    _gemm_rung(_rung)
for _rung in ATTENTION_RUNGS:
    _attention_rung(_rung)
