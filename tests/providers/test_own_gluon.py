"""The Gluon FMHA's providers and launcher on the CPU: what they accept, what they refuse with a
reason, and the config space the tuner times (every candidate fits sm_90's shared memory). Its
numerics are checked on an sm_90 GPU (tests/gpu/test_gluon_attention_gpu.py) and its compiled
structure ahead of time (tests/kernels/test_gluon_attention_aot.py)."""

from __future__ import annotations

import pytest
import torch
from harness_kernels.triton.attention_configs import SM90_SMEM_BYTES
from harness_kernels.triton.attention_gluon import (
    GLUON_RUNGS,
    GluonUnsupported,
    gluon_configs,
    prepare_gluon_attention,
    smem_bytes,
)

from harness.device import DeviceInfo
from harness.problems import AttentionProblem
from harness.providers import load_all, own_gluon
from harness.providers.registry import Unsupported

H200 = DeviceInfo(
    "cuda", 0, "nvidia", "NVIDIA H200", None, "sm_90", (9, 0), 132, 50 << 20, 141 << 30, None, None
)
B200 = DeviceInfo(
    "cuda",
    0,
    "nvidia",
    "NVIDIA B200",
    None,
    "sm_100",
    (10, 0),
    148,
    126 << 20,
    180 << 30,
    None,
    None,
)


def test_providers_accept_prefill_on_sm90_only() -> None:
    registry = load_all()
    prefill = AttentionProblem(4, 32, 8, 4096, 4096, 128, causal=True)
    # the registry's rungs are the launcher's (written twice: the provider imports no kernel
    # module until it prepares)
    assert own_gluon.RUNGS == GLUON_RUNGS
    names = [own_gluon.provider_name(r) for r in own_gluon.RUNGS]
    assert "own-triton-gluon-scalar-cvt" in names and "own-triton-gluon-scaled-mask" in names
    for name in names:
        p = registry.get("attention", name)
        assert p.min_cc == (9, 0) and p.vendors == ("nvidia",)
        assert p.supports(prefill, H200) is None
        assert "sm_90 only" in p.supports(prefill, B200)
        assert "head_dim" in p.supports(AttentionProblem(1, 8, 8, 128, 128, 96), H200)
        paged = AttentionProblem(1, 8, 8, 128, 256, 128, kv_layout="paged", page_size=64)
        assert "dense" in p.supports(paged, H200)
        assert "decode" in p.supports(AttentionProblem(16, 32, 8, 1, 4096, 128), H200)


def test_prepare_off_sm90_is_a_skip_not_an_error() -> None:
    q = torch.zeros(1, 4, 64, 128, dtype=torch.bfloat16)
    k = torch.zeros(1, 2, 64, 128, dtype=torch.bfloat16)
    with pytest.raises(GluonUnsupported, match="sm_90 only"):
        prepare_gluon_attention(q, k, k, causal=False)
    provider = load_all().get("attention", "own-triton-gluon")
    with pytest.raises(Unsupported, match="sm_90 only"):
        provider.prepare(AttentionProblem(1, 4, 2, 64, 64, 128), dict(q=q, k=k, v=k), H200)
    with pytest.raises(ValueError, match="rung"):
        prepare_gluon_attention(q, k, k, causal=False, rung="no-tma")


