"""The project's own Gluon kernels, in Triton's tile-level dialect; sm_90 only.

Attention (kernels/triton/attention_gluon_kernel.py): FlashAttention-3's structure (TMA producer
warp, two consumer warpgroups, softmax overlapped with P V); prefill over a dense KV cache.
  own-triton-gluon              the full kernel; when causal its tuner also times the persistent
                                candidates and keeps the faster (session 88, H200: they won at
                                causal 1-2k by 1.04-1.17x and lost at 4-16k by 4-5%)
  own-triton-gluon-not-persistent  its rung without the persistent candidates (one CTA per work
                                item: the headline up to session 88)
  own-triton-gluon-no-overlap   its rung without the intra-warpgroup overlap (nor persistence)
  own-triton-gluon-persistent   its rung on at most one CTA per SM looping over work items (the
                                next item's Q and K/V load under this one), the only candidates
  own-triton-gluon-no-pingpong  its rung without the candidates whose two consumers take turns
                                to issue their wgmmas (FA3's and FA4's ping-pong)
  own-triton-gluon-two-compare-mask  the full kernel masking a causal score by two compares and
                                their AND (FA4 compares it once, against a key limit a row)
  own-triton-gluon-scalar-cvt   two-compare-mask with Triton's one-at-a-time conversion of P to
                                fp16/bf16 (FA4 converts two scores a cvt)
  own-triton-gluon-scaled-mask  scalar-cvt masking the scaled scores, not the raw ones: the
                                per-tile math up to session 104 (session 105's SASS reading)
GEMM (kernels/triton/gemm_gluon_kernel.py): CUTLASS's warp-specialized structure (TMA producer
warp, two consumer warpgroups in the cooperative or the ping-pong schedule, whichever tunes
faster; persistent) with tile widths fitted to the SM count.
  own-triton-gluon              bf16 / fp16
(own-triton, the `tl` kernels, are the rungs without warp specialization.)
"""

from __future__ import annotations

from harness.device import DeviceInfo
from harness.problems import AttentionProblem, GemmProblem
from harness.providers.registry import Prepared, Unsupported, register

DECODE_MAX_Q = 8  # own_triton.DECODE_MAX_Q: shorter prompts go to the decode kernels
RUNGS = (
    "full",
    "not-persistent",
    "no-overlap",
    "persistent",
    "no-pingpong",
    "two-compare-mask",
    "scalar-cvt",
    "scaled-mask",
)


def provider_name(rung: str) -> str:
    return "own-triton-gluon" if rung == "full" else f"own-triton-gluon-{rung}"


def _off_sm90(kernel: str, device: DeviceInfo) -> str | None:
    """Why `kernel` cannot run on `device` (not sm_90), or None."""
    cc = device.compute_capability if device is not None else None
    if cc is not None and cc != (9, 0):
        return f"the Gluon {kernel} runs on sm_90 only (wgmma, setmaxnreg); device is sm_{cc[0]}{cc[1]}"
    return None


def _supports(problem: AttentionProblem, device: DeviceInfo) -> str | None:
    if (why := _off_sm90("FMHA", device)) is not None:
        return why
    if problem.dtype not in ("fp16", "bf16"):
        return "the Gluon FMHA takes fp16/bf16"
    if problem.head_dim not in (64, 128, 256):
        return "the Gluon FMHA takes head_dim 64, 128 or 256"
    if problem.kv_layout != "dense":
        return "the Gluon FMHA reads a dense KV cache (paged caches: the decode kernels)"
    if problem.q_len <= DECODE_MAX_Q and problem.q_len < problem.kv_len:
        return f"q_len <= {DECODE_MAX_Q} is decode: the split-KV kernels (own-triton)"
    return None


def _register(rung: str) -> None:
    def prepare(problem: AttentionProblem, inputs: dict, device: DeviceInfo) -> Prepared:
        from harness_kernels.triton.attention_gluon import (
            GluonUnsupported,
            prepare_gluon_attention,
        )

        try:
            launch = prepare_gluon_attention(
                inputs["q"], inputs["k"], inputs["v"], causal=problem.causal, rung=rung
            )
        except GluonUnsupported as e:
            raise Unsupported(str(e)) from None
        return Prepared(launch, dict(launch.config))

    prepare.__doc__ = (
        "Own Gluon FMHA forward (TMA producer warp, two consumer warpgroups), intra-warpgroup "
        f"overlap {'off' if rung == 'no-overlap' else 'on'}"
        + {
            "full": ", persistent or one CTA per work item when causal, whichever tunes faster",
            "not-persistent": ", one CTA per work item",
            "no-overlap": ", one CTA per work item",
            "persistent": ", persistent (one CTA per SM over the work items)",
            "no-pingpong": ", the full kernel's candidates without the consumers' ping-pong",
            "two-compare-mask": ", the full kernel's candidates masking by two compares a score",
            "scalar-cvt": ", two-compare-mask's candidates converting P one score a cvt",
            "scaled-mask": ", the full kernel's candidates with the per-tile math up to session 104",
        }[rung]
        + "; sm_90, dense KV."
    )
    register(
        provider_name(rung),
        "attention",
        "own",
        ("nvidia",),
        min_cc=(9, 0),
        supports=_supports,
        compiles_ahead=True,
    )(prepare)


for _rung in RUNGS:
    _register(_rung)


def _gemm_supports(problem: GemmProblem, device: DeviceInfo) -> str | None:
    if (why := _off_sm90("GEMM", device)) is not None:
        return why
    if problem.dtype not in ("fp16", "bf16", "fp8_e4m3"):
        return "the Gluon GEMM takes fp16/bf16/fp8_e4m3 (tf32: own-triton)"
    if problem.dtype == "fp8_e4m3" and problem.layout != "nt":
        return "fp8 wgmma reads B K-major only: the Gluon GEMM takes fp8 in layout nt"
    if problem.batch != 1:
        return "batched GEMM is not implemented in the Gluon GEMM"
    return None


@register(
    "own-triton-gluon",
    "gemm",
    "own",
    ("nvidia",),
    min_cc=(9, 0),
    supports=_gemm_supports,
    compiles_ahead=True,
)
def _prepare_gemm(problem: GemmProblem, inputs: dict, device: DeviceInfo) -> Prepared:
    """Own Gluon GEMM: TMA producer warp, two consumer warpgroups, persistent, tile widths
    of two power-of-two parts fitted to the SM count; sm_90, bf16/fp16, and fp8 e4m3 with
    per-tensor scales (bf16 out, layout nt)."""
    from harness_kernels.triton.gemm_gluon import GluonGemmUnsupported, prepare_gluon_matmul

    try:
        launch = prepare_gluon_matmul(
            inputs["a"], inputs["b"], a_scale=inputs.get("a_scale"), b_scale=inputs.get("b_scale")
        )
    except GluonGemmUnsupported as e:
        raise Unsupported(str(e)) from None
    return Prepared(launch, dict(launch.config))
