"""How evenly each work order of a causal FMHA loads the SMs, in a model of the KV tiles per CTA.

    python3 scripts/causal_order_model.py [--heads 32] [--sms 132] [--rows 128] [--lengths ...]

A causal query tile of `rows` rows at tile index m (from the top) reads m + 1 tiles of `rows`
keys, so its cost is m + 1; nothing else (Q load, epilogue, launch) is counted. One CTA per SM.
Prints the share of a perfect balance (the mean SM's load over the most loaded SM's) of:
  head by head     one CTA per tile, a head's tiles longest first, then the next head's, handed
                   out in order to whichever SM frees first (the hardware's dispatch);
  longest first    the same, every head's longest tile first, then the next longest;
  strided          persistent CTAs, CTA i taking items i, i + sms, ... of the longest-first list;
  snake            persistent CTAs taking that list in rounds of one item each, the rounds
                   alternating direction and the last one reversed within its width, as
                   kernels/triton/attention_gluon_kernel._tile_of does.
Session 101 used it to read why FA4's sm90 forward (longest first across heads) led the Gluon
FMHA at 1-4k tokens (docs/thesis_study.md).
"""

from __future__ import annotations

import argparse
import heapq
from collections.abc import Sequence


def tile_costs(seq: int, heads: int, rows: int, longest_first: bool) -> list[int]:
    """Each CTA's KV tiles in launch order."""
    n_qt = -(-seq // rows)
    if longest_first:
        return [n_qt - t // heads for t in range(n_qt * heads)]
    return [n_qt - t % n_qt for t in range(n_qt * heads)]


def dispatched(costs: Sequence[float], sms: int) -> float:
    """Share of a perfect balance when each CTA goes, in order, to the SM that frees first."""
    free = [0.0] * sms
    for c in costs:
        heapq.heappush(free, heapq.heappop(free) + c)
    return sum(costs) / sms / max(free)


def rounds(costs: Sequence[float], sms: int, snake: bool) -> float:
    """Share of a perfect balance for persistent CTAs taking one item per round (strided, or in
    snake rounds with the last one reversed within its width)."""
    grid = min(sms, len(costs))
    load = [0.0] * grid
    for t, c in enumerate(costs):
        rnd, j = divmod(t, grid)
        width = min(grid, len(costs) - rnd * grid)
        load[width - 1 - j if snake and rnd % 2 else j] += c
    return sum(costs) / grid / max(load)


def shares(seq: int, heads: int, sms: int, rows: int) -> dict[str, float]:
    by_head = tile_costs(seq, heads, rows, longest_first=False)
    longest = tile_costs(seq, heads, rows, longest_first=True)
    return {
        "head by head": dispatched(by_head, sms),
        "longest first": dispatched(longest, sms),
        "strided": rounds(longest, sms, snake=False),
        "snake": rounds(longest, sms, snake=True),
    }


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--heads", type=int, default=32, help="batch x query heads")
    ap.add_argument("--sms", type=int, default=132)
    ap.add_argument(
        "--rows", type=int, default=128, help="query rows per tile (= keys per KV tile)"
    )
    ap.add_argument("--lengths", type=int, nargs="+", default=[1024, 2048, 4096, 8192, 16384])
    a = ap.parse_args(argv)
    print(f"share of a perfect balance, {a.heads} heads, {a.sms} SMs, {a.rows}-row tiles")
    print(f"{'tokens':>7} " + " ".join(f"{k:>13}" for k in shares(a.rows, 1, 1, a.rows)))
    for seq in a.lengths:
        row = shares(seq, a.heads, a.sms, a.rows)
        print(f"{seq:>7} " + " ".join(f"{v:>13.3f}" for v in row.values()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
