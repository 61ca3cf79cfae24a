"""Why two timings of one closure differ, read from the numbers alone (no torch, no GPU).

Three timings per point: `harness` (the default protocol: 2x-LLC read flush, 300 ms warm-up,
batched samples), `matched` (the harness with nvbench's cold-mode flush and stop rule) and
`nvbench` (its cold mode through cuda-bench). Two comparisons carry the explanation:

    matched vs nvbench   the same protocol by two tools: within MATCH_TOL is "matched"; beyond
                         it, SM clocks that differ by more than CLOCK_TOL explain it (nvbench
                         synchronises after every sample, so the GPU rests between samples and
                         holds burst clocks; the harness queues up to 100 samples per sync and
                         runs at sustained, power-limited clocks)
    matched vs harness   what the protocol choice costs: on a memory-bound point (intensity
                         below the ridge) the write flush leaves dirty lines in the L2 that the
                         timed kernel writes back to HBM inside its own window
"""

from __future__ import annotations

import math
from dataclasses import dataclass

# Within 5%: the spread two runs of one protocol may show on the small points (~2 us, where
# the CUDA events' ~0.5 us resolution alone is 25%, and 1-2% A/A on 10-50 us kernels).
MATCH_TOL = 0.05
# A compute-bound kernel's time scales with the SM clock, so 3% of clock is 3% of time.
CLOCK_TOL = 0.03


def ratio(num: float | None, den: float | None) -> float | None:
    """num / den, or None when either is missing, NaN or den is 0."""
    if num is None or den is None or _nan(num) or _nan(den) or den == 0:
        return None
    return num / den


def regime(intensity: float | None, ridge: float | None) -> str | None:
    """memory below the ridge (FLOP/byte where the HBM and tensor roofs meet), else compute."""
    if intensity is None or ridge is None or _nan(intensity) or _nan(ridge):
        return None
    return "memory" if intensity < ridge else "compute"


@dataclass(frozen=True)
class PointTimes:
    """Medians (ms) and median SM clocks (MHz) of one point; None where not measured."""

    harness_ms: float | None
    matched_ms: float | None
    nvbench_ms: float | None = None
    harness_clock_mhz: float | None = None
    matched_clock_mhz: float | None = None
    nvbench_clock_mhz: float | None = None
    intensity: float | None = None  # FLOP per byte of the problem's min_bytes
    ridge: float | None = None  # FLOP per byte of this GPU and dtype


def _nan(x) -> bool:
    return isinstance(x, float) and math.isnan(x)


def _pct(r: float) -> str:
    return f"{100 * (r - 1):+.0f}%"


def clocks_differ(a: float | None, b: float | None) -> bool:
    r = ratio(a, b)
    return r is not None and abs(r - 1) > CLOCK_TOL


def _clock_phrase(a: float, b: float, a_name: str, b_name: str) -> str:
    return f"sustained vs burst clocks: SM clock {a:.0f} MHz ({a_name}) vs {b:.0f} MHz ({b_name})"


def versus_nvbench(t: PointTimes) -> str | None:
    """The matched protocol against nvbench's cold mode; None without an nvbench median."""
    r = ratio(t.matched_ms, t.nvbench_ms)
    if r is None:
        return None
    if abs(r - 1) <= MATCH_TOL:
        return f"matched within {MATCH_TOL:.0%}"
    matched, nvbench = t.matched_clock_mhz, t.nvbench_clock_mhz
    if matched is not None and nvbench is not None and clocks_differ(matched, nvbench):
        return _clock_phrase(matched, nvbench, "matched", "nvbench")
    clocks = ""
    if t.matched_clock_mhz and t.nvbench_clock_mhz:
        clocks = f" at equal clocks ({t.matched_clock_mhz:.0f} vs {t.nvbench_clock_mhz:.0f} MHz)"
    return f"matched vs nvbench {_pct(r)}{clocks}: not explained by the flush or the clock"


def versus_default(t: PointTimes) -> str | None:
    """The matched protocol against the harness default; None while they agree."""
    r = ratio(t.matched_ms, t.harness_ms)
    if r is None or abs(r - 1) <= MATCH_TOL:
        return None
    where = regime(t.intensity, t.ridge)
    if where == "memory" and r > 1:
        return (
            f"flush by read vs write: memory-bound point (intensity {t.intensity:.0f} below the "
            f"ridge {t.ridge:.0f} FLOP/B), the write flush's dirty lines cost {_pct(r)}"
        )
    matched, harness = t.matched_clock_mhz, t.harness_clock_mhz
    if matched is not None and harness is not None and clocks_differ(matched, harness):
        return _clock_phrase(matched, harness, "matched", "harness")
    kind = f"{where}-bound" if where else "unclassified"
    return (
        f"matched vs harness default {_pct(r)} on a {kind} point: warm-up (1 call vs 300 ms) "
        "and flush size (1x L2 vs 2x LLC), not the clock"
    )


def explain(t: PointTimes) -> str:
    """Every systematic difference between the three timings, joined by '; '."""
    parts = [p for p in (versus_nvbench(t), versus_default(t)) if p]
    if parts:
        return "; ".join(parts)
    if t.nvbench_ms is None:
        return f"matched within {MATCH_TOL:.0%} of the harness default (no nvbench timing)"
    return f"matched within {MATCH_TOL:.0%}"
