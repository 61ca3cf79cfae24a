"""own-triton's prefill FMHA: the `tl` kernel (attention_prefill.py) or, on sm_90, the Gluon one
(attention_gluon.py), whichever re-times faster.

The GEMM does the same (gemm.py, _gluon_if_faster): each kernel is tuned on its own, then the
two winners are re-timed against each other, interleaved (kernel_choice.py), at the power cap
where the winners take capped_retime.MIN_MS or more, as the sweep will time them. Each side's
tuned and re-timed ms go into the winner's config. Off sm_90, for dtypes or layouts the Gluon
kernel does not take, or where none of its candidates builds and runs, the `tl` kernel runs
alone, and its config says why. (Callers that need the log-sum-exp call prepare_attention: the
Gluon kernel writes none.)
"""

from __future__ import annotations

from typing import Any

import torch

from .. import capped_retime
from .attention_gluon import GluonUnsupported, prepare_gluon_attention
from .attention_launch import AttentionLaunch
from .attention_prefill import prepare_attention
from .attention_tune import PREFILL_SOURCES
from .kernel_choice import ATTENTION_FAMILY, choose

CHOICE_SOURCES = (*PREFILL_SOURCES, "triton/kernel_choice.py", "capped_retime.py")


def _tile(config: dict[str, Any]) -> str:
    return f"{config['BLOCK_M']}x{config['BLOCK_N']}"


def prepare_best_attention(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, *, causal: bool
) -> AttentionLaunch:
    """The faster of the tuned `tl` and Gluon prefill launches for q, k, v (shapes as
    prepare_attention's); config["choice"] says which ran ("tl" or "gluon") and why."""
    tl = prepare_attention(q, k, v, causal=causal, rung="full")
    if q.device.type != "cuda":  # the CPU interpreter
        tl.config.update(choice="tl", gluon="not run: no GPU")
        return tl
    try:
        gluon = prepare_gluon_attention(q, k, v, causal=causal)
    except GluonUnsupported as e:
        tl.config.update(choice="tl", gluon=f"not run: {e}")
        return tl
    except Exception as e:  # noqa: BLE001 - no Gluon candidate built and ran: the tl kernel
        tl.config.update(choice="tl", gluon=f"failed: {type(e).__name__}: {e}"[:300])
        return tl
    # the tuned ms of either side (a single-candidate tuner times nothing) says which timer
    tl_ms, gluon_ms = tl.config.get("tune_ms"), gluon.config.get("tune_ms")
    tuned_ms = tl_ms if tl_ms is not None else gluon_ms
    problem = (tuple(q.shape), tuple(k.shape), str(q.dtype), causal)
    choice = choose(
        tl,
        gluon,
        (
            f"tl {tl.config.get('tune_key', '')} {_tile(tl.config)}",
            f"gluon {gluon.config.get('tune_key', '')} {_tile(gluon.config)}",
        ),
        problem,
        q.device,
        torch.cuda.get_device_name(q.device),
        CHOICE_SOURCES,
        capped=tuned_ms is not None and tuned_ms >= capped_retime.MIN_MS,
        family=ATTENTION_FAMILY,
    )
    both = dict(
        tl_tuned_ms=tl_ms,
        gluon_tuned_ms=gluon_ms,
        tl_tile=_tile(tl.config),
        gluon_tile=_tile(gluon.config),
        # the deciding re-time of the two winners, interleaved (kernel_choice.py)
        choice_tl_ms=choice.tl_ms,
        choice_gluon_ms=choice.gluon_ms,
        choice_source=choice.source,
        choice_decided_by=choice.decided_by,
    )
    if choice.burst_tl_ms is not None:
        # the capped pair was within the noise and a burst pair decided: the times that decided
        both.update(
            choice_burst_tl_ms=choice.burst_tl_ms, choice_burst_gluon_ms=choice.burst_gluon_ms
        )
    if choice.kernel == "gluon-ws":
        gluon.config.update(choice="gluon", **both)
        return gluon
    tl.config.update(choice="tl", **both)
    return tl
