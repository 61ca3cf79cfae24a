"""The decoder layer's memory-bound ops: problems (bytes, references, validation) and every
provider checked against the fp32 reference on the CPU (own Triton under the interpreter)."""

import math

import pytest
import torch

from harness.device import DeviceInfo
from harness.problems import PROBLEM_TYPES
from harness.problems.layer_ops import (
    RMS_EPS,
    AddRmsNormProblem,
    KvAppendProblem,
    RmsNormProblem,
    RopeProblem,
    SiluMulProblem,
    gather_slots,
)
from harness.providers import load_all
from harness.providers.registry import Unsupported

CPU = DeviceInfo("cpu", 0, "cpu", "cpu", None, "x86_64", None, 2, None, None, None, None)
DEV = torch.device("cpu")

SMALL = [
    RmsNormProblem(3, 200),
    AddRmsNormProblem(5, 256),
    SiluMulProblem(2, 300),
    RopeProblem(3, 4, 2, 64),
    KvAppendProblem(2, 2, 20, 1, 64, 16),
    KvAppendProblem(3, 2, 15, 3, 64, 16),  # chunked: new tokens cross a page boundary
]


def _run(provider: str, problem, seed: int = 0):
    inputs = problem.make_inputs(seed, "randn", DEV)
    prepared = load_all().get(problem.op, provider).prepare(problem, inputs, CPU)
    out = prepared.output(prepared.run())
    return out, problem.reference(inputs)


def test_layer_ops_are_problem_types():
    assert {"rmsnorm", "add_rmsnorm", "silu_mul", "rope", "kv_append"} <= set(PROBLEM_TYPES)


@pytest.mark.parametrize("dtype", ["bf16", "fp32"])
@pytest.mark.parametrize("provider", ["own-triton", "torch-eager"])
@pytest.mark.parametrize("problem", SMALL, ids=lambda p: p.label())
def test_provider_passes_the_fp32_check(problem, provider, dtype):
    p = type(problem)(**{**problem.axes(), "dtype": dtype})
    p.validate()
    out, ref = _run(provider, p)
    check = p.check(out, ref)
    assert check.ok, check.reason
    if isinstance(p, KvAppendProblem):
        assert check.rel_err == 0.0  # a copy is exact


def test_rmsnorm_reference_matches_torch_rms_norm():
    p = RmsNormProblem(4, 96, "fp32")
    inputs = p.make_inputs(1, "randn", DEV)
    expected = torch.nn.functional.rms_norm(inputs["x"], (96,), inputs["weight"], eps=RMS_EPS)
    torch.testing.assert_close(p.reference(inputs), expected)


def test_add_rmsnorm_outputs_the_norm_of_the_sum_and_the_sum():
    p = AddRmsNormProblem(2, 64, "fp32")
    inputs = p.make_inputs(2, "randn", DEV)
    ref = p.reference(inputs)
    total = inputs["x"] + inputs["residual"]
    torch.testing.assert_close(ref[:, 64:], total)
    torch.testing.assert_close(ref[:, :64], RmsNormProblem(2, 64, "fp32").reference(
        {"x": total, "weight": inputs["weight"]}
    ))  # fmt: skip


def test_rope_is_a_rotation_and_position_zero_is_identity():
    p = RopeProblem(6, 2, 1, 64, "fp32")
    inputs = p.make_inputs(3, "randn", DEV)
    ref = p.reference(inputs).view(6, 3, 64)
    x = torch.cat([inputs["q"], inputs["k"]], dim=1)
    pair = lambda t: t[..., :32] ** 2 + t[..., 32:] ** 2  # noqa: E731 - the rotated pairs' norms
    torch.testing.assert_close(pair(ref), pair(x), rtol=1e-5, atol=1e-5)
    inputs["positions"].zero_()
    torch.testing.assert_close(p.reference(inputs).view(6, 3, 64), x)


