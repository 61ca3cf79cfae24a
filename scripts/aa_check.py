"""A/A check: pairs of run folders (a1 b1 a2 b2 ...) -> per-point median ratio b/a, worst cases."""

import sys

from harness import store

args = sys.argv[1:]
for a, b in zip(args[0::2], args[1::2], strict=True):
    ra, rb = store.read_rows(a), store.read_rows(b)
    m = ra.merge(rb, on="point_key", suffixes=("_a", "_b"))
    m = m[(m.status_a == "ok") & (m.status_b == "ok")]
    m["ratio"] = m.latency_ms_median_b / m.latency_ms_median_a
    dev = (m.ratio - 1).abs()
    print(f"{a} vs {b}: {len(m)} points, median |b/a-1| = {dev.median():.2%}, max = {dev.max():.2%}, "
          f"within 2%: {(dev <= 0.02).mean():.0%}")
    worst = m.assign(dev=dev).sort_values("dev", ascending=False).head(4)
    for r in worst.itertuples():
        print(f"   {r.provider_a:14s} {r.problem_a:45s} a={r.latency_ms_median_a:.4g} b={r.latency_ms_median_b:.4g} "
              f"clk {r.sm_clock_mhz_a:.0f}/{r.sm_clock_mhz_b:.0f} MHz  {r.throttle_reasons_a}/{r.throttle_reasons_b}")