@pytest.mark.parametrize("head_dim", [64, 128, 256])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("rung", ["full", "not-persistent", "no-overlap", "persistent"])
def test_config_space(head_dim: int, causal: bool, rung: str) -> None:
    cands = gluon_configs(head_dim, rung, causal)
    assert cands and len({tuple(sorted(c.items())) for c in cands}) == len(cands)
    for c in cands:
        smem = smem_bytes(head_dim, c["BLOCK_N"], c["STAGES"], c["CONSUMERS"], qbuf=c["QBUF"])
        assert smem <= SM90_SMEM_BYTES
        assert c["OVERLAP"] == (rung != "no-overlap")
        # a second Q buffer wherever it fits, and only on a persistent candidate (one work item
        # per CTA has no next item's Q to load)
        two = smem_bytes(head_dim, c["BLOCK_N"], c["STAGES"], c["CONSUMERS"], qbuf=2)
        assert c["QBUF"] == (2 if c["PERSISTENT"] and two <= SM90_SMEM_BYTES else 1)
        # the fp32 O accumulator of a 64-row slice is 128 registers at D 256: 64-key tiles
        assert c["BLOCK_N"] == 64 if head_dim == 256 else c["BLOCK_N"] in (64, 128)
    persistent = [c for c in cands if c["PERSISTENT"]]
    if rung == "persistent":
        assert persistent == cands
    elif rung == "full" and causal:
        # session 88: persistent candidates won at causal 1-2k, so the headline times both
        # lists; the not-persistent ones stay first (the best guess at long prompts)
        flat = gluon_configs(head_dim, "not-persistent", causal)
        assert cands == flat + gluon_configs(head_dim, "persistent", causal) and persistent
    else:  # non-causal, persistent ran 0.97-1.01x (session 88): the headline leaves them out
        assert not persistent
    if rung == "full" and not causal:
        assert cands == gluon_configs(head_dim, "not-persistent", causal)
    three = [c for c in cands if c["CONSUMERS"] == 3]
    assert bool(three) == (head_dim == 64)  # three consumers at D 64 only
    if rung == "persistent" or (causal and rung in ("full", "not-persistent")):
        assert all(c["BLOCK_N"] == 64 for c in three)  # 128-key tiles spilled there
    assert cands[0]["CONSUMERS"] == 2 and cands[0]["STAGES"] == 2
    # causal: every head's longest tiles first (persistent: always, in snake rounds); one CTA
    # per item also keeps head by head, its twin right after it, for the tuner to weigh L2
    # sharing against balance
    for c in cands:
        assert c["LONGEST_FIRST"] == (causal and (c["PERSISTENT"] or c["LONGEST_FIRST"]))
    flat = [c for c in cands if not c["PERSISTENT"]]
    if causal:
        assert flat[0::2] == [dict(c, LONGEST_FIRST=True) for c in flat[1::2]]
        assert not any(c["LONGEST_FIRST"] for c in flat[1::2])
    if rung == "persistent" and head_dim == 128:  # D 128's first pick keeps a second Q buffer
        assert cands[0]["QBUF"] == 2


# --- the Gluon GEMM --------------------------------------------------------------------------


def test_gemm_provider_accepts_bf16_fp16_and_fp8_nt_on_sm90_only() -> None:
    from harness.problems import GemmProblem

    p = load_all().get("gemm", "own-triton-gluon")
    assert p.min_cc == (9, 0) and p.vendors == ("nvidia",)
    assert p.supports(GemmProblem(256, 10240, 8192, dtype="bf16"), H200) is None
    assert p.supports(GemmProblem(256, 4096, 4096, dtype="fp16"), H200) is None
    assert "sm_90 only" in p.supports(GemmProblem(256, 4096, 4096, dtype="bf16"), B200)
    assert p.supports(GemmProblem(256, 4096, 4096, dtype="fp8_e4m3", layout="nt"), H200) is None
    assert "K-major" in p.supports(
        GemmProblem(256, 4096, 4096, dtype="fp8_e4m3", layout="nn"), H200
    )
    assert "tf32" in p.supports(GemmProblem(256, 4096, 4096, dtype="tf32"), H200)


def test_gemm_prepare_off_sm90_is_a_skip() -> None:
    from harness_kernels.triton.gemm_gluon import GluonGemmUnsupported, prepare_gluon_matmul

    a = torch.zeros(128, 64, dtype=torch.bfloat16)
    with pytest.raises(GluonGemmUnsupported, match="sm_90 only"):
        prepare_gluon_matmul(a, torch.zeros(64, 128, dtype=torch.bfloat16))
    with pytest.raises(GluonGemmUnsupported, match="bf16, fp16 or fp8"):
        prepare_gluon_matmul(a.float(), torch.zeros(64, 128))