def test_kv_append_slots_follow_the_block_table_and_are_distinct():
    p = KvAppendProblem(4, 1, 30, 3, 64, 16)
    slots = p.make_inputs(0, "randn", DEV)["slot_mapping"]
    assert slots.numel() == 12 and slots.unique().numel() == 12
    # each sequence's 3 new tokens sit at positions 30, 31, 32: 30 and 31 share a page
    assert (slots.view(4, 3)[:, 1] - slots.view(4, 3)[:, 0] == 1).all()


@pytest.mark.parametrize(
    ("problem", "expected"),
    [
        (RmsNormProblem(8, 4096), (2 * 8 * 4096 + 4096) * 2),
        (AddRmsNormProblem(8, 4096), (4 * 8 * 4096 + 4096) * 2),
        (SiluMulProblem(8, 14336), 3 * 8 * 14336 * 2),
        (RopeProblem(8, 32, 8, 128), 2 * 8 * 40 * 128 * 2 + 8 * 8 + 8 * 128 * 4),
        (KvAppendProblem(8, 8, 4096), 2 * 2 * 8 * 8 * 128 * 2 + 8 * 8),
    ],
    ids=lambda v: v.label() if hasattr(v, "label") else str(v),
)
def test_min_bytes_counts_each_stream_once(problem, expected):
    assert problem.min_bytes() == expected


@pytest.mark.parametrize(
    ("problem", "field"),
    [
        (RmsNormProblem(0, 64), "m"),
        (SiluMulProblem(4, 64, "fp8_e4m3"), "dtype"),
        (RopeProblem(4, 8, 2, 100), "head_dim"),
        (KvAppendProblem(2, 8, 64, page_size=24), "page_size"),
    ],
)
def test_invalid_problems_name_their_field(problem, field):
    with pytest.raises(ValueError, match=f"^{field}"):
        problem.validate()


def test_a_wrong_kernel_fails_the_check():
    """Dropping the norm's weight, or writing K to the next slot, is caught."""
    p = RmsNormProblem(4, 128)
    inputs = p.make_inputs(0, "randn", DEV)
    x = inputs["x"].float()
    unweighted = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + RMS_EPS)
    assert not p.check(unweighted.to(torch.bfloat16), p.reference(inputs)).ok
    kv = KvAppendProblem(2, 2, 20, 1, 64, 16)
    inputs = kv.make_inputs(0, "randn", DEV)
    flat = inputs["k_cache"].view(-1, 2, 64)
    flat[inputs["slot_mapping"] + 1] = inputs["key"]  # off by one slot
    inputs["v_cache"].view(-1, 2, 64)[inputs["slot_mapping"]] = inputs["value"]
    out = gather_slots(inputs["k_cache"], inputs["v_cache"], inputs["slot_mapping"])
    check = kv.check(out, kv.reference(inputs))
    assert not check.ok and math.isfinite(check.rel_err)


def test_torch_compile_is_skipped_on_the_cpu_with_its_reason():
    provider = load_all().get("rmsnorm", "torch-compile")
    assert "GPU" in (provider.why_not(RmsNormProblem(2, 64), CPU) or "")


def test_own_rope_refuses_a_head_dim_that_is_not_a_power_of_two():
    provider = load_all().get("rope", "own-triton")
    assert "power-of-two" in (provider.why_not(RopeProblem(2, 4, 2, 96), CPU) or "")


def test_own_kernels_refuse_cpu_runs_without_the_interpreter(monkeypatch):
    monkeypatch.setenv("TRITON_INTERPRET", "0")
    p = SiluMulProblem(2, 64)
    with pytest.raises(Unsupported, match="TRITON_INTERPRET"):
        load_all().get("silu_mul", "own-triton").prepare(p, p.make_inputs(0, "randn", DEV), CPU)


@pytest.mark.parametrize("problem", SMALL[:2], ids=lambda p: p.label())
def test_the_weight_late_rung_is_the_same_norm_loaded_in_the_first_order(problem):
    from harness.report.rung_worth import headline_of

    out, ref = _run("own-triton-weight-late", problem)
    headline, _ = _run("own-triton", problem)
    assert problem.check(out, ref).ok
    torch.testing.assert_close(out, headline, rtol=0, atol=0)  # only the load moved
    assert headline_of("own-triton-weight-late", {"own-triton"}) == "own-triton"
    assert "own-triton-weight-late" not in load_all().names("silu_mul")


