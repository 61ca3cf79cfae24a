"""The own Triton GEMM's stream-K and split-K: the plans (work shared evenly, parts counted),
where they are offered, and their launches (correct, deterministic, counters reset) under the
interpreter."""

from __future__ import annotations

import os

os.environ.setdefault("TRITON_INTERPRET", "1")

from dataclasses import replace  # noqa: E402

import pytest  # noqa: E402
import torch  # noqa: E402
from harness_kernels.triton.gemm import (  # noqa: E402
    build_launch,
)
from harness_kernels.triton.gemm_candidates import (  # noqa: E402
    MAX_CANDIDATES,
    REDUCE_APART_CANDIDATES,
    STREAM_K_CANDIDATES,
    candidate_configs,
)
from harness_kernels.triton.gemm_configs import GemmConfig  # noqa: E402
from harness_kernels.triton.gemm_cost_model import estimate_seconds  # noqa: E402
from harness_kernels.triton.gemm_operands import check_operands  # noqa: E402
from harness_kernels.triton.gemm_split import (  # noqa: E402
    REDUCE_MIN_ELEMS,
    REDUCE_REGS,
    offers_stream_k,
    splitk_reduce_rows,
    stream_k_plan,
)
from harness_kernels.triton.gemm_target import kernel_target  # noqa: E402
from triton_gemm_cases import (  # noqa: E402
    FP8,
    H200,
    TOL,
    _operands,
    _reference,
    _rel_err,
    _run,
    needs_interpreter,
)

# ---- stream-K -----------------------------------------------------------------------------

pytestmark = pytest.mark.usefixtures("fresh_gemm_tune")


