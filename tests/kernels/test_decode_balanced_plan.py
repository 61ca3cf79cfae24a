"""The Gluon decode's balanced runs (split_by "balanced"), without a GPU: the launcher's plan
(attention_decode_gluon.balanced_plan) against the kernel's schedule arithmetic
(_balanced_run and _segment in attention_decode_gluon_kernel.py), modelled here line for line.
Every (batch, KV head, M block) unit's tiles must be covered once, its partial slots must be
0, 1, ... with the last segment in the highest, and no slot may reach the plan's count, also
when sequences grew within capacity after the plan was made (lengths may change between
launches). The kernel itself runs against an fp32 reference in tests/gpu/test_decode_gluon_gpu.py."""

from __future__ import annotations

import itertools
import random

import pytest
import torch
from harness_kernels.triton.attention_decode_gluon import balanced_plan


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


def _segments(lens, units_b, m_blocks, block_n, ctas, per_min):
    """(pid, batch, unit in batch, first tile, tiles, slot, last) of every segment, as each CTA
    walks its run."""
    tiles = [max(_cdiv(n, block_n), 1) * units_b for n in lens]
    ends = list(itertools.accumulate(tiles))
    total = ends[-1]
    per = max(per_min, _cdiv(total, ctas))
    out = []
    for pid in range(ctas):
        x0, x1 = pid * per, min(pid * per + per, total)
        b = sum(e <= x0 for e in ends)
        base = max([e for e in ends if e <= x0], default=0)
        x = x0
        while x < x1:
            n_unit = max(_cdiv(lens[b], block_n), 1)
            unit = (x - base) // n_unit
            unit_lo = base + unit * n_unit
            seg_hi = min(x1, unit_lo + n_unit)
            out.append(
                (
                    pid,
                    b,
                    unit,
                    x - unit_lo,
                    seg_hi - x,
                    pid - unit_lo // per,
                    seg_hi == unit_lo + n_unit,
                )
            )
            step = seg_hi == base + units_b * n_unit
            x, b, base = seg_hi, b + step, seg_hi if step else base
    return out


def _check(lens, units_b, block_n, plan):
    ctas, per_min, slots = plan
    segs = _segments(lens, units_b, 1, block_n, ctas, per_min)
    by_unit: dict[tuple[int, int], list] = {}
    for seg in segs:
        by_unit.setdefault((seg[1], seg[2]), []).append(seg)
    assert sorted(by_unit) == [(b, u) for b in range(len(lens)) for u in range(units_b)]
    for (b, _), pieces in by_unit.items():
        pieces.sort(key=lambda s: s[3])
        n_unit = max(_cdiv(lens[b], block_n), 1)
        covered = [t for s in pieces for t in range(s[3], s[3] + s[4])]
        assert covered == list(range(n_unit)), (b, pieces)  # every tile once, in order
        assert [s[5] for s in pieces] == list(range(len(pieces)))  # slots 0, 1, ...
        assert [s[6] for s in pieces] == [False] * (len(pieces) - 1) + [True]
        assert len(pieces) <= slots, (lens, plan, pieces)
    assert len({s[0] for s in segs}) <= ctas


@pytest.mark.parametrize("seed", range(40))
def test_runs_cover_every_tile_once_within_the_planned_slots(seed):
    rng = random.Random(seed)
    batch = rng.choice([1, 2, 3, 16, 64])
    units_b = rng.choice([1, 2, 4, 8, 16])
    block_n = rng.choice([64, 128])
    sms = rng.choice([8, 132])
    capacity = rng.choice([256, 4096, 16384])
    lens = [rng.randint(1, capacity) for _ in range(batch)]
    if rng.random() < 0.3:
        lens = [capacity] * batch
    plan = balanced_plan(torch.tensor(lens), units_b, block_n, capacity, sms)
    _check(lens, units_b, block_n, plan)
    # sequences grown (or shrunk) within capacity after the plan: still every tile, no slot past
    grown = [min(capacity, max(1, n + rng.randint(-n // 2, capacity))) for n in lens]
    _check(grown, units_b, block_n, plan)


def test_plan_of_a_ragged_serving_batch():
    # batch 16, 4 KV heads, KV 4k spread down to half (the serving grid's ragged batch), 132 SMs
    lens = [4096 - 128 * i for i in range(16)]
    ctas, per_min, slots = balanced_plan(torch.tensor(lens), 4, 128, 4096, 132)
    total = 4 * sum(_cdiv(n, 128) for n in lens)
    assert ctas == 132 and per_min == _cdiv(total, 132)
    # a 32-tile unit spans at most floor(31 / per) + 2 runs
    assert slots == 31 // per_min + 2 <= 4
    # one length, more units than SMs: every unit within one run or across two
    assert balanced_plan(torch.tensor([4096] * 64), 8, 128, 4096, 132)[2] == 2
