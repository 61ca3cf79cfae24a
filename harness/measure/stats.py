"""All statistics the harness reports: medians, percentiles, noise of the median, bootstrap.

A bare mean is never reported: GPU timings are right-skewed (clock ramps, interference), so the
median with percentiles is the summary, and its noise decides when sampling stops.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

# SE(median) ~= sqrt(pi/2) * sigma / sqrt(n) for a normal sample; sigma estimated robustly
# from the interquartile range (IQR / 1.349), so a few outliers do not stall the stop rule.
_MEDIAN_SE_FACTOR = math.sqrt(math.pi / 2)
_IQR_TO_SIGMA = 1.349

# Milliseconds (or any values) as a list or a 1-D array: every function reads them with asarray.
Samples = Sequence[float] | np.ndarray


@dataclass(frozen=True)
class Summary:
    """Summary of one point's samples (milliseconds)."""

    n: int
    median: float
    mean: float
    min: float
    max: float
    p10: float
    p90: float
    std: float
    rse_median: float  # standard error of the median / median


def rse_of_median(samples: Samples) -> float:
    """Relative standard error of the median; inf with fewer than 3 samples."""
    x = np.asarray(samples, dtype=np.float64)
    if x.size < 3:
        return math.inf
    med = float(np.median(x))
    if med <= 0:
        return math.inf
    q75, q25 = np.percentile(x, [75, 25])
    sigma = (q75 - q25) / _IQR_TO_SIGMA
    return _MEDIAN_SE_FACTOR * sigma / math.sqrt(x.size) / med


def summarize(samples: Samples) -> Summary:
    x = np.asarray(samples, dtype=np.float64)
    if x.size == 0:
        raise ValueError("no samples")
    p10, p90 = np.percentile(x, [10, 90])
    return Summary(
        n=int(x.size),
        median=float(np.median(x)),
        mean=float(x.mean()),
        min=float(x.min()),
        max=float(x.max()),
        p10=float(p10),
        p90=float(p90),
        std=float(x.std(ddof=1)) if x.size > 1 else 0.0,
        rse_median=rse_of_median(x),
    )


def bootstrap_medians(samples: Samples, n_boot: int, rng: np.random.Generator) -> np.ndarray:
    """n_boot medians of resamples (with replacement, of the sample's size) of samples, drawn
    from their exact distribution in O(n log n + n_boot) rather than by building the resamples
    (O(n_boot * n): 2,000 resamples of a few thousand samples per point made `harness crossgpu`
    and the reports' ratio CIs spend most of their time in np.median).

    A resample picks x_sorted[floor(n * U_i)] for n uniform U_i, and floor(n * u) is monotone, so
    its k-th smallest value is x_sorted[floor(n * U_(k))], U_(k) the k-th order statistic of n
    uniforms: U_(k) ~ Beta(k, n - k + 1), and U_(k+1) = U_(k) + (1 - U_(k)) * Beta(1, n - k)
    (the least of the n - k uniforms above it). The median needs U_(k) (n odd, k = (n + 1) / 2)
    or U_(k) and U_(k+1) (n even, k = n / 2)."""
    x = np.sort(np.asarray(samples, dtype=np.float64))
    n = x.size
    k = (n + 1) // 2
    u_k = rng.beta(k, n - k + 1, size=n_boot)
    lower = x[np.minimum((n * u_k).astype(np.int64), n - 1)]
    if n % 2:
        return lower
    u_next = u_k + (1.0 - u_k) * rng.beta(1, n - k, size=n_boot)
    return (lower + x[np.minimum((n * u_next).astype(np.int64), n - 1)]) / 2


def bootstrap_median_ratio(
    a: Samples, b: Samples, n_boot: int = 2000, ci: float = 0.95, seed: int = 0
) -> tuple[float, float, float]:
    """median(b) / median(a) with a percentile-bootstrap confidence interval (lo, ratio, hi)."""
    xa, xb = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    rng = np.random.default_rng(seed)
    ratios = bootstrap_medians(xb, n_boot, rng) / bootstrap_medians(xa, n_boot, rng)
    alpha = (1 - ci) / 2
    lo, hi = np.quantile(ratios, [alpha, 1 - alpha])
    return float(lo), float(np.median(xb) / np.median(xa)), float(hi)


def geomean(values: Samples) -> float:
    x = np.asarray([v for v in values if v and v > 0 and math.isfinite(v)], dtype=np.float64)
    return float(np.exp(np.log(x).mean())) if x.size else math.nan