def _owners(tiles: int, k_tiles: int, programs: int) -> dict[int, list[int]]:
    """Brute force: which programs each tile's K iterations fall to (ranges p*total//P)."""
    total = tiles * k_tiles
    owners: dict[int, list[int]] = {}
    for p in range(programs):
        for it in range(p * total // programs, (p + 1) * total // programs):
            owners.setdefault(it // k_tiles, [])
            if p not in owners[it // k_tiles]:
                owners[it // k_tiles].append(p)
    return owners


@pytest.mark.parametrize(
    "tiles,k_tiles,programs",
    [
        (80, 128, 132),
        (96, 64, 132),
        (160, 128, 132),
        (896, 64, 132),
        (6, 5, 4),
        (1, 4, 4),
        (2048, 128, 132),
        (7, 3, 264),
        (264, 64, 264),
    ],
)
def test_stream_k_plan_shares_work_evenly_and_counts_parts(tiles, k_tiles, programs):
    plan = stream_k_plan(tiles, k_tiles, programs)
    full, rest = divmod(tiles, programs)
    if rest == 0:  # whole waves: nothing to share
        assert plan.sk_tiles == 0 and plan.dp_tiles == tiles
        return
    assert plan.dp_tiles % plan.num_programs == 0 and plan.dp_tiles + plan.sk_tiles == tiles
    assert plan.sk_tiles == (tiles if full == 0 else rest + programs)
    assert plan.num_programs <= programs and plan.num_programs <= max(
        plan.sk_tiles * k_tiles, programs if full else 0
    )
    owners = _owners(plan.sk_tiles, k_tiles, plan.num_programs)
    assert sorted(owners) == list(range(plan.sk_tiles))  # every shared tile is covered
    assert plan.max_parts == max(len(o) for o in owners.values())
    assert plan.shared_tiles == sum(len(o) > 1 for o in owners.values())
    shares = [
        (p + 1) * plan.sk_tiles * k_tiles // plan.num_programs
        - p * plan.sk_tiles * k_tiles // plan.num_programs
        for p in range(plan.num_programs)
    ]
    assert max(shares) - min(shares) <= 1  # no SM waits on a tail


def test_stream_k_is_offered_only_for_partial_waves():
    big = GemmConfig(128, 256, 64, num_warps=8)
    assert offers_stream_k(big, 256, 10240, 8192, H200)  # 80 tiles: 61% of a wave
    assert offers_stream_k(big, 512, 6144, 4096, H200)  # 96 tiles: 73%
    assert not offers_stream_k(big, 4224, 8192, 8192, H200)  # 33 x 32 = 8 whole waves
    assert not offers_stream_k(big, 2048, 4096, 4096, H200)  # 16 x 16 = 256 of 2 x 132: 97%
    assert not offers_stream_k(replace(big, split_k=2), 256, 10240, 8192, H200)
    assert not offers_stream_k(replace(big, persistent=False), 256, 10240, 8192, H200)


def test_cost_model_prefers_stream_k_on_a_partial_wave():
    est = lambda cfg, m, n, k: estimate_seconds(cfg, m, n, k, 2, 2, H200)
    big = GemmConfig(128, 256, 64, num_warps=8, num_stages=3)
    sk = replace(big, stream_k=True)
    assert est(sk, 256, 10240, 8192) < 0.8 * est(big, 256, 10240, 8192)  # 80 tiles
    assert est(sk, 256, 10240, 8192) < est(replace(big, split_k=3), 256, 10240, 8192)
    assert est(sk, 4224, 8192, 8192) > est(big, 4224, 8192, 8192)  # 33 x 32: whole waves


def test_mid_m_list_adds_stream_k_after_the_measured_choices():
    cands = candidate_configs("full", 256, 10240, 8192, 2, 2, H200)
    plain = [c for c in cands if not (c.stream_k or c.reduce_apart)]
    streamed = [c for c in cands if c.stream_k]
    apart = [c for c in cands if c.reduce_apart]
    # the ride-alongs last: stream-K, then the split-K twins summed by a second launch
    assert 1 <= len(streamed) <= STREAM_K_CANDIDATES and len(apart) <= REDUCE_APART_CANDIDATES
    assert cands[len(plain) :] == streamed + apart
    assert not (cands[0].stream_k or cands[0].reduce_apart)  # the untuned default stays
    assert len(plain) <= MAX_CANDIDATES
    assert all(c.split_k == 1 and c.persistent for c in streamed)
    assert all(c.split_k > 1 and not c.stream_k for c in apart)


def test_reduce_apart_twins_are_offered_where_the_one_launch_sum_is_long():
    """Llama-3.1-405B's fused QKV at M 256 (N 2304, K 16384; own 0.759x cuBLAS in session 81):
    the 128x256 tile split 7 ways (126 units), whose last unit read ~770 KB of partials alone,
    is offered with its partials summed by a second launch, and the model prices that below the
    one-launch twin (session 82's ncu: 47.7 us one launch; cuBLAS 29.3 + a 6.7 us reduce)."""
    m, n, k = 256, 2304, 16384
    cands = candidate_configs("full", m, n, k, 2, 2, H200)
    apart = [c for c in cands if c.reduce_apart]
    wide = [c for c in apart if (c.block_m, c.block_n, c.split_k) == (128, 256, 7)]
    assert wide, apart
    one_launch = replace(wide[0], reduce_apart=False)
    assert estimate_seconds(wide[0], m, n, k, 2, 2, H200) < estimate_seconds(
        one_launch, m, n, k, 2, 2, H200
    )
    # the untuned default is not a ride-along
    assert not cands[0].reduce_apart
    # where the model has them slower than a one-launch config they are not timed (session 82:
    # they took 2-46% longer at all 23 such H200 shapes)
    assert not any(c.reduce_apart for c in candidate_configs("full", 256, 10240, 8192, 2, 2, H200))


@needs_interpreter
@pytest.mark.parametrize(
    "m,n,k,pps",
    [(40, 64, 72, 1), (100, 96, 200, 1), (16, 32, 64, 1), (70, 160, 40, 2), (33, 64, 1000, 1)],
)
@pytest.mark.parametrize("tma", [False, True], ids=["ptr", "tma"])
def test_stream_k_is_correct_deterministic_and_resets_counters(m, n, k, pps, tma):
    # Four pretend SMs: shapes with less than a wave (all tiles shared), a wave and a tail
    # (dp tiles + shared), one tile over every program, two programs per SM.
    a, b, _ = _operands(m, n, k, torch.float16, b_col=True)
    p = check_operands(a, b, None, None, None, "tf32", kernel_target(None))
    cfg = GemmConfig(16, 32, 16, stream_k=True, tma=tma, group_m=2, programs_per_sm=pps)
    launch = build_launch(p, cfg, kernel_target(None))
    first = _run(launch).clone()
    assert _rel_err(first, _reference(a, b, {})) < TOL[torch.float16]
    assert launch.config["sk_tiles"] > 0 and not launch.config["tma_store"]
    counters = launch._args[6]
    assert int(counters.abs().sum()) == 0
    assert torch.equal(_run(launch), first)


@needs_interpreter
def test_stream_k_with_fp8_scales_and_bf16_row_major_b():
    for dtype in (FP8, torch.bfloat16):
        a, b, scales = _operands(40, 64, 80, dtype, b_col=False)
        p = check_operands(
            a, b, None, scales.get("a_scale"), scales.get("b_scale"), "tf32", kernel_target(None)
        )
        launch = build_launch(
            p, GemmConfig(16, 32, 16 if dtype != FP8 else 32, stream_k=True), kernel_target(None)
        )
        assert _rel_err(_run(launch), _reference(a, b, scales)) < TOL[dtype]


def test_stream_k_needs_a_persistent_split_1_config():
    a, b, _ = _operands(8, 32, 32, torch.float16, b_col=True)
    p = check_operands(a, b, None, None, None, "tf32", kernel_target(None))
    with pytest.raises(ValueError, match="stream_k needs"):
        build_launch(p, GemmConfig(16, 32, 16, stream_k=True, split_k=2), kernel_target(None))


@pytest.mark.parametrize("bm", [16, 32, 64, 128, 256])
@pytest.mark.parametrize("bn", [32, 64, 128, 256])
@pytest.mark.parametrize("split", [2, 3, 4, 8, 16])
@pytest.mark.parametrize("warps", [4, 8])
def test_splitk_reduce_chunk_is_a_power_of_two_inside_the_register_budget(bm, bn, split, warps):
    rows = splitk_reduce_rows(bm, bn, split, warps)
    assert rows & (rows - 1) == 0 and 1 <= rows <= bm
    in_flight = rows * bn * split // (32 * warps)  # fp32 loads per thread for one chunk
    assert in_flight <= REDUCE_REGS or rows * bn <= REDUCE_MIN_ELEMS or rows == 1
    budget = max(REDUCE_REGS * 32 * warps // split, REDUCE_MIN_ELEMS)
    assert rows == bm or rows == 1 or 2 * rows * bn > budget  # the widest chunk that fits


def test_splitk_reduce_chunks_widen_for_few_splits():
    # 128x256 on 8 warps: the old fixed 2048-element chunk walked 16 chunks at any split.
    assert [128 // splitk_reduce_rows(128, 256, s, 8) for s in (2, 3, 4, 8)] == [4, 8, 8, 16]


@needs_interpreter
@pytest.mark.parametrize("bm,bn,split", [(32, 144, 3), (64, 48, 2), (128, 16, 4)])
def test_split_sum_reads_every_part_of_every_tile_in_grouped_order(bm, bn, split):
    """gemm_reduce_kernel's second launch on its own, as the Gluon GEMM feeds it: tiles of any
    width (144: columns padded to 256 and masked), several row chunks per tile, ragged M and N,
    tile ids in the grouped order, the scales applied once. A Python model of the workspace
    ([tiles, split, BM, BN]) gives the expected C."""
    from harness_kernels.triton.gemm_reduce_kernel import splitk_sum, sum_rows

    m, n, group_m = 3 * bm - 5, 2 * bn - 3, 2
    tiles_m, tiles_n = -(-m // bm), -(-n // bn)
    tiles = tiles_m * tiles_n
    ws = torch.randn(tiles, split, bm, bn)
    out = torch.full((m, n), float("nan"), dtype=torch.bfloat16)
    scales = torch.tensor(0.5), torch.tensor([1.5])
    summed = splitk_sum(ws.flatten(), out, *scales, tiles, bm, bn, group_m, split)
    assert summed.grid[0] == tiles * (bm // sum_rows(bm, bn)) > tiles  # several chunks a tile
    summed()
    expect = torch.empty(tiles_m * bm, tiles_n * bn)
    for t in range(tiles):  # gemm_kernel._tile_coords, in Python
        per_group = group_m * tiles_n
        first_m = (t // per_group) * group_m
        rows_in_group = min(tiles_m - first_m, group_m)
        pid_m = first_m + (t % per_group) % rows_in_group
        pid_n = (t % per_group) // rows_in_group
        part_sum = ws[t, 0].clone()
        for s in range(1, split):  # in split order, as the kernel adds them
            part_sum += ws[t, s]
        expect[pid_m * bm : (pid_m + 1) * bm, pid_n * bn : (pid_n + 1) * bn] = part_sum
    expect = (expect[:m, :n] * 0.75).to(torch.bfloat16)
    torch.testing.assert_close(out, expect, rtol=1e-2, atol=1e-2)
