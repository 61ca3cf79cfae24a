import math

import numpy as np
import pytest

from harness.measure.stats import (
    bootstrap_median_ratio,
    bootstrap_medians,
    geomean,
    rse_of_median,
    summarize,
)


def test_summary_fields():
    s = summarize([1.0, 2.0, 3.0, 4.0, 100.0])
    assert s.median == 3.0 and s.min == 1.0 and s.max == 100.0 and s.n == 5
    assert s.p10 == pytest.approx(1.4) and s.p90 == pytest.approx(61.6)


def test_rse_falls_with_more_samples_and_is_inf_for_few():
    rng = np.random.default_rng(0)
    x = 1.0 + 0.05 * rng.standard_normal(4000)
    assert rse_of_median(x[:100]) > rse_of_median(x)
    assert rse_of_median(x) == pytest.approx(
        math.sqrt(math.pi / 2) * 0.05 / math.sqrt(4000), rel=0.15
    )
    assert rse_of_median([1.0, 2.0]) == math.inf


def test_bootstrap_ratio_brackets_a_known_shift():
    rng = np.random.default_rng(1)
    a = 1.0 + 0.01 * rng.standard_normal(200)
    b = 1.1 * (1.0 + 0.01 * rng.standard_normal(200))
    lo, mid, hi = bootstrap_median_ratio(a, b)
    assert lo < 1.1 < hi and mid == pytest.approx(1.1, rel=0.01) and lo > 1.05


@pytest.mark.parametrize(
    "x", [[3.0, 1.0, 2.0], [4.0, 1.0, 3.0, 2.0], [5.0, 1.0, 2.0, 2.0, 9.0, 7.0]]
)
def test_bootstrap_medians_follow_the_resampling_distribution(x):
    """The order-statistic draw gives each resample median the probability that enumerating
    every resample with replacement (n^n of them, equally likely) gives it."""
    n = len(x)
    grid = np.array(np.meshgrid(*[x] * n)).reshape(n, -1).T  # every resample, equally likely
    values, counts = np.unique(np.median(grid, axis=1), return_counts=True)
    exact = dict(zip(values.tolist(), (counts / counts.sum()).tolist(), strict=True))
    draws = bootstrap_medians(x, 200_000, np.random.default_rng(0))
    seen, seen_counts = np.unique(draws, return_counts=True)
    assert set(seen.tolist()) <= set(exact)
    for value, count in zip(seen.tolist(), seen_counts.tolist(), strict=True):
        assert count / draws.size == pytest.approx(exact[value], abs=4e-3), value


def test_geomean_ignores_missing():
    assert geomean([2.0, 8.0, float("nan"), None]) == pytest.approx(4.0)