def test_gemm_fp8_operands_checked_before_the_device() -> None:
    """fp8 e4m3: both per-tensor fp32 scales required, B K-major (wgmma reads fp8 K-major
    only), C bf16; scales with bf16 inputs are refused. These fail before the sm_90 check."""
    from harness_kernels.triton.gemm_gluon import GluonGemmUnsupported, _check

    fp8 = torch.float8_e4m3fn
    a = torch.zeros(128, 64, dtype=fp8)
    w = torch.zeros(256, 64, dtype=fp8)  # [N, K]: b = w.t() is K-major
    one = torch.ones(1)
    assert _check(a, w.t(), one, one, None) == (True, torch.bfloat16)
    with pytest.raises(ValueError, match="need a_scale and b_scale"):
        _check(a, w.t(), one, None, None)
    with pytest.raises(ValueError, match="one float32"):
        _check(a, w.t(), one, torch.ones(2), None)
    with pytest.raises(GluonGemmUnsupported, match="K-major only"):
        _check(a, w.t().contiguous(), one, one, None)
    with pytest.raises(GluonGemmUnsupported, match="writes torch.bfloat16"):
        _check(a, w.t(), one, one, torch.float16)
    bf = torch.zeros(128, 64, dtype=torch.bfloat16)
    with pytest.raises(GluonGemmUnsupported, match="scales are for fp8"):
        _check(bf, torch.zeros(64, 128, dtype=torch.bfloat16), one, one, None)


def test_gemm_stage_cap_deepens_small_tiles_only_as_far_as_they_fit() -> None:
    """max_stages (the decode probe's deeper pipelines): 64x64 ping-pong takes 12 stages of 16 KB
    where the default cap holds it at 6; a tile whose stages are already bounded by shared memory
    keeps its count."""
    from harness_kernels.triton.gemm_gluon import (
        DEEP_STAGES,
        MAX_STAGES,
        gluon_gemm_configs,
        smem_bytes,
    )

    def stages(cands: list[dict]) -> dict:
        return {(c["BLOCK_M"], c["BLOCK_N"], c["PINGPONG"]): c["STAGES"] for c in cands}

    # the deep twins (at most DEEP_STAGES) come last in each schedule's list; dict() keeps them
    default = gluon_gemm_configs(64, 4096, 4096, 2, 2, 132)
    deep = gluon_gemm_configs(64, 4096, 4096, 2, 2, 132, max_stages=12)
    assert max(c["STAGES"] for c in default) <= DEEP_STAGES == 8 and MAX_STAGES == 6
    assert stages(deep)[(64, 64, True)] == 12
    for c in deep:
        args = (c["SLICE_M"], c["BLOCK_N"], c["BK"], c["STAGES"], 2, 2, c["C_SMEM"], c["PINGPONG"])
        assert smem_bytes(*args) <= SM90_SMEM_BYTES
    wide = stages(gluon_gemm_configs(8192, 8192, 8192, 2, 2, 132, max_stages=12))
    assert (
        wide[(128, 256, False)]
        == stages(gluon_gemm_configs(8192, 8192, 8192, 2, 2, 132))[(128, 256, False)]
    )


def test_gemm_deep_twin_where_more_stages_fit() -> None:
    """The best tile of each schedule is offered again at up to DEEP_STAGES (the memory-bound
    mid band gained 3-5% from them in the session 59 H100 probe), only where it holds more
    stages than at MAX_STAGES: 128x96 (6 -> 7 with C staged) at 256x6144x4096, none beside
    8192^3's 128x192 (4 stages fill shared memory already)."""
    from harness_kernels.triton.gemm_gluon import config_name, gluon_gemm_configs

    names = [config_name(c) for c in gluon_gemm_configs(256, 6144, 4096, 2, 2, 132)]
    assert "128x96s6" in names and "128x96s7" in names
    names = [config_name(c) for c in gluon_gemm_configs(128, 6144, 4096, 2, 2, 132)]
    assert {"128x64s6", "128x64s8", "64x96s6pp", "64x96s8pp"} <= set(names)
    cands = gluon_gemm_configs(8192, 8192, 8192, 2, 2, 132)
    assert len({(c["BLOCK_M"], c["BLOCK_N"], c["PINGPONG"]) for c in cands}) == len(cands)


