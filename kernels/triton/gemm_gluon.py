"""Launcher of the Gluon GEMM (gemm_gluon_kernel.py): operand checks, the tile candidates fitted
to the SM count, descriptors, tuning, and the AOT compile specs for tests and `harness inspect`.

Schedules (CUTLASS's two warp-specialized ones): "cooperative", both consumer warpgroups on one
(2 x SLICE_M) x (BN0 + BN1) tile, SLICE_M rows each; "ping-pong", each consumer on its own
SLICE_M x (BN0 + BN1) tile, their main loops taking turns so that one's epilogue runs under the
other's wgmmas. Candidates are every legal tile of each schedule (at most MAX_ACC_REGS fp32
accumulators per consumer thread, as many stages as fit shared memory), ranked by modelled
time: the waves of tiles the grid runs (a partial last wave costs a whole one) times a tile's
work, with a small penalty for the operand bytes a tile loads per multiply-add (narrow tiles
reread A and B more often). The model does not know what the epilogue costs or how fast one
warpgroup alone drives the tensor cores, so it ranks within a schedule only: the best few of
each are timed on the GPU (the attention tuner's cold-L2 timer, a wrong output never wins) and
the choice is stored on disk like the other tuners'.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
import triton

from .. import tune_cache
from .attention_configs import SM90_SMEM_BYTES
from .attention_target import device_key, target_of
from .gemm_gluon_tune import tune as tune_configs
from .gemm_reduce_kernel import splitk_sum

# (BN0, BN1): tile widths 320, 256, 192, 160, 128, 96 and 64 from power-of-two parts (a third
# part, BN2, only in WAVE_PARTS)
N_PARTS: tuple[tuple[int, ...], ...] = (
    (256, 64),
    (256, 0),
    (128, 64),
    (128, 32),
    (128, 0),
    (64, 32),
    (64, 0),
)
# 144-wide tiles (128 + a 16-column part: one m64n16 wgmma beside the wide one per K step), for
# weights whose N is a multiple of 144 where the power-of-two widths leave a second wave or
# uneven SMs. Qwen2.5-7B's fused QKV (N 4608 = 32 x 144): at M 512 128x144 makes 128 tiles on
# 132 SMs where the tuner's 128x160 made 116 with 11% more work on the busiest SM; pinned beside
# cuBLAS at the power cap (H200, session 79, _logs/session79/probe-waveparts-capped.txt) 128x144
# ran 0.950x cuBLAS against the pick's 0.910x (fp8 0.935x / 0.906x), 64x144 ping-pong at M 256
# 0.945x / 0.898x. 80-wide tiles (64 + 16) lost there (0.60-0.84x) and are not offered. A wave
# tile is timed only where it models faster than every power-of-two tile of its schedule, and
# beside them, not in their place (the deep twins of both it and the best power-of-two tile are
# timed too). Only with
# 64-row consumer slices: with 128 (256x144, 128x144 ping-pong) they ran 0.32-0.88x there.
# Not offered: 112-wide tiles (64 + 32 + 16, the kernel's three N parts) for N 3584 = 32 x 112
# (Qwen2.5-7B's hidden size), where 128x112 makes one wave of 128 tiles at M 512 and 128x128
# makes 112 (cuBLAS runs 112x128 on 128 CTAs). Correct on the GPU, but three wgmmas per K step
# (A read for each, two of them narrow) cost more than the wave saves: in the H200 tune pass
# (qwen2_5_7b_gemm-wave3-s79) 128x112 took 26.7 us against 128x128's 23.5 at 512x3584x3584
# and 121 against 106 at K 18944; 64x112 ping-pong lost likewise. `scripts/gluon_tile_probe.py
# --extra-parts 64+32+16` pins them.
WAVE_PARTS: tuple[tuple[int, ...], ...] = ((128, 16),)
WAVE_SLICES = (64,)
SLICES = (64, 128)  # rows per consumer warpgroup
SCHEDULES = ("cooperative", "pingpong")
CONSUMERS = 2
# fp32 accumulators per consumer thread (of its 240 registers): a cooperative consumer keeps one
# wgmma group per part in flight while the next stage's operands are addressed; ping-pong's
# 128x192 (192) compiles without spills too (ptxas, sm_90) and makes 128-row tiles wider.
# Cooperative 160 (128x320, 256x160: one wave of 128 tiles at M 512, N 10240, the tile cuBLAS
# runs there) compiles without spills as well (tests/kernels/test_gluon_gemm_aot.py).
MAX_ACC_REGS = {"cooperative": 160, "pingpong": 192}
MAX_STAGES = 6
# The best modelled tile of each schedule is timed again at up to DEEP_STAGES where more fit
# (the deep twin). In an H100 probe (scripts/gluon_tile_probe.py, results/h100/_logs/session59)
# the memory-bound mid band gained: 256x6144x4096 128x96 0.957x cuBLAS at 6 stages, 0.983x at
# 7; 128x6144x4096 128x64 0.933x -> 0.978x at 8, 64x96 ping-pong 0.939x -> 0.988x. Long-K
# compute-bound shapes lost with them (512x8192x28672 64x128 ping-pong 0.705x -> 0.581x), so
# the twin is timed beside the usual depth, not in its place.
DEEP_STAGES = 8
MIN_STAGES = 4  # below this, C's staging buffers give way to a pipeline stage
# Split-K (SPLIT_K > 1: fp32 partials, summed by gemm_reduce_kernel.py's second launch): per
# schedule, SPLIT_TWINS tiles of at most half a wave each, split the most ways that keep the
# units within one wave, divide the K steps evenly and leave each unit MIN_SPLIT_STEPS, chosen
# by the useful share of one wave they fill (at least MIN_SPLIT_FILL; ties: the larger tile).
# Llama-3.1-405B's fused QKV (N 2304, K 16384) at M 256: 32 tiles of 128x144 split 4 ways, 128
# units (0.97 of 132 SMs), the decomposition cuBLAS runs there (then its splitKreduce); the `tl`
# kernel's best (128x256 or 256x128 split 7, summed apart) ran 0.83x cuBLAS (session 82).
# One twin per schedule, from the tiles and the 64-row wave tiles. The wave parts at 128-row
# slices (256x144 split 8, 128x144 ping-pong split 4: fewer operand bytes per multiply-add), the
# second twin of each schedule, lost at every 405B QKV point on an H200 (M 256 bf16: 45.5 and
# 42.6 us against 64x144 ping-pong split 2's 38.7; M 128: 31.6 against 30.4) and were picked
# nowhere in the 405B decode preset (session 83, call 2: results/h200/_logs/session83).
SPLIT_TWINS = 1
MIN_SPLIT_STEPS = 4
MIN_SPLIT_FILL = 0.75
# A split twin's in-place twin (SUM_IN_PLACE, in_place_twins): the last unit of a tile's row
# slice to count in sums the slice's parts and writes C in the GEMM's own launch, so no second
# launch; its read of every part of its slice through one SM lies on the tile's critical path.
# Not offered (OFFER_IN_PLACE): at the 405B QKV (N 2304, K 16384) on an H200 the tuner timed it
# level with or behind its twin summed apart at every point, bf16 and fp8 (M 256: 64x144 ping-pong
# split 2 39.5 vs 39.5 us, 128x144 split 4 45.6 vs 39.4; M 128: split 4 31.8 vs 31.0; session 83,
# results/h200/_logs/session83): the second launch was not what the split cost. Kept for the GPU
# tests and the AOT specs, which hold it right, and for a probe on another GPU. Only for at most
# IN_PLACE_MAX_SPLIT parts; the sum holds a slice's total beside a part in flight, so past
# IN_PLACE_MAX_ACC accumulators per thread it spills (256x160 split 2, 160 each: 80 spilled
# registers under Triton 3.6's ptxas).
OFFER_IN_PLACE = False
IN_PLACE_MAX_SPLIT = 4
IN_PLACE_MAX_ACC = 96
MAX_CANDIDATES = 4  # timed per schedule
GROUP_M = 8
SMEM_SLACK = 1024  # mbarriers and alignment
# The kernel files a tuned choice depends on (a change to any of them re-tunes).
# the capped re-time (gemm_gluon_tune.py) decides with capped_retime.py's thresholds and
# gemm_tune.py's band
TUNE_SOURCES = (
    "triton/gemm_gluon*.py",
    "triton/gluon_compat.py",
    "bench_cold.py",
    "capped_retime.py",
    "triton/gemm_tune.py",  # CAPPED_BAND, the re-time's band
)
DTYPES = (torch.bfloat16, torch.float16)
# fp8 e4m3 inputs with per-tensor fp32 scales, bf16 out (C = a_scale * b_scale * A @ B, as
# torch._scaled_mm computes it). wgmma reads fp8 operands K-major only, so B must be w.t().
FP8 = torch.float8_e4m3fn
FP8_OUT = torch.bfloat16


class GluonMatmulLaunch:
    """A prepared Gluon GEMM: C allocated, tile chosen and compiled; calling it only launches.
    It satisfies harness_kernels.launch.Launch."""

    out: torch.Tensor  # [M, N]
    config: dict[str, Any]

    def __init__(self, out: torch.Tensor, config: dict[str, Any], fn: Callable[[], object]):
        self.out = out
        self.config = config
        self._fn = fn

    def __call__(self) -> torch.Tensor:
        self._fn()
        return self.out


class GluonGemmUnsupported(ValueError):
    """The problem or machine is outside what the Gluon GEMM runs (a skipped row, not a bug)."""


def tile_rows(slice_m: int, pingpong: bool) -> int:
    """Rows of one tile: a consumer's SLICE_M (ping-pong) or both consumers' (cooperative)."""
    return slice_m if pingpong else CONSUMERS * slice_m


def smem_bytes(
    slice_m: int,
    bn: int,
    bk: int,
    stages: int,
    in_bytes: int,
    out_bytes: int,
    c_smem: bool = True,
    pingpong: bool = False,
    c_cols: int | None = None,
) -> int:
    """Shared memory of one CTA: STAGES of A (a tile's rows) and B, and with `c_smem` a C staging
    buffer per consumer (SLICE_M x BN each, in both schedules; SLICE_M x `c_cols` where the
    tile's parts leave through one buffer in turn, C_HALVES)."""
    c = CONSUMERS * slice_m * (c_cols or bn) * out_bytes if c_smem else 0
    return stages * (tile_rows(slice_m, pingpong) + bn) * bk * in_bytes + c + SMEM_SLACK


def most_stages(
    slice_m: int,
    bn: int,
    bk: int,
    in_bytes: int,
    out_bytes: int,
    c_smem: bool,
    pingpong: bool,
    max_stages: int,
) -> int:
    """The most pipeline stages (2..max_stages) that fit shared memory, C staged or not; 0 if
    not even two do."""
    fit = [
        s
        for s in range(2, max_stages + 1)
        if smem_bytes(slice_m, bn, bk, s, in_bytes, out_bytes, c_smem, pingpong) <= SM90_SMEM_BYTES
    ]
    return max(fit, default=0)


def stages_and_epilogue(
    slice_m: int,
    bn: int,
    bk: int,
    in_bytes: int,
    out_bytes: int,
    pingpong: bool = False,
    max_stages: int = MAX_STAGES,
) -> tuple[int, bool] | None:
    """(stages, C staged in shared memory for TMA stores): the most stages that fit with C
    staged, unless that leaves fewer than MIN_STAGES and storing C from registers buys one
    (128x256: three stages staged, four not). None if not even two stages fit."""
    tile = (slice_m, bn, bk, in_bytes, out_bytes)
    staged = most_stages(*tile, True, pingpong, max_stages)
    direct = most_stages(*tile, False, pingpong, max_stages)
    if staged < MIN_STAGES and direct > staged:
        return direct, False
    return (staged, True) if staged else None


def modelled_cost(m: int, n: int, bm: int, bn: int, num_sms: int) -> float:
    """Relative time of one bm x bn tile shape: whole waves of tiles (a partial last wave costs a
    full one) times a tile's multiply-adds per K step, times 1 + 8 x operand elements loaded per
    multiply-add (128x256: 1.09, 128x128: 1.13, 128x64: 1.19). Only ranks candidates of one
    schedule (a ping-pong CTA's two tiles share the tensor cores: its tiles run one after the
    other, like a cooperative CTA's)."""
    tiles = triton.cdiv(m, bm) * triton.cdiv(n, bn)
    waves = triton.cdiv(tiles, num_sms)
    return waves * bm * bn * (1.0 + 8.0 * (bm + bn) / (bm * bn))


def gluon_gemm_configs(
    m: int,
    n: int,
    k: int,
    in_bytes: int,
    out_bytes: int,
    num_sms: int,
    max_stages: int = MAX_STAGES,
    per_schedule: int | None = MAX_CANDIDATES,
    wave_tiles: bool = True,
) -> list[dict[str, Any]]:
    """Candidates: per schedule the `per_schedule` best modelled (distinct tile shapes; None:
    every legal one, a probe's), cooperative first; each with the most stages that fit, up to
    `max_stages`; the best wave tile (WAVE_PARTS) first where it models faster than all of
    them (not with `wave_tiles` False, rung no-wave-tiles, or per_schedule None); after each
    schedule's, the deep twin of its best (DEEP_STAGES) where it holds more stages."""
    bk = 128 // in_bytes  # 128-byte rows: the widest TMA swizzle
    out = []
    for schedule in SCHEDULES:
        pingpong = schedule == "pingpong"
        tile = (schedule, bk, in_bytes, out_bytes, max_stages)
        ranked = _ranked(m, n, num_sms, SLICES, N_PARTS, *tile)
        chosen = [cfg for _, cfg in ranked[:per_schedule]]
        waves = _ranked(m, n, num_sms, WAVE_SLICES, WAVE_PARTS, *tile)
        offer = wave_tiles and per_schedule is not None and waves
        # the deep twins of the best tile, and of the best power-of-two one where a wave tile
        # goes before it (session 79: at 256x3584x3584 the twin 64x128s8pp won the bf16 tune)
        bests = chosen[:1]
        if offer and (not ranked or waves[0][0] < ranked[0][0]):
            chosen.insert(0, waves[0][1])
            bests.insert(0, waves[0][1])
        for best in bests:
            # a halves tile's twin is built from its one part (_tile halves it again if need be)
            halved = bool(best.get("C_HALVES"))
            twin = _tile(
                best["SLICE_M"],
                best["BN0"] + best["BN1"] if halved else best["BN0"],
                0 if halved else best["BN1"],
                bk,
                in_bytes,
                out_bytes,
                pingpong,
                max(DEEP_STAGES, max_stages),
                best["BN2"],
            )
            if twin is not None and twin["STAGES"] > best["STAGES"]:
                chosen.append(twin)
        out += chosen
        if per_schedule is not None:
            pool = [c for _, c in ranked] + ([c for _, c in waves] if wave_tiles else [])
            twins = split_twins(pool, m, n, k, in_bytes, num_sms, max_stages)
            out += twins + (in_place_twins(twins) if OFFER_IN_PLACE else [])
    return out


def in_place_twins(twins: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The in-place twin (SUM_IN_PLACE: the sum in the GEMM's own launch) of every split twin
    of at most IN_PLACE_MAX_SPLIT parts and IN_PLACE_MAX_ACC accumulators per consumer thread."""
    return [
        dict(t, SUM_IN_PLACE=True)
        for t in twins
        if t["SPLIT_K"] <= IN_PLACE_MAX_SPLIT
        and t["SLICE_M"] * t["BLOCK_N"] // 128 <= IN_PLACE_MAX_ACC
    ]


def split_twins(
    pool: list[dict[str, Any]],
    m: int,
    n: int,
    k: int,
    in_bytes: int,
    num_sms: int,
    max_stages: int,
) -> list[dict[str, Any]]:
    """The SPLIT_TWINS split-K twins of `pool`'s tiles that fill the most of one wave with
    useful work (tiles x split / num_sms, times the share of the tiles inside M x N), if at
    least MIN_SPLIT_FILL; ties go to the larger tile (fewer operand bytes per multiply-add)."""
    scored: list[tuple[float, int, int, dict[str, Any]]] = []
    for cfg in pool:
        twin = split_twin(cfg, m, n, k, in_bytes, num_sms, max_stages)
        if twin is None:
            continue
        bm, bn = twin["BLOCK_M"], twin["BLOCK_N"]
        tiles = triton.cdiv(m, bm) * triton.cdiv(n, bn)
        useful = m * n / (tiles * bm * bn)
        fill = useful * tiles * twin["SPLIT_K"] / num_sms
        if fill >= MIN_SPLIT_FILL:
            scored.append((-fill, -bm * bn, len(scored), twin))
    return [twin for *_, twin in sorted(scored)[:SPLIT_TWINS]]


def _ranked(
    m: int,
    n: int,
    num_sms: int,
    slices: tuple[int, ...],
    parts: tuple[tuple[int, ...], ...],
    schedule: str,
    bk: int,
    in_bytes: int,
    out_bytes: int,
    max_stages: int,
) -> list[tuple[float, dict[str, Any]]]:
    """The legal tiles of one schedule from `slices` and `parts`, cheapest modelled first."""
    pingpong = schedule == "pingpong"
    ranked = []
    for slice_m in slices:
        if tile_rows(slice_m, pingpong) >= 256 and m <= 128:
            continue  # half of every tile would be padding rows
        for part in parts:
            bn0, bn1, bn2 = (*part, 0, 0)[:3]
            if slice_m * (bn0 + bn1 + bn2) // 128 > MAX_ACC_REGS[schedule]:
                continue
            cfg = _tile(slice_m, bn0, bn1, bk, in_bytes, out_bytes, pingpong, max_stages, bn2)
            if cfg is not None:
                ranked.append((modelled_cost(m, n, cfg["BLOCK_M"], cfg["BLOCK_N"], num_sms), cfg))
    ranked.sort(key=lambda tc: tc[0])
    return ranked


def _tile(
    slice_m: int,
    bn0: int,
    bn1: int,
    bk: int,
    in_bytes: int,
    out_bytes: int,
    pingpong: bool,
    max_stages: int,
    bn2: int = 0,
) -> dict[str, Any] | None:
    """One candidate: the tile with the most stages that fit up to `max_stages` (None if not
    even two do); `bn2` a third N part (with bn1 > 0)."""
    bn = bn0 + bn1 + bn2
    plan = stages_and_epilogue(slice_m, bn, bk, in_bytes, out_bytes, pingpong, max_stages)
    if plan is None:
        return None
    # C staged by halves (C_HALVES): a one-part tile whose C would leave from registers (its
    # staging buffer costs a stage) keeps its stages as two equal parts of BN0 / 2 (two wgmmas per
    # K step) through one SLICE_M x BN0 / 2 buffer per consumer, in turn. 128x256 and 256x128
    # then hold four stages and a TMA-store epilogue in 225 KB (cuBLASLt's fp8 256x128x128
    # kernel: 4 stages, 213,188 bytes). Why (H200, session 85): at fp8 4096x8192x8192 the Gluon
    # tiles picked there, 128x128 and 128x192, ran 72% of L2 throughput against 43% for the `tl`
    # kernel's 128x256 (ncu) and 3-6% lower clocks at the power cap (gemm-ties-s85); the
    # direct-store 128x256 ran 14% longer than 128x192 (ncu, 4096x6144x4096); by halves it ran
    # 0.991x cuBLASLt at the cap there (gluon_tile_probe), where the best tile before was 0.939x.
    halves = (
        not plan[1]
        and not bn1
        and bn0 >= 128
        and smem_bytes(slice_m, bn, bk, plan[0], in_bytes, out_bytes, True, pingpong, bn0 // 2)
        <= SM90_SMEM_BYTES
    )
    if halves:
        bn0 = bn1 = bn0 // 2
    return dict(
        BLOCK_M=tile_rows(slice_m, pingpong),
        BLOCK_N=bn,
        SLICE_M=slice_m,
        BN0=bn0,
        BN1=bn1,
        BN2=bn2,
        BK=bk,
        STAGES=plan[0],
        C_SMEM=plan[1] or halves,
        GROUP_M=GROUP_M,
        PINGPONG=pingpong,
        **({"C_HALVES": True} if halves else {}),
    )


def config_name(cfg: dict[str, Any]) -> str:
    """A candidate as provider_config lists it: 128x160s4 (cooperative), 64x256s4pp (ping-pong),
    128x144s6k4 (split K 4 ways, summed by a second launch), 64x144s6ppk2i (split K 2 ways,
    summed in place)."""
    pp = "pp" if cfg["PINGPONG"] else ""
    split = f"k{cfg['SPLIT_K']}" if cfg.get("SPLIT_K", 1) > 1 else ""
    split += "i" if cfg.get("SUM_IN_PLACE") else ""
    halves = "h" if cfg.get("C_HALVES") else ""
    return f"{cfg['BLOCK_M']}x{cfg['BLOCK_N']}s{cfg['STAGES']}{pp}{split}{halves}"


def split_twin(
    cfg: dict[str, Any], m: int, n: int, k: int, in_bytes: int, num_sms: int, max_stages: int
) -> dict[str, Any] | None:
    """`cfg` split K the most ways (<= 16) that keep tiles x split within num_sms, divide the K
    steps evenly and leave each unit MIN_SPLIT_STEPS; None where its tiles fill over half the
    SMs or no split fits. C leaves through the second launch, so no C staging: the stages take
    its bytes."""
    tiles = triton.cdiv(m, cfg["BLOCK_M"]) * triton.cdiv(n, cfg["BLOCK_N"])
    steps = triton.cdiv(k, cfg["BK"])
    if 2 * tiles > num_sms:
        return None
    fits = [
        s
        for s in range(2, 17)
        if tiles * s <= num_sms and steps % s == 0 and steps // s >= MIN_SPLIT_STEPS
    ]
    if not fits:
        return None
    stages = most_stages(
        cfg["SLICE_M"],
        cfg["BLOCK_N"],
        cfg["BK"],
        in_bytes,
        2,
        False,
        cfg["PINGPONG"],
        max(max_stages, cfg["STAGES"]),
    )
    twin = dict(cfg, STAGES=stages, C_SMEM=False, SPLIT_K=max(fits))
    if twin.pop("C_HALVES", False):  # no C staging to halve: the tile's one part again
        twin.update(BN0=cfg["BN0"] + cfg["BN1"], BN1=0)
    return twin


def _boxes(cfg: dict[str, Any], b_is_nk: bool) -> dict[str, list[int]]:
    """The TMA box of each descriptor argument of _gemm_ws_kernel, in argument order (without a
    second or third N part, its descriptors repeat part 0's and are never used)."""
    slice_m, bn0, bk = cfg["SLICE_M"], cfg["BN0"], cfg["BK"]
    bn1 = cfg["BN1"] or bn0
    bn2 = cfg["BN2"] or bn0
    return dict(
        a_desc=[slice_m, bk],
        b0_desc=[bn0, bk] if b_is_nk else [bk, bn0],
        b1_desc=[bn1, bk] if b_is_nk else [bk, bn1],
        b2_desc=[bn2, bk] if b_is_nk else [bk, bn2],
        c0_desc=[slice_m, bn0],
        c1_desc=[slice_m, bn1],
        c2_desc=[slice_m, bn2],
    )


def _constexprs(cfg: dict[str, Any], b_is_nk: bool, has_scale: bool = False) -> dict[str, Any]:
    """_gemm_ws_kernel's meta-parameters for one candidate (`has_scale`: fp8 with scales)."""
    return dict(
        SLICE_M=cfg["SLICE_M"],
        CONSUMERS=CONSUMERS,
        BN0=cfg["BN0"],
        BN1=cfg["BN1"],
        BN2=cfg["BN2"],
        BK=cfg["BK"],
        STAGES=cfg["STAGES"],
        GROUP_M=cfg["GROUP_M"],
        B_IS_NK=b_is_nk,
        HAS_SCALE=has_scale,
        C_SMEM=cfg["C_SMEM"],
        PINGPONG=cfg["PINGPONG"],
        SPLIT_K=cfg.get("SPLIT_K", 1),
        SUM_IN_PLACE=bool(cfg.get("SUM_IN_PLACE")),
        C_HALVES=bool(cfg.get("C_HALVES")),
    )


def _gl_dtype(dtype: torch.dtype) -> Any:
    from triton.experimental.gluon import language as gl

    return {torch.bfloat16: gl.bfloat16, torch.float16: gl.float16, FP8: gl.float8e4nv}[dtype]


def _descriptor(t: torch.Tensor, block: list[int]) -> Any:
    from triton.experimental.gluon import language as gl
    from triton.experimental.gluon.nvidia.hopper import TensorDescriptor

    dtype = _gl_dtype(t.dtype)
    layout = gl.NVMMASharedLayout.get_default_for(block, dtype)
    return TensorDescriptor(t, list(t.shape), [t.stride(0), 1], block, layout)


def _check(
    a: torch.Tensor, b: torch.Tensor, a_scale: Any, b_scale: Any, out_dtype: torch.dtype | None
) -> tuple[bool, torch.dtype]:
    """Validate operands; return whether B is K-major (b = w.t(), w [N, K] row-major) and C's
    dtype (the inputs', or FP8_OUT for fp8)."""
    if a.dim() != 2 or b.dim() != 2 or a.shape[1] != b.shape[0]:
        raise ValueError(f"need a [M, K] and b [K, N]; got {tuple(a.shape)} and {tuple(b.shape)}")
    fp8 = a.dtype == FP8
    if a.dtype != b.dtype or not (fp8 or a.dtype in DTYPES):
        raise GluonGemmUnsupported(f"the Gluon GEMM takes bf16, fp16 or fp8 e4m3, not {a.dtype}")
    if fp8 and (a_scale is None or b_scale is None):
        raise ValueError("fp8 e4m3 inputs need a_scale and b_scale (per-tensor fp32)")
    if not fp8 and (a_scale is not None or b_scale is not None):
        raise GluonGemmUnsupported(f"scales are for fp8 inputs, not {a.dtype}")
    for name, sc in (("a_scale", a_scale), ("b_scale", b_scale)):
        if sc is not None and (sc.numel() != 1 or sc.dtype != torch.float32):
            raise ValueError(f"{name} must be one float32 (per-tensor); got {sc.dtype} {sc.shape}")
    c_dtype = FP8_OUT if fp8 else a.dtype
    if out_dtype is not None and out_dtype != c_dtype:
        raise GluonGemmUnsupported(
            f"the Gluon GEMM writes {c_dtype} for {a.dtype}, not {out_dtype}"
        )
    if a.stride(1) != 1:
        raise GluonGemmUnsupported(f"a must be row-major; strides {a.stride()}")
    b_is_nk = b.stride(0) == 1 and b.stride(1) != 1
    if not b_is_nk and b.stride(1) != 1:
        raise GluonGemmUnsupported(f"b must be row- or column-major; strides {b.stride()}")
    if fp8 and not b_is_nk:
        raise GluonGemmUnsupported("fp8 wgmma reads B K-major only (b = w.t(), w [N, K])")
    elem = a.element_size()
    for name, t in (("a", a), ("b", b)):
        row_stride = max(t.stride()) * elem
        if t.data_ptr() % 16 or row_stride % 16:
            raise GluonGemmUnsupported(f"TMA needs 16-byte aligned {name} (base and row stride)")
    c_elem = torch.empty((), dtype=c_dtype).element_size()
    if (b.shape[1] * c_elem) % 16:
        raise GluonGemmUnsupported("TMA stores need N * elem % 16 == 0 for C's rows")
    return b_is_nk, c_dtype


def prepare_gluon_matmul(
    a: torch.Tensor,
    b: torch.Tensor,
    *,
    a_scale: torch.Tensor | None = None,
    b_scale: torch.Tensor | None = None,
    out_dtype: torch.dtype | None = None,
    tune: bool = True,
    config: dict | None = None,
    max_stages: int = MAX_STAGES,
    per_schedule: int | None = MAX_CANDIDATES,
    wave_tiles: bool = True,
) -> GluonMatmulLaunch:
    """Check operands, allocate C, choose (time) a tile, return the launch (calling it only
    launches). The tile is timed in bursts, and the close rivals of a long winner again at the
    power cap (gemm_gluon_tune.py). a [M, K] row-major; b [K, N] row-major or column-major
    (bf16, fp16), or column-major fp8 e4m3 with per-tensor fp32 `a_scale` and `b_scale` (C
    bf16; `out_dtype`, if given, must be C's dtype). `config` (one of gluon_gemm_configs) pins
    the tile untimed. `max_stages` caps the pipeline (deeper ones are
    a probe's: scripts/gluon_decode_probe.py); `per_schedule` how many tiles of each schedule
    are candidates (None: all; scripts/gluon_tile_probe.py pins each in turn); `wave_tiles`
    False leaves out the 144-wide tiles (own Triton's rung no-wave-tiles). Raises
    GluonGemmUnsupported off sm_90."""
    b_is_nk, c_dtype = _check(a, b, a_scale, b_scale, out_dtype)
    target = target_of(a.device)
    if target[0] != "cuda" or target[1] != 90:
        raise GluonGemmUnsupported(
            f"the Gluon GEMM is sm_90 only (wgmma, TMA, setmaxnreg); target {target[0]}:{target[1]}"
        )
    (m, k), n = a.shape, b.shape[1]
    out = torch.empty((m, n), device=a.device, dtype=c_dtype)
    num_sms = torch.cuda.get_device_properties(a.device).multi_processor_count
    elem, c_elem = a.element_size(), out.element_size()
    cands = gluon_gemm_configs(m, n, k, elem, c_elem, num_sms, max_stages, per_schedule, wave_tiles)
    has_scale = a_scale is not None
    w = b.t() if b_is_nk else b  # the row-major tensor TMA describes: [N, K] or [K, N]

    def build(cfg: dict) -> Callable[[], object]:
        from .gemm_gluon_kernel import _gemm_ws_kernel

        sources = dict(
            a_desc=a, b0_desc=w, b1_desc=w, b2_desc=w, c0_desc=out, c1_desc=out, c2_desc=out
        )
        descs = [_descriptor(sources[arg], box) for arg, box in _boxes(cfg, b_is_nk).items()]
        bm, bn, split = cfg["BLOCK_M"], cfg["BLOCK_N"], cfg.get("SPLIT_K", 1)
        tiles = triton.cdiv(m, bm) * triton.cdiv(n, bn)
        if triton.cdiv(k, cfg["BK"]) % split:  # the kernel runs cdiv(K, BK) // SPLIT_K steps
            raise ValueError(f"SPLIT_K {split} does not divide the K steps of {config_name(cfg)}")
        grid = (min(tiles * split, num_sms),)
        # without HAS_SCALE the scale pointers are never read, nor the workspace without a split
        scales = (a_scale, b_scale) if has_scale else (a, a)
        ws = out
        if split > 1:
            ws = torch.empty(tiles * split * bm * bn, device=a.device, dtype=torch.float32)
        # the in-place sum's counters: one per tile row slice, zero (each slice's summing unit
        # sets its counter back to zero for the next launch); elsewhere never read
        counters = out
        if cfg.get("SUM_IN_PLACE"):
            slices = 1 if cfg["PINGPONG"] else CONSUMERS
            counters = torch.zeros(tiles * slices, device=a.device, dtype=torch.int32)
        args = (*descs, out, out.stride(0), ws, counters, *scales, m, n, k)
        kernel = _gemm_ws_kernel[grid]
        meta = _constexprs(cfg, b_is_nk, has_scale)
        if split == 1 or cfg.get("SUM_IN_PLACE"):
            return lambda: kernel(*args, **meta, num_warps=4)
        sum_scales = (a_scale, b_scale) if has_scale else (None, None)
        summed = splitk_sum(ws, out, *sum_scales, tiles, bm, bn, cfg["GROUP_M"], split)
        summed.bind_compiled()  # compiled now (its one launch sums an unwritten workspace)

        def launch() -> None:
            kernel(*args, **meta, num_warps=4)
            summed()

        return launch

    # the stage cap picks the candidates: decisions under two caps must not share a key
    key: tuple = ("gemm_gluon", m, n, k, a.dtype, b_is_nk, device_key(a.device), max_stages)
    key += (per_schedule,)
    # the rung's tiles differ from full's only where a wave tile is offered: elsewhere it shares
    # full's key and so its choice
    if not wave_tiles and cands != gluon_gemm_configs(
        m, n, k, elem, c_elem, num_sms, max_stages, per_schedule
    ):
        key += ("no-wave-tiles",)
    if config is not None:
        # a candidate, or the in-place twin of a split one (not offered, but pinned by the tests)
        splits = [c for c in cands if c.get("SPLIT_K", 1) > 1]
        if config not in cands + in_place_twins(splits):
            raise ValueError(f"config {config} is not a candidate: {cands}")
        cfg, info = dict(config), dict(tuned=False, tune_candidates=1, tune_source="pinned")
    else:

        def stored(family: str) -> tune_cache.TuneKey | None:
            """The disk key of this point's bursts ("burst") or of their capped re-time."""
            return tune_cache.make_key(
                "triton-gemm-gluon" if family == "burst" else family,
                device_key(a.device),
                key,
                cands,
                toolchain=tune_cache.triton_toolchain(),
                sources=TUNE_SOURCES,
            )

        cfg, info = tune_configs(key, cands, build, tune, out, stored, config_name)
    tiles = triton.cdiv(m, cfg["BLOCK_M"]) * triton.cdiv(n, cfg["BLOCK_N"])
    split = cfg.get("SPLIT_K", 1)
    record: dict[str, Any] = dict(
        kernel="gemm_gluon_ws",
        block_m=cfg["BLOCK_M"],
        block_n=cfg["BLOCK_N"],
        block_k=cfg["BK"],
        n_parts=[part for part in (cfg["BN0"], cfg["BN1"], cfg["BN2"]) if part],
        num_stages=cfg["STAGES"],
        epilogue=(
            "fp32 partials, summed in place by each tile slice's last unit"
            if cfg.get("SUM_IN_PLACE")
            else "fp32 partials, summed by a second launch"
            if split > 1
            else "TMA store via shared memory, by halves (one buffer, the two parts in turn)"
            if cfg.get("C_HALVES")
            else "TMA store via shared memory"
            if cfg["C_SMEM"]
            else "stores from registers"
        ),
        group_m=cfg["GROUP_M"],
        tiles=tiles,
        split_k=split,
        num_programs=min(tiles * split, num_sms),
        # units (tiles x K splits) over the SMs' waves: how full the last wave runs
        wave_fill=round(tiles * split / (triton.cdiv(tiles * split, num_sms) * num_sms), 3),
        schedule="ping-pong" if cfg["PINGPONG"] else "cooperative",
        warps="producer 1 (24 regs) + consumers 2 x 4 warps (240 regs)",
        persistent=True,
        tma=True,
        b_layout="col" if b_is_nk else "row",
        scales=(
            (
                "per-tensor, in the sum's launch"
                if split > 1 and not cfg.get("SUM_IN_PLACE")
                else "per-tensor, in the epilogue"
            )
            if has_scale
            else None
        ),
        candidates=[config_name(c) for c in cands],  # tune_timings_ms: what each took
        target=f"{target[0]}:{target[1]}",
        device_name=torch.cuda.get_device_name(a.device),
        **info,
    )
    fn = build(cfg)
    fn()  # compile now, outside any timed window (a pinned config was never launched)
    return GluonMatmulLaunch(out, record, fn)


# ----------------------------------------------------------------------------------------------
# Ahead-of-time compile specs (for `harness inspect` and the AOT tests)
# ----------------------------------------------------------------------------------------------


def aot_specs(
    dtype: torch.dtype = torch.bfloat16,
    b_is_nk: bool = True,
    shapes: tuple[tuple[int, int, int], ...] = (
        (256, 10240, 8192),
        (512, 10240, 8192),  # 128x320 and 256x160: 160 accumulators per consumer thread
        (8192, 8192, 8192),
        (512, 4608, 3584),  # the 144-wide wave tiles (WAVE_PARTS), both schedules
    ),
    split_shapes: tuple[tuple[int, int, int], ...] = (
        (256, 2304, 16384),  # Llama-3.1-405B's fused QKV: its split-K twins only
    ),
) -> list[dict[str, Any]]:
    """Compile specs [{name, fn, signature, constexprs, attrs, options, gluon}] for sm_90: every
    candidate tile of `shapes` on 132 SMs and the split-K twins of `split_shapes` (and their
    in-place twins); the signature is what the JIT builds for real descriptors (their shared
    layouts are part of a Gluon descriptor's type). fp8 e4m3 specs read A and B in fp8, write C
    in FP8_OUT and take fp32 scales (B K-major only)."""
    from triton.experimental.gluon import language as gl

    from .attention_launch import aot_spec
    from .attention_launch import triton_dtype_name as attention_dtype_name
    from .gemm_gluon_kernel import _gemm_ws_kernel

    def triton_dtype_name(t: torch.dtype) -> str:
        # fp8 is not among attention_launch's names: that file is in the attention tuners'
        # TUNE_SOURCES, and an edit there would throw their stored decisions away
        return "fp8e4nv" if t == FP8 else attention_dtype_name(t)

    fp8 = dtype == FP8
    if fp8 and not b_is_nk:
        raise GluonGemmUnsupported("fp8 wgmma reads B K-major only")
    c_dtype = FP8_OUT if fp8 else dtype
    elem = torch.empty((), dtype=dtype).element_size()
    c_elem = torch.empty((), dtype=c_dtype).element_size()
    listed = [c for m, n, k in shapes for c in gluon_gemm_configs(m, n, k, elem, c_elem, 132)]
    split = [
        c
        for m, n, k in split_shapes
        for c in gluon_gemm_configs(m, n, k, elem, c_elem, 132)
        if c.get("SPLIT_K", 1) > 1
    ]
    listed += split + in_place_twins(split)  # the in-place twins, offered or not
    cfgs = {
        (
            c["SLICE_M"],
            c["BN0"],
            c["BN1"],
            c["BN2"],
            c["PINGPONG"],
            c["STAGES"],
            c.get("SPLIT_K"),
            c.get("SUM_IN_PLACE"),
            c.get("C_HALVES"),
        ): c
        for c in listed
    }

    def desc_type(t: torch.dtype, box: list[int]) -> str:
        shared = gl.NVMMASharedLayout.get_default_for(box, _gl_dtype(t))
        return f"tensordesc<{triton_dtype_name(t)}{box},{shared!r}>"

    specs = []
    for cfg in cfgs.values():
        types = {
            arg: desc_type(c_dtype if arg.startswith("c") else dtype, box)
            for arg, box in _boxes(cfg, b_is_nk).items()
        }
        types["c_ptr"] = f"*{triton_dtype_name(c_dtype)}"
        # the split-K workspace (fp32); without a split, C again (never read)
        split = cfg.get("SPLIT_K", 1) > 1
        types["ws_ptr"] = "*fp32" if split else types["c_ptr"]
        types["counter_ptr"] = "*i32" if cfg.get("SUM_IN_PLACE") else types["c_ptr"]
        scale_ty = "*fp32" if fp8 else f"*{triton_dtype_name(dtype)}"
        types |= {arg: scale_ty for arg in ("a_scale_ptr", "b_scale_ptr")}
        layout = "nk" if b_is_nk else "kn"
        name = f"gemm_gluon_{layout}_{triton_dtype_name(dtype)}_{config_name(cfg)}"
        meta = _constexprs(cfg, b_is_nk, has_scale=fp8)
        spec = aot_spec(name, _gemm_ws_kernel, types, meta, {"num_warps": 4})
        specs.append(dict(spec, gluon=True))
    return specs