def test_rows_of_16384_load_the_weight_after_the_sum_and_say_so():
    from harness_kernels.triton import layer_ops as k

    for n, late in ((8192, False), (k.WEIGHT_LATE_MIN_N, True)):
        x, w = torch.randn(2, n), torch.randn(n)
        launch = k.prepare_rmsnorm(x, w, torch.randn(2, n))
        assert launch.meta["WEIGHT_LATE"] is late
        assert ("weight_load" in launch.config) is late
    assert k.prepare_rmsnorm(x[:, :64], w[:64], weight_late=True).meta["WEIGHT_LATE"] is True


@pytest.mark.parametrize("fused", [False, True])
def test_the_two_pass_kernel_matches_the_reference_over_chunks_and_strided_rows(fused, monkeypatch):
    """Rows of 200 in chunks of 64 (the last one partial), seven rows over four programs (one
    SM): each program takes rows four apart. The same fp32 sum is formed in both passes."""
    from harness_kernels.triton import layer_ops as k

    monkeypatch.setattr(k, "LOOPED_CHUNK", 64)
    monkeypatch.setattr(k, "LOOPED_PER_SM", 4)
    p = (AddRmsNormProblem if fused else RmsNormProblem)(7, 200, "fp32")
    inputs = p.make_inputs(4, "randn", DEV)
    res = inputs["residual"] if fused else None
    launch = k.prepare_rmsnorm(inputs["x"], inputs["weight"], res, RMS_EPS, looped=True, sms=1)
    assert launch.config["kernel"].endswith("_looped") and launch.grid == (4,)
    out = torch.cat([o.flatten(1) for o in launch()], dim=1)
    check = p.check(out, p.reference(inputs))
    assert check.ok, check.reason


@pytest.mark.parametrize("provider", ["own-triton", "own-triton-looped"])
def test_only_the_looped_rung_takes_the_two_pass_kernel(provider):
    for problem in SMALL[:2]:
        out, ref = _run(provider, problem)
        assert problem.check(out, ref).ok
        prepared = (
            load_all()
            .get(problem.op, provider)
            .prepare(problem, problem.make_inputs(0, "randn", DEV), CPU)
        )
        assert prepared.config["kernel"].endswith("_looped") == (provider == "own-triton-looped")


@pytest.mark.parametrize(
    "problem",
    [SiluMulProblem(3, 300), SiluMulProblem(7, 2100), SiluMulProblem(1100, 64)],
    ids=lambda p: p.label(),
)
def test_the_rows_first_rung_gives_the_headline_bits(problem):
    """The rung only walks the output in another order (rows first, where the headline takes one
    flat index): rows of 300 and 2100 end in part-filled blocks (blocks of 256 and 1,024, one
    program per SM), and 1,100 rows of 64 put blocks across row ends for the flat index."""
    from harness.report.rung_worth import headline_of

    rung = "own-triton-rows-first"
    headline, ref = _run("own-triton", problem)
    assert problem.check(headline, ref).ok
    out, _ = _run(rung, problem)
    torch.testing.assert_close(out, headline, rtol=0, atol=0)
    inputs = problem.make_inputs(0, "randn", DEV)
    assert load_all().get("silu_mul", rung).prepare(problem, inputs, CPU).config["order"] == "rows"
    assert (
        load_all().get("silu_mul", "own-triton").prepare(problem, inputs, CPU).config["order"]
        == "flat"
    )
    assert headline_of(rung, {"own-triton"}) == "own-triton"
    assert rung not in load_all().names("rmsnorm")


def test_an_unknown_silu_order_is_refused():
    from harness_kernels.triton import layer_ops as k

    with pytest.raises(ValueError, match="order 'cols'"):
        k.prepare_silu_mul(torch.empty(4, 16), 1, order="cols")
    flat = k.prepare_silu_mul(torch.empty(65536, 16), 1)  # one grid axis, any m
    assert flat.grid == (65536 * 8 // flat.config["block"],)