def test_gemm_wide_cooperative_tiles_fill_one_wave_at_m512() -> None:
    """160 accumulators per cooperative consumer: 128x320 and 256x160 make one wave of 128
    tiles at 512x10240x8192 (cuBLAS's 320x128 there), both among the timed candidates."""
    from harness_kernels.triton.gemm_gluon import config_name, gluon_gemm_configs

    names = [config_name(c) for c in gluon_gemm_configs(512, 10240, 8192, 2, 2, 132)]
    assert {"128x320s4", "256x160s4"} <= set(names[:4])


@pytest.mark.parametrize(
    "shape", [(256, 10240, 8192), (512, 6144, 4096), (128, 4096, 4096), (8192, 8192, 8192)]
)
def test_gemm_tiles_fit_and_fill_the_sms(shape: tuple) -> None:
    from harness_kernels.triton.gemm_gluon import (
        MAX_ACC_REGS,
        MAX_CANDIDATES,
        SPLIT_TWINS,
        gluon_gemm_configs,
        modelled_cost,
        smem_bytes,
    )

    m, n, k = shape
    cands = gluon_gemm_configs(m, n, k, 2, 2, 132)
    by_schedule = {pp: [c for c in cands if c["PINGPONG"] is pp] for pp in (False, True)}
    for pp, listed in by_schedule.items():
        schedule = "pingpong" if pp else "cooperative"
        # split-K twins (gemm_gluon.split_twins) ride last, at most SPLIT_TWINS of them
        split = [c for c in listed if c.get("SPLIT_K", 1) > 1]
        assert len(split) <= SPLIT_TWINS and listed[len(listed) - len(split) :] == split
        listed = listed[: len(listed) - len(split)]
        # at most one deep twin: the best tile again, deeper, last
        best = listed[0]
        twins = [c for c in listed[1:] if c["SLICE_M"] == best["SLICE_M"] and
                 (c["BN0"], c["BN1"], c["BN2"]) == (best["BN0"], best["BN1"], best["BN2"])]  # fmt: skip
        assert len(twins) <= 1 and all(t["STAGES"] > best["STAGES"] for t in twins)
        assert twins == listed[len(listed) - len(twins) :]
        for c in listed:
            c_cols = c["BN0"] if c.get("C_HALVES") else None  # one buffer, the parts in turn
            args = (c["SLICE_M"], c["BLOCK_N"], c["BK"], c["STAGES"], 2, 2, c["C_SMEM"], pp, c_cols)
            assert smem_bytes(*args) <= SM90_SMEM_BYTES
        listed = [c for c in listed if c not in twins]
        assert 1 <= len(listed) <= MAX_CANDIDATES
        assert len({(c["BLOCK_M"], c["BLOCK_N"]) for c in listed}) == len(listed)
        for c in listed:
            assert c["BLOCK_N"] == c["BN0"] + c["BN1"] + c["BN2"]
            # cooperative tiles are both consumers' slices; a ping-pong tile is one consumer's
            assert c["BLOCK_M"] == (1 if pp else 2) * c["SLICE_M"]
            acc = c["SLICE_M"] * c["BLOCK_N"] // 128  # fp32 per consumer thread
            assert acc <= MAX_ACC_REGS[schedule]
            assert c["STAGES"] >= 4 or c["C_SMEM"]  # C's staging never costs the 4th stage
            assert m > 128 or c["BLOCK_M"] == 128 or pp  # 256-row tiles only where M fills them
        costs = [modelled_cost(m, n, c["BLOCK_M"], c["BLOCK_N"], 132) for c in listed]
        assert costs == sorted(costs)
    if shape == (256, 10240, 8192):
        # 128 tiles of 128x160 on 132 SMs (cuBLAS ran 122 of 128x168); 128x256 leaves 52 idle
        assert (cands[0]["BLOCK_M"], cands[0]["BLOCK_N"]) == (128, 160)


def _wave(c: dict) -> bool:
    """A wave tile: 144 wide (128 + 16)."""
    return c["BN1"] == 16


