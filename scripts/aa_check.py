"""A/A check: pairs of run folders (a1 b1 a2 b2 ...) -> per-point median ratio b/a, worst cases,
and the timer's acceptance criteria (issue 16): every point of 10 us or more within 2%, every
point within 5%, p90/p10 <= 1.10 on at least 95% of points (both runs' rows counted).

    python scripts/aa_check.py results/h200/timer_aa/aa-main-a results/h200/timer_aa/aa-main-b ...
"""

import sys

import pandas as pd

from harness import store


def pair(a: str, b: str) -> pd.DataFrame:
    ra, rb = store.read_rows(a), store.read_rows(b)
    m = ra.merge(rb, on="point_key", suffixes=("_a", "_b"))
    m = m[(m.status_a == "ok") & (m.status_b == "ok")].copy()
    m["ratio"] = m.latency_ms_median_b / m.latency_ms_median_a
    m["dev"] = (m.ratio - 1).abs()
    return m


def report(m: pd.DataFrame, label: str) -> None:
    long = m[m.latency_ms_median_a >= 0.010]
    spread = pd.concat([m.latency_p90_over_p10_a, m.latency_p90_over_p10_b])
    unstable = int(m.unstable_a.fillna(False).sum() + m.unstable_b.fillna(False).sum())
    print(
        f"{label}: {len(m)} points; median |b/a-1| {m.dev.median():.2%}, max {m.dev.max():.2%}; "
        f">=10us within 2%: {(long.dev <= 0.02).mean():.1%} of {len(long)}; "
        f"all within 5%: {(m.dev <= 0.05).mean():.1%}; "
        f"p90/p10<=1.10: {(spread <= 1.10).mean():.1%}; unstable rows {unstable}"
    )
    worst = m.sort_values("dev", ascending=False).head(4)
    for r in worst.itertuples():
        print(
            f"   {r.provider_a:14s} {r.problem_a:45s} a={r.latency_ms_median_a * 1e3:.1f}us "
            f"b={r.latency_ms_median_b * 1e3:.1f}us p90/p10 {r.latency_p90_over_p10_a:.2f}/"
            f"{r.latency_p90_over_p10_b:.2f} clk {r.sm_clock_mhz_a:.0f}/{r.sm_clock_mhz_b:.0f} MHz"
        )


def main(args: list[str]) -> None:
    pairs = [pair(a, b) for a, b in zip(args[0::2], args[1::2], strict=True)]
    for (a, b), m in zip(zip(args[0::2], args[1::2], strict=True), pairs, strict=True):
        report(m, f"{a} vs {b}")
    if len(pairs) > 1:
        report(pd.concat(pairs), "all pairs")


if __name__ == "__main__":
    main(sys.argv[1:])
