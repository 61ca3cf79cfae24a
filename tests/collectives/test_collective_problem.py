"""CollectiveProblem: nccl-tests' sizes and bus-bandwidth factors by hand, exact expected results."""

import dataclasses
import math

import pytest
import torch

from harness import store
from harness.device import get_device
from harness.measure.lockstep import merge_checks, worst_failure
from harness.problems import PROBLEM_TYPES, Check, CollectiveProblem
from harness.problems.collective import rank_values
from harness.providers import load_all
from harness.providers.collectives import _enough_gpus

CPU = torch.device("cpu")
MiB = 1 << 20


@pytest.mark.parametrize(
    ("collective", "n", "factor", "in_elems", "out_elems"),
    [
        ("all_reduce", 2, 1.0, MiB // 2, MiB // 2),
        ("all_reduce", 4, 1.5, MiB // 2, MiB // 2),
        ("all_reduce", 8, 1.75, MiB // 2, MiB // 2),
        ("all_gather", 4, 0.75, MiB // 8, MiB // 2),  # each rank gives S/n, holds S
        ("reduce_scatter", 4, 0.75, MiB // 2, MiB // 8),  # each rank gives S, holds S/n
        ("all_to_all", 8, 0.875, MiB // 2, MiB // 2),
    ],
)
def test_sizes_and_busbw_factor_by_hand(collective, n, factor, in_elems, out_elems):
    p = CollectiveProblem(collective, MiB, n, "bf16")
    p.validate()
    assert p.busbw_factor() == factor
    assert (p.in_elems, p.out_elems) == (in_elems, out_elems)
    assert p.min_bytes() == 2 * factor * MiB  # sends factor x S and receives as much
    assert p.flops() == 0


def test_derived_algbw_and_busbw():
    p = CollectiveProblem("all_reduce", 1 << 30, 8, "bf16")
    d = p.derived({"latency_ms_median": 2.0})
    assert d["gbps"] == pytest.approx((1 << 30) / 2e-3 / 1e9)  # algbw: S / time
    assert d["busbw_gbps"] == pytest.approx(d["gbps"] * 2 * 7 / 8)
    assert p.derived({"latency_ms_median": None}) == {}


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"collective": "broadcast"}, "collective: unknown 'broadcast'"),
        ({"world_size": 1}, "world_size: 1; allowed: 2..64"),
        ({"message_bytes": 1000, "world_size": 8}, "message_bytes: 1000 does not split"),
        ({"dtype": "fp8_e4m3"}, "dtype: unknown 'fp8_e4m3'"),
    ],
)
def test_validation_names_the_field(kwargs, match):
    base = {"collective": "all_reduce", "message_bytes": 4096, "world_size": 2, "dtype": "bf16"}
    with pytest.raises(ValueError, match=match):
        CollectiveProblem(**{**base, **kwargs}).validate()


def test_axes_are_store_columns_and_registered():
    assert PROBLEM_TYPES["collective"] is CollectiveProblem
    names = [f.name for f in dataclasses.fields(CollectiveProblem)]
    assert set(names) | {"busbw_gbps"} <= set(store.COLUMNS)
    assert {"nccl", "rccl", "gloo"} <= set(load_all().names("collective"))


def test_inputs_are_small_integers_seeded_per_rank():
    a = rank_values(0, 0, 0, 4096, torch.float32, CPU)
    assert torch.equal(a, rank_values(0, 0, 0, 4096, torch.float32, CPU))
    assert set(a.unique().tolist()) == set(range(-4, 5))
    assert not torch.equal(a, rank_values(0, 1, 0, 4096, torch.float32, CPU))  # other rank
    assert not torch.equal(a, rank_values(1, 0, 0, 4096, torch.float32, CPU))  # other seed
    assert torch.equal(a[100:300], rank_values(0, 0, 100, 200, torch.float32, CPU))  # slices


def _simulate(p: CollectiveProblem, xs: list[torch.Tensor]) -> list[torch.Tensor]:
    """What each rank holds after the collective, computed from every rank's input."""
    n, c = p.world_size, p.shard
    if p.collective == "all_reduce":
        return [sum(xs)] * n
    if p.collective == "all_gather":
        return [torch.cat(xs)] * n
    if p.collective == "reduce_scatter":
        return [sum(x[r * c : (r + 1) * c] for x in xs) for r in range(n)]
    return [torch.cat([x[r * c : (r + 1) * c] for x in xs]) for r in range(n)]


@pytest.mark.parametrize("collective", ["all_reduce", "all_gather", "reduce_scatter", "all_to_all"])
def test_reference_is_what_each_rank_must_hold(collective):
    p = CollectiveProblem(collective, 3 * 2 * 64, 3, "bf16")  # 3 ranks, 64 elements per share
    p.validate()
    inputs = [p.make_inputs(7, "randn", CPU, rank=r) for r in range(3)]
    expected = _simulate(p, [i["x"].float() for i in inputs])
    for r in range(3):
        ref = p.reference(inputs[r])
        assert torch.equal(ref, expected[r])
        assert p.check(ref.to(torch.bfloat16), ref).ok
        assert not p.check(inputs[r]["out"], ref).ok  # never written: NaN
    if collective in ("all_gather", "all_to_all"):  # blocks in the wrong order are wrong
        swapped = torch.cat([expected[0][p.shard :], expected[0][: p.shard]])
        check = p.check(swapped[: p.out_elems], p.reference(inputs[0]))
        assert not check.ok and "elements differ" in check.reason


def test_sums_of_64_ranks_are_exact_in_bf16():
    p = CollectiveProblem("all_reduce", 64 * 2 * 16, 64, "bf16")
    xs = [p.make_inputs(0, "randn", CPU, rank=r)["x"] for r in range(64)]
    acc = torch.zeros_like(xs[0])
    for x in xs:
        acc += x  # bf16 adds, in an arbitrary order
    assert p.check(acc, p.reference(p.make_inputs(0, "randn", CPU, rank=5))).ok


def test_rank_verdicts_merge_to_the_worst():
    ok = Check(rel_err=0.0, max_abs_err=0.0, tolerance=0.0, ok=True, reason=None)
    bad = Check(rel_err=0.5, max_abs_err=math.inf, tolerance=0.0, ok=False, reason="x")
    merged = merge_checks([ok, bad])
    assert not merged.ok and merged.reason == "rank 1: x"
    assert merged.rel_err == 0.5 and merged.max_abs_err == math.inf
    assert merge_checks([ok, ok]).ok
    assert worst_failure([None, ("skipped", "a"), ("error", "b")]) == ("error", "rank 2: b")
    assert worst_failure([None, None]) is None


def test_gpu_providers_need_one_gpu_per_rank():
    why = _enough_gpus(CollectiveProblem("all_reduce", 1 << 20, 64), get_device("cpu"))
    assert why == f"world_size 64 needs 64 GPUs; {torch.cuda.device_count()} visible"