def test_gemm_wave_tiles_offered_beside_where_they_fill_one_wave() -> None:
    """The wave tiles (gemm_gluon.WAVE_PARTS, 64-row slices only) at Qwen2.5-7B's fused QKV
    weight: at M 512, 128x144 makes 4 x 32 = 128 tiles of N 4608 (one wave on 132 SMs), first
    of the cooperative list, every power-of-two tile still listed, and the deep twins of both
    the wave tile and the best power-of-two tile timed where they fit; none at 512x10240x8192,
    where 144 makes two waves, nor (112 not offered) at N 3584."""
    from harness_kernels.triton.gemm_gluon import MAX_CANDIDATES, config_name, gluon_gemm_configs

    cands = gluon_gemm_configs(512, 4608, 3584, 2, 2, 132)
    names = [config_name(c) for c in cands]
    assert names[0] == "128x144s5" and "64x144s6pp" in names
    assert {"64x144s7pp", "64x96s8pp"} <= set(names)  # both ping-pong twins: 64x144, 64x96
    assert all(c["SLICE_M"] == 64 for c in cands if _wave(c))
    for pp in (False, True):
        plain = [
            c for c in cands if c["PINGPONG"] is pp and not _wave(c) and c.get("SPLIT_K", 1) == 1
        ]
        assert len({(c["SLICE_M"], c["BN0"], c["BN1"]) for c in plain}) == MAX_CANDIDATES
    for shape in ((512, 10240, 8192), (512, 3584, 3584)):
        assert not any(_wave(c) or c["BN2"] for c in gluon_gemm_configs(*shape, 2, 2, 132))
    every = gluon_gemm_configs(512, 4608, 3584, 2, 2, 132, per_schedule=None)
    assert not any(_wave(c) for c in every)  # a probe's "every legal one" is N_PARTS'
    # rung no-wave-tiles: the same list less the wave tiles (and the deep twin goes back to the
    # best power-of-two tile); where none is offered, the very list full times (and so, in
    # prepare_gluon_matmul, full's key and its decision)
    rung = gluon_gemm_configs(512, 4608, 3584, 2, 2, 132, wave_tiles=False)
    assert [c for c in cands if not _wave(c) and c not in rung] == []
    assert not any(_wave(c) for c in rung)
    for shape in ((512, 10240, 8192), (512, 6144, 4096)):
        assert gluon_gemm_configs(*shape, 2, 2, 132, wave_tiles=False) == gluon_gemm_configs(
            *shape, 2, 2, 132
        )


def test_the_row_says_which_order_its_work_items_ran_in() -> None:
    """provider_config's `order` (session 101): which CTA ran which query tile."""
    from harness_kernels.triton.attention_gluon import _order

    lpt = dict(LONGEST_FIRST=True, PERSISTENT=False)
    assert _order(True, lpt) == "every head's longest tiles first"
    assert _order(True, dict(lpt, PERSISTENT=True)) == (
        "every head's longest tiles first, in snake rounds"
    )
    assert _order(True, dict(lpt, LONGEST_FIRST=False)) == "head by head, longest tile first"
    assert _order(False, dict(lpt, LONGEST_FIRST=False)) == "head by head"


def test_per_tile_math_by_rung_and_where_the_one_limit_mask_spilled() -> None:
    # the full kernel's per-tile math everywhere but the persistent D 256 kernel, where the
    # one-limit mask spilled under Triton 3.6; the rungs step down from it
    assert {c["TILE_MATH"] for c in gluon_configs(128, "full", True)} == {3}
    assert {c["TILE_MATH"] for c in gluon_configs(64, "full", False)} == {3}
    assert {c["TILE_MATH"] for c in gluon_configs(256, "persistent", True)} == {2}
    assert {c["TILE_MATH"] for c in gluon_configs(256, "not-persistent", True)} == {3}
    for rung, level in (("two-compare-mask", 2), ("scalar-cvt", 1), ("scaled-mask", 0)):
        full = gluon_configs(128, "full", True)
        assert gluon_configs(128, rung, True) == [dict(c, TILE_MATH=level) for c in full]
