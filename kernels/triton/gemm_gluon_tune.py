"""The Gluon GEMM's tuner: every candidate timed in bursts (attention_tune.tune, kept on disk as
before), then, where the burst winner runs long enough to meet the power cap, its close rivals
timed again at the cap (capped_retime.py), as the `tl` tuner (gemm_tune.py) and own CUTLASS's
(cutlass/gemm_tune.py) already do.

Why: the bursts rank the tiles at the top clock, and the sweep times the winner over >= 0.5 s at
the 700 W cap. On an H100 (gemm_llama-s60, results/h100/_logs/session60), 2048x57344x8192:
the bursts put the 128x320 cooperative tile first (2.72 ms; 128x256 2.83, 128x192 ping-pong
2.85, 128x160 2.86); the pair re-time against the `tl` kernel (kernel_choice.py) read it at
2.86 ms at the cap, and the sweep timed it at 2.88 ms, 0.940x cuBLAS, where session 56's pick,
128x192, had run at 1.001x. Of own Triton's 38 points at M >= 512 there, the one Gluon pick
at M >= 2048 was the one below 0.95x. The fp8 probe of the same call found the burst pick 3-5%
behind the tile it ranked second at two long-K shapes (1024x8192x28672: 128x256 picked, 128x128
s6 5.3% faster in the probe's interleaved rounds).

The re-time's decision is kept on disk under its own family (CAPPED_FAMILY; the key is the
bursts' otherwise), so a second process re-times nothing, and a burst decision stored before the
re-time existed is re-timed once rather than tuned again.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import torch

from .. import capped_retime, tune_cache
from .attention_tune import tune as tune_bursts

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
    winner), and `tune_ms` becomes the chosen tile's time at the cap. A failed re-time (out of
    memory with four launches alive) leaves the burst winner, with `tune_capped_failed`."""
    if key in _DECIDED:
        cfg, info = _DECIDED[key]
        return dict(cfg), dict(info)
    cfg, info = tune_bursts(key, candidates, build, enabled, output, stored("burst"), label)
    contenders = capped_retime.contenders(dict(info.get("tune_timings_ms") or {}))
    if not enabled or not contenders:
        return cfg, info
    index_of = {label(c): i for i, c in enumerate(candidates)}
    capped_key = stored(CAPPED_FAMILY)
    found = tune_cache.load(capped_key, candidates)
    if found is not None:
        capped_ms = {str(k): float(v) for k, v in found.record.get("capped_ms", {}).items()}
        chosen, source = found.index, "cache"
    else:
        try:
            launches = {name: build(candidates[index_of[name]]) for name in contenders}
            capped_ms = capped_retime.retime(launches, output.device)
        except Exception as exc:  # noqa: BLE001 - the burst winner stands
            info["tune_capped_failed"] = f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}"
            return cfg, info
        chosen, source = index_of[capped_retime.winner(capped_ms, contenders[0])], "timed"
        record = dict(capped_ms=capped_ms, contenders=contenders)
        tune_cache.save(
            capped_key, candidates, chosen, capped_ms[label(candidates[chosen])], record
        )
    cfg = dict(candidates[chosen])
    info = dict(
        info,
        tune_ms=capped_ms[label(cfg)],
        tune_capped_ms={k: round(v, 5) for k, v in capped_ms.items()},
        tune_capped_source=source,
        tune_burst_pick=contenders[0],
    )
    _DECIDED[key] = (cfg, info)
    return dict(cfg), dict(info)


def clear_cache() -> None:
    """Forget this process's decisions (tests)."""
    _DECIDED.clear()
