"""The Gluon GEMM's tuner: every candidate timed in bursts (attention_tune.tune, kept on disk as
before), then, where the burst winner runs long enough to meet the power cap, its close rivals
timed again at the cap (capped_retime.py), as the `tl` tuner (gemm_tune.py) and own CUTLASS's
(cutlass/gemm_tune.py) already do.

Why: the bursts rank the tiles at the top clock, and the sweep times the winner over >= 0.5 s at
the 700 W cap. On an H100 (gemm_llama-s60, results/h100/_logs/session60), 2048x57344x8192:
the bursts put the 128x320 cooperative tile first (2.72 ms; 128x256 2.83, 128x192 ping-pong
2.85, 128x160 2.86); the pair re-time against the `tl` kernel (kernel_choice.py) read it at
2.86 ms at the cap, and the sweep timed it at 2.88 ms, 0.940x cuBLAS, where session 56's pick,
128x192, had run at 1.001x. Of own Triton's 23 points at M >= 2048 there, it was the one
Gluon pick and the one below 0.95x. The fp8 probe of the same call found the tuner's pick behind
another tile it had timed at two long-K shapes (1024x8192x28672: 128x256 picked, 128x128 s6
took 5.3% less time in the probe's interleaved rounds; 8192^3: the `tl` kernel picked, Gluon
128x192 2.5% less).

The re-time's decision is kept on disk under its own family (CAPPED_FAMILY; the key is the
bursts' otherwise) with the contenders it compared, so a second process re-times nothing, and
one whose bursts ranked other contenders (timed again since) re-times them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import torch

from .. import capped_retime, tune_cache
from .attention_tune import tune as tune_bursts
from .gemm_tune import CAPPED_BAND

CAPPED_FAMILY = "triton-gemm-gluon-capped"
# (the tuner's key) -> (config, info): this process's decisions, re-time included
_DECIDED: dict[tuple, tuple[dict, dict[str, Any]]] = {}


def tune(
    key: tuple,
    candidates: Sequence[dict],
    build: Callable[[dict], Callable[[], object]],
    enabled: bool,
    output: torch.Tensor,
    stored: Callable[[str], tune_cache.TuneKey | None],
    label: Callable[[dict], str],
) -> tuple[dict, dict[str, Any]]:
    """(config, info) as attention_tune.tune returns them, after the capped re-time where one
    applies. `stored(family)`: the disk key of this decision under a family (the bursts' family,
    or CAPPED_FAMILY). Where the re-time ran, info adds `tune_capped_ms` (each contender's mean at
    the cap), `tune_capped_source` ("timed" | "cache") and `tune_burst_pick` (the bursts'
    winner); `tune_ms` becomes the chosen tile's time at the cap and `tune_key` names both disk
    entries (bursts, re-time). A failed re-time (out of memory with four launches alive) leaves
    the burst winner, with `tune_capped_failed`."""
    if not enabled:
        return tune_bursts(key, candidates, build, enabled, output, stored("burst"), label)
    if key in _DECIDED:
        cfg, info = _DECIDED[key]
        return dict(cfg), dict(info)
    cfg, info = tune_bursts(key, candidates, build, enabled, output, stored("burst"), label)
    timings = dict(info.get("tune_timings_ms") or {})
    # the rivals within CAPPED_BAND of the burst winner, as own Triton's `tl` tuner takes them
    # (gemm_tune.py says why: wider, the cap's scatter chose a tile 8.4% behind in the burst that
    # the sweep then timed at 0.92x cuBLAS); the H100's 2048x57344x8192 rivals were 4-5% apart
    close = {name: ms for name, ms in timings.items() if ms <= min(timings.values()) * CAPPED_BAND}
    if not (contenders := capped_retime.contenders(close)):
        return cfg, info
    index_of = {label(c): i for i, c in enumerate(candidates)}
    capped_key = stored(CAPPED_FAMILY)
    found = _stored_retime(capped_key, candidates, contenders, label)
    if found is not None:
        chosen, capped_ms, source = *found, "cache"
    else:
        try:
            launches = {name: build(candidates[index_of[name]]) for name in contenders}
            capped_ms = capped_retime.retime(launches, output.device)
            finite = {name: ms for name, ms in capped_ms.items() if math.isfinite(ms)}
            if contenders[0] not in finite:
                raise RuntimeError(f"the burst winner read {capped_ms[contenders[0]]} at the cap")
        except Exception as exc:  # noqa: BLE001 - the burst winner stands
            first = (str(exc).splitlines() or [""])[0][:200]
            info["tune_capped_failed"] = f"{type(exc).__name__}: {first}"
            _DECIDED[key] = (cfg, info)  # one process runs one tile per point
            return dict(cfg), dict(info)
        chosen, source = index_of[capped_retime.winner(finite, contenders[0])], "timed"
        record = dict(capped_ms=capped_ms, contenders=contenders)
        tune_cache.save(
            capped_key, candidates, chosen, capped_ms[label(candidates[chosen])], record
        )
    cfg = dict(candidates[chosen])
    burst_key = info.get("tune_key", "")
    info = dict(
        info,
        tune_ms=capped_ms[label(cfg)],
        tune_capped_ms={k: round(v, 5) for k, v in capped_ms.items()},
        tune_capped_source=source,
        tune_burst_pick=contenders[0],
        tune_key=",".join(k for k in (burst_key, capped_key.digest if capped_key else "") if k),
    )
    _DECIDED[key] = (cfg, info)
    return dict(cfg), dict(info)


def _stored_retime(
    key: tune_cache.TuneKey | None,
    candidates: Sequence[dict],
    contenders: list[str],
    label: Callable[[dict], str],
) -> tuple[int, dict[str, float]] | None:
    """(chosen index, capped ms per contender) of a stored re-time of these same contenders, or
    None: none stored, or one of other contenders (the bursts were timed again since), or one
    that lacks the chosen tile's time (a damaged entry is re-timed, never fatal)."""
    found = tune_cache.load(key, candidates)
    if found is None or found.record.get("contenders") != contenders:
        return None
    try:
        capped_ms = {str(k): float(v) for k, v in found.record["capped_ms"].items()}
        capped_ms[label(candidates[found.index])]  # noqa: B018 - present, or the entry is damaged
    except (KeyError, TypeError, ValueError, AttributeError):
        return None
    return found.index, capped_ms


def clear_cache() -> None:
    """Forget this process's decisions (tests)."""
    _DECIDED.clear()
