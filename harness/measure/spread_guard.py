"""The spread guard: a point's samples must agree before their median is reported.

A median of two modes describes neither (on the H200 a 1x4096x4096 GEMM gave p10 15.3, median
27.9, p90 38.6 us: some samples held host launch latency, some did not). So every row carries
p90/p10, and a point that is too spread, or whose stream hold expired in any sample, is timed
again; if it stays so, its row says `unstable` with the reason, and reports show it.
"""

from __future__ import annotations

import numpy as np

from harness.measure.protocol import Protocol
from harness.measure.stats import Samples


def p90_over_p10(samples_ms: Samples) -> float:
    """p90 / p10 of the samples (1.0 for a single sample; inf when p10 is 0)."""
    x = np.asarray(samples_ms, dtype=np.float64)
    p10, p90 = np.percentile(x, [10, 90])
    return float(p90 / p10) if p10 > 0 else float("inf")


def judge(samples_ms: Samples, hold_expired: int, p: Protocol) -> str | None:
    """Why these samples must not be summarised by one median, or None when they may."""
    reasons = []
    if hold_expired:
        reasons.append(
            f"stream hold expired in {hold_expired}/{len(samples_ms)} samples "
            "(host latency may be inside them)"
        )
    x = np.asarray(samples_ms, dtype=np.float64)
    p10, p90 = np.percentile(x, [10, 90])
    ratio = p90_over_p10(x)
    if ratio > p.max_spread and (p90 - p10) * 1e3 > p.spread_floor_us:
        reasons.append(
            f"p90/p10 {ratio:.2f} > {p.max_spread:.2f} (p10 {p10 * 1e3:.1f} us, "
            f"p90 {p90 * 1e3:.1f} us)"
        )
    return "; ".join(reasons) or None
