"""The Gluon decode's longest-first order (attention_decode_gluon.item_tiles and longest_first),
without a GPU: the order must be a permutation of the work items (the kernel runs each slot's
item, so a repeat or a gap would compute a unit twice or never), give every CTA the slots the
round-robin grid gives it, and balance the tiles per CTA where item order does not. The kernel
itself runs ordered against an fp32 reference in tests/gpu/test_decode_gluon_gpu.py."""

from __future__ import annotations

import random

import pytest
from harness_kernels.triton.attention_decode_gluon import item_tiles, longest_first

from harness.problems import AttentionProblem


def _serving_lens(batch: int, kv_len: int) -> list[int]:
    """The serving grid's ragged lengths (AttentionProblem.seq_lens): kv_len down to half."""
    problem = AttentionProblem(
        batch=batch,
        q_heads=32,
        kv_heads=4,
        q_len=1,
        kv_len=kv_len,
        head_dim=128,
        dtype="bf16",
        causal=True,
        kv_layout="paged",
        page_size=16,
        ragged=True,
    )
    return problem.seq_lens()


def _most_loaded(tiles: list[int], order, ctas: int) -> float:
    """The most loaded CTA's tiles over the mean, CTA c running slots c, c + ctas, ..."""
    load = [0] * ctas
    for slot, item in enumerate(order):
        load[slot % ctas] += tiles[item]
    return max(load) / (sum(tiles) / ctas)


def test_item_tiles_cut_as_the_kernel_cuts_them() -> None:
    # two sequences (300 and 64 keys), 2 KV heads, 64-key tiles: items split-major, then batch,
    # then head. Split by length in 2: 300 -> 5 tiles as 3 + 2, 64 -> 1 tile as 1 + 0.
    assert item_tiles([300, 64], 2, 2, 64, 300, False) == [3, 3, 1, 1, 2, 2, 0, 0]
    # split by the longest's share (3 tiles): the short one's second split is empty too
    assert item_tiles([300, 64], 2, 2, 64, 300, True) == [3, 3, 1, 1, 2, 2, 0, 0]
    assert item_tiles([300, 200], 1, 2, 64, 300, True) == [3, 3, 2, 1]
    assert item_tiles([300, 200], 1, 2, 64, 300, False) == [3, 2, 2, 2]
    # one split: every sequence whole
    assert item_tiles([129, 128, 1], 1, 1, 64, 129, False) == [3, 2, 1]


def _random_tiles(seed: int, n: int, low: int, high: int) -> list[int]:
    rng = random.Random(seed)
    return [rng.randint(low, high) for _ in range(n)]


@pytest.mark.parametrize(
    "tiles, ctas",
    [
        ([5, 1, 4, 2, 3], 2),
        ([7, 7, 1, 1, 1, 1, 1], 3),
        (_random_tiles(1, 256, 0, 40), 64),  # empty items too (a split past a short sequence)
        (_random_tiles(2, 256, 1, 32), 132),  # 132 SMs, as on an H100 or H200
        (_random_tiles(3, 517, 1, 32), 132),  # a last round of 121 slots
    ],
)
def test_longest_first_is_the_grids_slots_in_another_order(tiles, ctas) -> None:
    order = longest_first(tiles, ctas)
    assert order is not None
    assert sorted(order) == list(range(len(tiles)))  # each item once
    assert _most_loaded(tiles, order, ctas) <= _most_loaded(tiles, range(len(tiles)), ctas)
    # the greedy rule's bound: no CTA above the mean plus the largest item
    load = [0] * ctas
    for slot, item in enumerate(order):
        load[slot % ctas] += tiles[item]
    assert max(load) <= sum(tiles) / ctas + max(tiles)


def test_longest_first_balances_a_serving_batch() -> None:
    """Batch 64 of KV 2k-4k, 4 KV heads, 128-key tiles: 256 items on 132 CTAs. In item order
    the most loaded CTA runs 1.26x the mean tiles; longest first 1.03x (the docstring's)."""
    tiles = item_tiles(_serving_lens(64, 4096), 4, 1, 128, 4096, False)
    order = longest_first(tiles, 132)
    assert order is not None
    assert _most_loaded(tiles, range(len(tiles)), 132) == pytest.approx(1.26, abs=0.01)
    assert _most_loaded(tiles, order, 132) == pytest.approx(1.03, abs=0.01)
    # the heaviest items are each CTA's first (the slots below 132)
    first = sorted(tiles[i] for i in order[:132])
    rest = sorted(tiles[i] for i in order[132:])
    assert first[0] >= rest[-1]


def test_no_order_where_it_cannot_matter() -> None:
    assert longest_first([3, 1, 2], 3) is None  # one item per CTA at most
    assert longest_first([3, 1, 2], 5) is None
    assert longest_first([4] * 300, 132) is None  # all of one size: item order is as good
    # batch 16 x 8 KV heads: 128 items on 132 SMs
    assert longest_first(item_tiles(_serving_lens(16, 4096), 8, 1, 128, 4096, False), 132) is None
