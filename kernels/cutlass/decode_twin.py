"""At decode, run the 2x1-clustered twin of a swapped 128-wide weight-tile winner where the
tuner's bursts put the twin within their noise of it: a selection rule on top of the tuner.

Why. At decode (M <= 64) the swapped kernels stream the weights, 128 rows of them per CTA. On
the H200, at N 28672, K 4096, the unclustered ones (sm90-swapab-128x{16,32,64} and the
one-CTA-per-tile sm90-swapab-dp-128x*) run in one of two states, drawn per allocation: in the
slow one +6-9% at the same 1,980 MHz. The tuner's burst cannot see which state the sweep's
buffers will draw. In eight fresh processes (results/h200/README.md, session 56,
`_process_spread/cluster-s56`) the slow state hit cuBLAS in 5 of 24 rows and the unclustered
configs in 4 of 48, and never the 2x1-clustered twin (24 of 24 rows within 59.2-61.9 us). The
whole grids agree:
- sessions 42, 44 and 45 (three whole grids): the sweep timed the unclustered pick 5-16% over
  the tuner at 5 of 9 points, the twin at 0 of 3;
- session 61 (`gemm_llama-s61`): the unclustered pick at 1x, 2x, 8x and 16x28672x4096 ran
  0.983x, 0.905x, 0.948x and 0.888x cuBLAS, the tuner's burst having put the twin within
  0.1-0.9% of it; the twin, picked at 4x, 0.989x.
Why the cluster protects the kernel is not measured. A 2x1 cluster pairs CTAs on adjacent weight
tiles and multicasts the token tile, which changes the order in which CTAs read HBM.

The rule reads only the tuner's recorded burst timings, which the disk cache keeps, so it
applies alike to a decision timed now and to one read back. It changes no measurement, so it is
not among gemm_tune.TUNE_SOURCES: the tune caches stay valid. A capped re-time decides without
it (that timing is sustained, as the sweep's is). It applies to bf16 and fp16 (one kernel with a
2-byte type), the dtypes it was measured on; not to fp8 or tf32. The provider
`own-cutlass-burst` runs the tuner's pick without the rule: the A/B that judges it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .. import capped_retime

# The twin within this of the winner's burst: the tuners' noise (capped_retime.NOISE: pairs
# closer than 2% are not told apart by one timing). In session 61's H200 tune pass the twin came
# within 0.1-0.9% at every M 1-16 point of N 28672.
BAND = capped_retime.NOISE
MAX_M = 64  # decode: the swapped candidates (gemm_tune._sm90_candidates)
DTYPES = ("bf16", "fp16")

_UNCLUSTERED = ("sm90-swapab-dp-128x", "sm90-swapab-128x")


def twin_name(config_name: str) -> str | None:
    """The 2x1-clustered one-CTA-per-tile twin of an unclustered swapped 128-wide config, or
    None for any other config (ping-pong 64-row tiles, the clustered ones, non-swapped)."""
    for prefix in _UNCLUSTERED:
        width = config_name.removeprefix(prefix)
        if width != config_name and width.isdigit():
            return f"sm90-swapab-dp-128x{width}-c2x1"
    return None


def prefer_twin(
    m: int,
    dtype: str,
    chosen: tuple[Any, Any],
    timings_ms: dict[str, float],
    capped_ms: dict[str, float],
    candidates: Sequence[tuple[Any, Any]],
) -> tuple[tuple[Any, Any], dict[str, Any]] | None:
    """(the twin candidate, what decided) where the rule moves the choice; None where it does
    not apply. Candidates are (config, options) pairs named "config.name:options", as the
    tuner's timings are keyed."""
    if m > MAX_M or dtype not in DTYPES or capped_ms:
        return None
    twin = twin_name(chosen[0].name)
    picked = f"{chosen[0].name}:{chosen[1]}"
    if twin is None or picked not in timings_ms:
        return None
    twins = [c for c in candidates if c[0].name == twin and f"{twin}:{c[1]}" in timings_ms]
    if not twins:
        return None
    best = min(twins, key=lambda c: timings_ms[f"{twin}:{c[1]}"])
    twin_ms, pick_ms = timings_ms[f"{twin}:{best[1]}"], timings_ms[picked]
    if twin_ms > pick_ms * BAND:
        return None
    why = dict(
        burst_pick=picked,
        burst_pick_ms=round(pick_ms, 5),
        twin=f"{twin}:{best[1]}",
        twin_ms=round(twin_ms, 5),
        band=BAND,
    )
    return best, why
