"""Search spaces and heuristics for the own Triton GEMM (gemm.py): per-vendor configs, prune, split-K.

Nothing here launches a kernel; these functions only decide *which* kernel instances are worth
compiling and timing for one problem on one device. Tuning itself lives in gemm_tune.py.
"""

from __future__ import annotations

import functools
import os
from dataclasses import asdict, dataclass, replace

import torch

VARIANTS = ("full", "no-tma", "no-pipeline", "not-persistent", "no-splitk", "no-tensor-cores")

# Candidate lists are capped so that tuning one shape stays at a few seconds on the GPU.
MAX_CANDIDATES = 12


def interpreting() -> bool:
    """True when triton.jit functions run in the CPU interpreter (TRITON_INTERPRET=1)."""
    return os.environ.get("TRITON_INTERPRET") == "1"


@dataclass(frozen=True)
class DeviceInfo:
    """What the config search needs to know about one device."""

    backend: str  # "cuda" | "hip" | "interpreter"
    arch: str  # "sm_90", "gfx942", "interpreter"
    capability: int  # major*10+minor on cuda; 0 elsewhere (the interpreter pretends 90)
    name: str
    num_sms: int  # SMs (cuda) or CUs (hip): the width of one persistent wave
    max_shared_mem: int  # bytes of shared memory (LDS) one program may opt in to


@functools.cache
def device_info(device: torch.device | None) -> DeviceInfo:
    """Describe `device`; CPU tensors under the interpreter get a small Hopper-like pretend device."""
    if device is None or device.type == "cpu":
        # Four pretend SMs: small test shapes then exercise both the persistent loop (more tiles
        # than programs) and split-K (fewer tiles than SMs). TMA paths run through the interpreter.
        return DeviceInfo("interpreter", "interpreter", 90, "triton-interpreter", 4, 1 << 20)
    import triton  # noqa: PLC0415 - the driver only exists once a GPU is present

    index = device.index if device.index is not None else torch.cuda.current_device()
    props = torch.cuda.get_device_properties(index)
    drv = triton.runtime.driver.active.utils.get_device_properties(index)
    if torch.version.hip is not None:
        arch = props.gcnArchName.split(":")[0]
        return DeviceInfo(
            "hip", arch, 0, props.name, props.multi_processor_count, drv["max_shared_mem"]
        )
    cap = props.major * 10 + props.minor
    return DeviceInfo(
        "cuda", f"sm_{cap}", cap, props.name, props.multi_processor_count, drv["max_shared_mem"]
    )


@dataclass(frozen=True)
class GemmConfig:
    """One kernel instance: tile shape, launch options and which fast paths are switched on."""

    block_m: int
    block_n: int
    block_k: int
    num_warps: int = 4
    num_stages: int = 3
    group_m: int = 8
    split_k: int = 1
    programs_per_sm: int = 1  # persistent grid = num_sms * programs_per_sm
    tma: bool = True  # requested; gemm.py falls back to pointers when strides forbid it
    persistent: bool = True
    tensor_cores: bool = True
    epilogue_subtile: bool = False
    warp_specialize: bool = False
    # Persistent only: whole tiles in full waves, then the rest shared out by K iterations so
    # every program does the same work (stream_k_plan); split_k stays 1.
    stream_k: bool = False
    # Row-major B only: copy it K-major once per call before the kernel (transposes_b says when).
    transpose_b: bool = False
    # AMD only: MFMA shape (16 -> 16x16 instructions, 32 -> 32x32) and the occupancy hint.
    matrix_instr_nonkdim: int = 0
    waves_per_eu: int = 0

    def as_dict(self) -> dict:
        return asdict(self)


def _c(bm, bn, bk, w, s, **kw) -> GemmConfig:
    return GemmConfig(block_m=bm, block_n=bn, block_k=bk, num_warps=w, num_stages=s, **kw)


def get_cuda_configs(capability: int, elem_bytes: int, m: int) -> list[GemmConfig]:
    """Tensor-core candidates for NVIDIA, ordered by prior preference; M picks the regime.

    On Hopper at 32 < M <= 512 these lists only supply anchors: candidate_configs generates
    and ranks that band (see _mid_candidates)."""
    hopper = capability >= 90
    bk = 128 if elem_bytes == 1 else (32 if elem_bytes == 4 else 64)  # 128-byte K rows for TMA
    if m <= 64:
        # Decode-like: the kernel streams B once, so what matters is bytes in flight per SM:
        # narrow N tiles, deep K stages, split-K to put a program on every SM.
        return [
            _c(64, 128, bk, 4, 4, programs_per_sm=1),  # one warpgroup of wgmma m64
            _c(16, 64, bk * 2, 4, 5, programs_per_sm=2),  # mma.sync m16, two programs per SM
            _c(64, 64, bk * 2, 4, 4, programs_per_sm=2),
            _c(32, 128, bk, 4, 4, programs_per_sm=2),
        ]
    if m <= 512 or not hopper:
        mid = [
            _c(128, 128, bk, 8, 4),  # on sm_80, 4 warps (128 fp32 acc regs each) spill
            _c(64, 128, bk, 4, 4, programs_per_sm=2),
            _c(128, 256, bk, 8, 3),
            _c(64, 256, bk, 4, 4),
        ]
        if not hopper:
            # Ampere/Ada: no TMA/wgmma; cp.async pipelines, 3-4 stages in 164 KB (A100) or 99 KB
            # (Ada) of shared memory; keep_config drops what does not fit.
            mid += [_c(256, 128, bk // 2 if bk > 32 else bk, 8, 3), _c(128, 64, bk, 4, 4)]
        return mid
    # Large Hopper problems: 128x256 tiles with two consumer warpgroups (64 rows of wgmma each)
    # are the shape that keeps the tensor cores fed from 227 KB of shared memory.
    large = [
        _c(128, 256, bk, 8, 3),
        _c(128, 256, bk, 8, 4, epilogue_subtile=True),  # half-width C staging frees a 4th stage
        _c(256, 128, bk, 8, 3),
        _c(128, 128, bk, 8, 4),
        _c(128, 128, bk, 4, 4),
    ]
    if capability >= 100:
        # Producer/consumer warp partitions. Triton 3.6 only partitions loops on Blackwell; on
        # sm_90 the flag compiles to the same code (checked in the AOT PTX), so it is not timed.
        large.insert(1, _c(128, 256, bk, 8, 3, warp_specialize=True))
    return large


def get_hip_configs(arch: str, elem_bytes: int, m: int) -> list[GemmConfig]:
    """Tensor-core (MFMA) candidates for AMD CDNA (gfx90a/gfx942); 64 KB LDS, two-stage pipes."""
    bk = 32 if elem_bytes == 4 else 64  # e4m3 is emulated before CDNA4: no 128-wide fp8 K
    # CDNA3's stream pipeliner wants num_stages=2 (one tile in LDS, one in registers);
    # 16x16 MFMAs (nonkdim=16) give better occupancy than 32x32 on skinny tiles.
    hip = dict(matrix_instr_nonkdim=16)
    if m <= 64:
        return [
            _c(16, 64, bk * 2, 4, 2, programs_per_sm=2, **hip),
            _c(32, 64, bk * 2, 4, 2, programs_per_sm=2, **hip),
            _c(64, 128, bk, 4, 2, **hip),
        ]
    large = [
        _c(256, 128, bk, 8, 2, waves_per_eu=2, **hip),
        _c(128, 256, bk, 8, 2, **hip),
        _c(128, 128, bk, 4, 2, waves_per_eu=2, **hip),
        _c(128, 64, bk, 4, 2, programs_per_sm=2, **hip),
        _c(64, 128, bk, 4, 2, programs_per_sm=2, **hip),
    ]
    if elem_bytes == 2:
        # 256x256 holds 128 fp32 accumulators per lane: it spills a little (AOT: 7-60 VGPRs)
        # but can still win on large 16-bit problems; fp8 (emulated) and fp32 spill far more.
        large.insert(1, _c(256, 256, bk, 8, 2, **hip))
    return large


def get_fma_configs(backend: str) -> list[GemmConfig]:
    """No-tensor-core candidates: tiles small enough that the [BM, BN, BK] product fits registers."""
    # Each thread owns BM*BN/threads outputs and does BK FFMAs (v_fma on AMD) per output per K
    # step; 64x64x8 on 8 warps is 128 FFMAs per step per thread at <=173 registers, no spills on
    # sm_80/sm_90/gfx942 (AOT ptxas -v), where 4 warps would need 255 and spill fp32 on sm_80.
    del backend  # same shapes for every vendor: the rung is about the math units, not tiling
    return [
        _c(64, 64, 8, 8, 3, tensor_cores=False),
        _c(64, 64, 4, 4, 3, tensor_cores=False),
        _c(32, 64, 8, 4, 3, tensor_cores=False, programs_per_sm=2),
    ]


def interpreter_config(m: int, elem_bytes: int) -> GemmConfig:
    """The one deterministic config used under TRITON_INTERPRET: small tiles, every path on."""
    return _c(16, 32, 16 if elem_bytes > 1 else 32, 4, 2, group_m=2)


def shared_mem_bytes(cfg: GemmConfig, in_bytes: int, out_bytes: int, backend: str = "cuda") -> int:
    """Estimate of shared memory (LDS on AMD), checked against metadata.shared of AOT builds.

    NVIDIA: num_stages A/B buffers, one 8-byte mbarrier per stage, plus the C tile staged by the
    epilogue (halved by subtiling; the pointer epilogue's layout conversion can need as much).
    Split-K stores its fp32 partial straight from registers: no C tile (sm_90 AOT: 128x256x64
    s3 split 3 uses 147480 bytes = 3 x 49152 + 24). AMD's stream pipeliner keeps one stage in
    registers, so num_stages - 1 buffers, and the epilogue reuses them."""
    ab = (cfg.block_m * cfg.block_k + cfg.block_k * cfg.block_n) * in_bytes
    if backend == "hip":
        return max(cfg.num_stages - 1, 1) * ab
    c = cfg.block_m * cfg.block_n * out_bytes // (2 if cfg.epilogue_subtile else 1)
    if cfg.split_k > 1:
        c = 0
    return max(cfg.num_stages, 1) * (ab + 8) + c


def keep_config(
    cfg: GemmConfig, m: int, n: int, k: int, in_bytes: int, out_bytes: int, dev: DeviceInfo
) -> bool:
    """Prune predicate: drop tiles far larger than the problem and ones that cannot fit smem."""

    def pow2_at_least(x: int, floor: int) -> int:
        return max(floor, 1 << max(x - 1, 0).bit_length())

    if cfg.block_m > pow2_at_least(m, 64 if cfg.tensor_cores else 16):
        return False
    if cfg.block_n > pow2_at_least(n, 16) or cfg.block_k > pow2_at_least(k, 16):
        return False
    if cfg.split_k > 1 and cfg.split_k * 2 > -(-k // cfg.block_k):
        return False  # every split should own at least two K tiles
    return shared_mem_bytes(cfg, in_bytes, out_bytes, dev.backend) <= dev.max_shared_mem


# Split-K reduction: fp32 loads one thread may hold in flight across all partials of a chunk.
# The accumulator is dead by then (already stored as this unit's partial), so that much of the
# register file is free; sm_90 AOT of the split-K configs shows no spills at this budget.
REDUCE_REGS = 64
REDUCE_MIN_ELEMS = 2048  # the chunk before the budget existed


def splitk_reduce_rows(block_m: int, block_n: int, split_k: int, num_warps: int) -> int:
    """Rows per chunk of the split-K reduction: the largest power of two whose SPLIT_K partial
    chunks fit REDUCE_REGS loads per thread (at least REDUCE_MIN_ELEMS elements, at most the
    tile). Each chunk is one L2 round trip on the last unit's critical path, so fewer, wider
    chunks shorten the tail: 128x256 on 8 warps at split 3 walks 8 chunks, not 16."""
    budget = max(REDUCE_REGS * 32 * num_warps // max(split_k, 1), REDUCE_MIN_ELEMS)
    rows = max(budget // block_n, 1)
    return min(block_m, 1 << (rows.bit_length() - 1))


@dataclass(frozen=True)
class StreamKPlan:
    """How a stream-K launch divides the work (see gemm.py's _stream_k_share)."""

    num_programs: int
    dp_tiles: int  # whole tiles, in full waves of num_programs
    sk_tiles: int  # tiles whose K iterations are shared out evenly
    max_parts: int  # most programs sharing one tile (workspace parts per tile)
    shared_tiles: int  # sk tiles touched by more than one program (those write partials)


def stream_k_plan(tiles: int, k_tiles: int, programs: int) -> StreamKPlan:
    """Split `tiles` output tiles of `k_tiles` iterations over a persistent grid of `programs`.

    With at least one full wave, the last full wave and the partial one are shared out (each
    program then covers 1-2 tiles' worth of iterations, so partial tiles stay few); with less
    than a wave, all of them. The first and last program of a tile follow from where each
    program's range starts: p * total // programs."""
    full, rest = divmod(tiles, programs)
    sk = 0 if rest == 0 else (tiles if full == 0 else rest + programs)
    total = sk * k_tiles
    programs = min(programs, total) if full == 0 else programs
    max_parts, shared = 1, 0
    for t in range(sk):
        first = -(-(t * k_tiles + 1) * programs // total) - 1
        last = -(-(t + 1) * k_tiles * programs // total) - 1
        max_parts = max(max_parts, last - first + 1)
        shared += last > first
    return StreamKPlan(programs, tiles - sk, sk, max_parts, shared)


def split_k_choices(cfg: GemmConfig, m: int, n: int, k: int, dev: DeviceInfo) -> list[int]:
    """Split factors worth timing: 1, and the power of two that fills one wave of programs."""
    tiles = -(-m // cfg.block_m) * -(-n // cfg.block_n)
    wave = dev.num_sms * cfg.programs_per_sm
    if tiles * 2 > wave:
        return [1]  # enough output tiles already; split-K would only add partial traffic
    k_tiles = -(-k // cfg.block_k)
    split = 1
    while split * 2 * tiles <= wave and split * 2 <= 16 and split * 4 <= k_tiles:
        split *= 2
    return [1, split] if split > 1 else [1]


STREAM_K_BELOW_FILL = 0.9  # offer stream-K when whole tiles leave more than 10% of a wave idle
STREAM_K_CANDIDATES = 2  # stream-K configs added to a mid-M list (beyond MAX_CANDIDATES)


def offers_stream_k(cfg: GemmConfig, m: int, n: int, k: int, dev: DeviceInfo) -> bool:
    """Whether a stream-K twin of `cfg` is worth timing: a persistent split-1 config whose whole
    tiles leave SMs idle in the last wave, with K iterations to share (>= 2 per program)."""
    if not cfg.persistent or cfg.split_k != 1 or cfg.stream_k or not cfg.tensor_cores:
        return False
    tiles = -(-m // cfg.block_m) * -(-n // cfg.block_n)
    wave = dev.num_sms * cfg.programs_per_sm
    fill = tiles / (-(-tiles // wave) * wave)
    return fill < STREAM_K_BELOW_FILL and tiles * -(-k // cfg.block_k) >= 2 * wave


def apply_variant(cfg: GemmConfig, variant: str) -> GemmConfig:
    """Remove the one feature a ladder rung names (see the table at the top of gemm.py)."""
    if variant == "no-tma":
        return replace(cfg, tma=False)
    if variant == "no-pipeline":
        # Warp specialization is itself a producer/consumer pipeline, so it goes with the stages.
        return replace(cfg, num_stages=1, warp_specialize=False)
    if variant == "not-persistent":
        return replace(cfg, persistent=False, programs_per_sm=1, stream_k=False)
    if variant == "no-splitk":  # stream-K splits tiles' K ranges too
        return replace(cfg, split_k=1, stream_k=False)
    return cfg


def candidate_configs(
    variant: str, m: int, n: int, k: int, in_bytes: int, out_bytes: int, dev: DeviceInfo
) -> list[GemmConfig]:
    """The configs prepare_matmul times for one problem on one device (at most MAX_CANDIDATES).

    Hopper at 32 < M <= 512 gets a generated space ranked by a cost model (see below); every
    other case gets the fixed per-vendor lists above, with split-K from split_k_choices."""
    if variant not in VARIANTS:
        raise ValueError(f"unknown variant {variant!r}; expected one of {VARIANTS}")
    if variant != "no-tensor-cores" and uses_mid_model(m, dev):
        return list(_mid_candidates(variant, m, n, k, in_bytes, out_bytes, dev))
    return _listed_candidates(variant, m, n, k, in_bytes, out_bytes, dev)


def _listed_candidates(
    variant: str, m: int, n: int, k: int, in_bytes: int, out_bytes: int, dev: DeviceInfo
) -> list[GemmConfig]:
    """Candidates from the fixed lists, in list order (split 1 before its split-K twin)."""
    if variant == "no-tensor-cores":
        base = get_fma_configs(dev.backend)
    elif dev.backend == "hip":
        base = get_hip_configs(dev.arch, in_bytes, m)
    else:
        base = get_cuda_configs(dev.capability, in_bytes, m)
    if dev.backend == "hip" or dev.capability < 90:
        # TMA and wgmma warp specialization are Hopper+ features.
        base = [replace(c, tma=False, warp_specialize=False, epilogue_subtile=False) for c in base]
    out: list[GemmConfig] = []
    for cfg in base:
        twins = [replace(cfg, split_k=split) for split in split_k_choices(cfg, m, n, k, dev)]
        if offers_stream_k(cfg, m, n, k, dev):
            twins.append(replace(cfg, stream_k=True))
        for twin in twins:
            cand = apply_variant(twin, variant)
            if cand.split_k > 1 or cand.stream_k:
                cand = replace(cand, warp_specialize=False, epilogue_subtile=False)
            if cand not in out and keep_config(cand, m, n, k, in_bytes, out_bytes, dev):
                out.append(cand)
    if not out:  # everything pruned (tiny problem): fall back to the smallest tile
        smallest = min(base, key=lambda c: c.block_m * c.block_n * c.block_k)
        out = [apply_variant(smallest, variant)]
    # Stream-K twins go last and add at most STREAM_K_CANDIDATES (see _mid_candidates).
    plain = [c for c in out if not c.stream_k][:MAX_CANDIDATES]
    return plain + [c for c in out if c.stream_k][:STREAM_K_CANDIDATES]


# ----------------------------------------------------------------------------------------------
# Hopper, 32 < M <= 512: a generated search space ranked by a small cost model.
#
# Between decode (M <= 32: stream the weights) and large M (>= 1024: 128x256 tiles at full
# tensor-core rate, near cuBLAS) the best kernel depends on N and K through effects that a fixed
# list of 4-8 configs cannot cover (H200 measurements: 0.75-0.85 of cuBLAS in this band):
#  * Wave quantization. The persistent grid is one program per SM; N=10240 in 128-wide tiles
#    gives 80 (M=64, 64-row tiles) or 160 (M=256, 128-row tiles) equal units on 132 SMs, so 39%
#    of the SMs idle for the last round. Split-K by any integer (80 tiles x 3 = 240 units, 91% of two waves) or another
#    BLOCK_N (10240 / 64 = 160, / 256 = 40 x 3 = 120) changes the unit count.
#  * Bytes per SM. Up to M ~ 165 FLOP per weight byte (the H200 ridge: ~700 TFLOP/s bf16 at
#    its power cap over ~4.3 TB/s) the kernel streams B. One SM only pulls (stages - 1) tiles
#    per memory latency (Little's law), so deep pipelines are what reach HBM bandwidth; and
#    every unit also loads its A rows (re-read from L2 by each of the N/BLOCK_N column tiles)
#    and its B columns (re-read by each of the M/BLOCK_M row tiles) through the same L2->SM
#    port: BLOCK_M >= M (128, or 256 on two warpgroups) reads each weight once.
#  * Split-K's price in this kernel: an fp32 partial per unit, and for the last unit of a tile
#    a reduction that walks the tile in chunks (splitk_reduce_rows), one L2 round trip each
#    (the chunk loop is not unrolled; the split loop inside it is), plus a pipeline refill per
#    unit (the split-K loop is not flattened).
#  * Tensor-core rate per tile. wgmma m64nNk16 reads both operands from shared memory (128 B
#    per clock per SM against 4096 bf16 FLOP per clock), so narrow N starves it: relative rate
#    ~ (64N / (64 + N)) / 51.2, i.e. N=64: 0.63, 128: 0.83, 256: 1; a single warpgroup alone on
#    an SM (4 warps, one program) has no second warpgroup to issue while it waits: x 0.9.
#
# estimate_seconds() turns these into a time for the busiest SM and for machine-wide traffic;
# _mid_candidates() keeps the best config of each tile shape, then variations of those shapes,
# and appends the old fixed list's picks as anchors, MAX_CANDIDATES in all. The model only has
# to rank: the tuner times every survivor. Its constants are H200 figures (the ranking depends on
# their ratios: FLOP/s per SM vs HBM and L2 bytes/s vs the loaded latency); the two L2 bandwidths
# and the L2 latency are assumptions, not measurements.
# ----------------------------------------------------------------------------------------------

MID_M_RANGE = (32, 512)  # exclusive, inclusive: decode lists below, 128x256-first lists above
_SM_FLOPS = 700e12 / 132  # dense bf16 per SM, sustained at the power cap (x2 fp8, /2 tf32)
_HBM_BW = 4.3e12  # bytes/s
_L2_BW = 12e12  # L2 -> SMs, all SMs together (bytes/s; assumed ~3x HBM)
_SM_LOAD_BW = 150e9  # L2 -> one SM (bytes/s; assumed ~64 B/clock)
_L2_BYTES = 50 << 20  # split-K partials beyond this are written back to HBM
# Loaded HBM latency: 80 programs of 64x128x64 x 4 stages (3 x 24 KB in flight each) streamed
# M=64 N=10240 K=8192 at ~58 GB/s per SM on the H200 -> 72 KB / 58 GB/s ~ 1.25 us.
_MEM_LATENCY = 1.25e-6
_L2_LATENCY = 0.3e-6  # one split-K reduction chunk: L2 loads of every split, then its store
_ACC_REGS = 128  # fp32 accumulators per thread beyond which ptxas spills (with addresses etc.)


def uses_mid_model(m: int, dev: DeviceInfo) -> bool:
    """Whether candidate_configs generates and ranks (Hopper, 32 < M <= 512) for this problem."""
    lo, hi = MID_M_RANGE
    return dev.backend == "cuda" and dev.capability // 10 == 9 and lo < m <= hi


def _mma_efficiency(cfg: GemmConfig, resident: int) -> float:
    """Fraction of the SM's tensor-core peak one tile shape sustains (see the notes above)."""
    n = cfg.block_n  # every generated tile gives each warpgroup >= 64 rows: wgmma m64nBN
    rate = min(1.0, (64 * n / (64 + n)) / 51.2)
    if cfg.num_warps == 4 and resident == 1:
        rate *= 0.9
    return rate


def estimate_seconds(
    cfg: GemmConfig, m: int, n: int, k: int, in_bytes: int, out_bytes: int, dev: DeviceInfo
) -> float:
    """Modelled run time of `cfg` (Hopper, TMA + wgmma kernel); only its ranking is used."""
    sms = dev.num_sms
    bm, bn, bk, split = cfg.block_m, cfg.block_n, cfg.block_k, cfg.split_k
    tiles_m, tiles_n = -(-m // bm), -(-n // bn)
    units = tiles_m * tiles_n * split
    k_tiles = -(-k // bk)
    k_per_unit = -(-k_tiles // split)
    # Programs that fit on one SM at once (shared memory, 1 KB reserved per block; threads).
    smem = shared_mem_bytes(cfg, in_bytes, out_bytes) + 1024
    fit = max(1, min((dev.max_shared_mem + 1024) // smem, 2048 // (32 * cfg.num_warps)))
    if cfg.persistent:  # programs beyond `fit` per SM wait for a whole earlier program
        programs, resident_cap = min(units, sms * cfg.programs_per_sm), cfg.programs_per_sm
        resident_cap = min(resident_cap, fit)
    else:  # one CTA per unit
        programs, resident_cap = units, fit
    resident = max(1, min(resident_cap, -(-programs // sms)))
    sm_units = -(-units // sms)  # units of the busiest SM (co-resident programs share it)
    sm_k_tiles = sm_units * k_per_unit  # K iterations the busiest SM runs
    # Pipeline fills: once for the flattened persistent loop, else once per unit.
    fills = 1 if cfg.persistent and split == 1 else -(-sm_units // resident)
    parts, sm_partials, sm_reduces, partials = split, 0, 0, 0
    if split > 1:
        sm_partials, sm_reduces, partials = sm_units, -(-sm_units // split), m * n * 4 * split
    if cfg.stream_k:
        plan = stream_k_plan(tiles_m * tiles_n, k_tiles, sms * cfg.programs_per_sm)
        pps = -(-plan.num_programs // sms)  # programs of the busiest SM
        share = -(-plan.sk_tiles * k_tiles // plan.num_programs)  # iterations per program
        segments = -(-share // k_tiles) + 1  # tiles one share touches, at most
        sm_k_tiles = pps * (plan.dp_tiles // plan.num_programs * k_tiles + share)
        fills = 1 + pps * segments  # the data-parallel loop, then one refill per segment
        parts = plan.max_parts
        # A shared tile costs each of its programs a partial store and one of them a reduce.
        sm_partials = -(-2 * plan.shared_tiles // sms)
        sm_reduces = -(-plan.shared_tiles // sms)
        partials = plan.shared_tiles * plan.max_parts * bm * bn * 4

    flops = 2 * bm * bn * bk
    rate = _SM_FLOPS * {1: 2.0, 2: 1.0}.get(in_bytes, 0.5) * _mma_efficiency(cfg, resident)
    t_math = sm_k_tiles * flops / rate
    stage = (bm + bn) * bk * in_bytes
    in_flight = resident * max(cfg.num_stages - 1, 1) * stage
    t_load = sm_k_tiles * stage / min(_SM_LOAD_BW, in_flight / _MEM_LATENCY)
    busy = t_math + t_load if cfg.num_stages <= 1 else _soft_max(t_math, t_load)

    overhead = fills * _MEM_LATENCY
    if sm_partials:
        tile_f32 = bm * bn * 4
        chunks = bm // splitk_reduce_rows(bm, bn, parts, cfg.num_warps)
        store = _L2_LATENCY + tile_f32 / _SM_LOAD_BW  # + barrier and acq_rel atomic
        reduce = chunks * _L2_LATENCY + parts * tile_f32 / _SM_LOAD_BW
        overhead += (sm_partials * store + sm_reduces * reduce) / resident

    a_bytes, b_bytes, c_bytes = m * k * in_bytes, n * k * in_bytes, m * n * out_bytes
    hbm = a_bytes + b_bytes + c_bytes + (partials if partials > _L2_BYTES else 0)
    l2 = a_bytes * tiles_n + b_bytes * tiles_m + 2 * partials + c_bytes
    return _soft_max(busy + overhead, hbm / _HBM_BW, l2 / _L2_BW)


def _soft_max(*times: float) -> float:
    """Overlapped limits (math vs loads, one SM vs the whole memory system) add up a little near
    a tie: nothing saturates two resources at once. A 4-norm: = max when one term dominates,
    1.19 x max for two equal ones; it also ranks configs that all hit HBM bandwidth by their
    headroom instead of leaving them tied."""
    return sum(t**4 for t in times) ** 0.25


def _fits_sm(cfg: GemmConfig, in_bytes: int, out_bytes: int, dev: DeviceInfo) -> bool:
    """programs_per_sm programs must be co-resident, or the extra ones just queue: shared memory
    (1 KB reserved per block on top of the per-block opt-in limit) and registers (<= 256
    threads at <= 255 registers each fit the 64K register file)."""
    per_block = shared_mem_bytes(cfg, in_bytes, out_bytes) + 1024
    threads = 32 * cfg.num_warps * cfg.programs_per_sm
    return cfg.programs_per_sm * per_block <= dev.max_shared_mem + 1024 and threads <= 256


def _mid_space(
    variant: str, m: int, n: int, k: int, in_bytes: int, out_bytes: int, dev: DeviceInfo
) -> list[GemmConfig]:
    """Every config worth modelling: BLOCK_M 64/128/256 (not above M's power of two), BLOCK_N
    64/128/256, BLOCK_K of 128 and 256 bytes, 4 or 8 warps (<= 128 fp32 accumulators per
    thread), 3-8 stages, one or two programs per SM, split-K 1-16, C stored whole or in halves
    (split 1: split-K writes its partials from registers)."""
    bk0 = max(128 // in_bytes, 16)
    k_tiles = -(-k // bk0)
    splits = [1] if variant == "no-splitk" else range(1, 17)
    stages = [1] if variant == "no-pipeline" else range(3, 9)
    out = []
    for bm in (64, 128, 256):
        for bn in (64, 128, 256):
            # One warpgroup (4 warps) per 64 rows, two for 256 (each 128 rows), either for 128.
            for warps in {64: (4,), 128: (4, 8), 256: (8,)}[bm]:
                if bm * bn // (32 * warps) > _ACC_REGS:
                    continue
                for bk in (bk0, 2 * bk0):
                    for pps in (1, 2) if warps == 4 and variant != "not-persistent" else (1,):
                        for split in splits:
                            if split > 1 and split * 2 > k_tiles * bk0 // bk:
                                break
                            for s in stages:
                                cfg = _c(bm, bn, bk, warps, s, split_k=split, programs_per_sm=pps)
                                cfg = apply_variant(cfg, variant)
                                # Storing C in two halves frees half its staging tile: on
                                # 128x256 that is the 4th stage (as in the large-M list).
                                subtile = split == 1 and cfg.tma and bn >= 128
                                shapes = [
                                    replace(cfg, epilogue_subtile=sub)
                                    for sub in ((False, True) if subtile else (False,))
                                ]
                                streamed = apply_variant(replace(cfg, stream_k=True), variant)
                                if streamed.stream_k and offers_stream_k(cfg, m, n, k, dev):
                                    shapes.append(streamed)
                                for c in shapes:
                                    if keep_config(
                                        c, m, n, k, in_bytes, out_bytes, dev
                                    ) and _fits_sm(c, in_bytes, out_bytes, dev):
                                        out.append(c)
    return out


@functools.lru_cache(maxsize=256)
def _mid_candidates(
    variant: str, m: int, n: int, k: int, in_bytes: int, out_bytes: int, dev: DeviceInfo
) -> tuple[GemmConfig, ...]:
    """Rank _mid_space by estimate_seconds; keep a diverse best few, then two anchors.

    Per (BLOCK_M, BLOCK_N, BLOCK_K, warps, programs/SM, split) only one stage count survives:
    the fewest within 1% of that key's best (deeper pipelines only pay while memory-bound).
    Configs modelled at more than 2x the best are dropped. Then, in model order:
      1. the best config of each tile shape (BLOCK_M x BLOCK_N), up to 7 shapes, so that one
         mis-modelled effect cannot fill the list with near-copies of one shape;
      2. if none of those covers all of M (up to 256 rows), the best one that does;
      3. per chosen shape, the best config differing in warps, programs per SM, split-K on/off
         or BLOCK_K (the effects the model is least sure of); then whatever ranks next;
    up to MAX_CANDIDATES minus the anchors, which are appended verbatim from the old fixed list:
    its model-best entry, its default (what tune=False ran) and its most frequent H200 winner
    (64x128 on two programs per SM, with the old split), so the tuner always has the old choice
    to beat. The first entry is the model's best: what tune=False runs now."""
    listed = _listed_candidates(variant, m, n, k, in_bytes, out_bytes, dev)
    listed = [c for c in listed if not c.stream_k]  # anchors are the old list's choices
    best: dict[tuple, tuple[float, GemmConfig]] = {}
    for cfg in _mid_space(variant, m, n, k, in_bytes, out_bytes, dev):
        t = estimate_seconds(cfg, m, n, k, in_bytes, out_bytes, dev)
        key = (cfg.block_m, cfg.block_n, cfg.block_k, cfg.num_warps, cfg.programs_per_sm)
        key += (cfg.split_k, cfg.stream_k)
        held = best.get(key)
        if held is None or t < held[0] * 0.99:
            best[key] = (t, cfg)
    if not best:  # N or K below the smallest generated tile: the fixed lists handle it
        return tuple(listed)
    timed = sorted(best.values(), key=lambda tc: tc[0])
    # Stream-K configs ride along (STREAM_K_CANDIDATES of them, distinct tiles, model order)
    # instead of competing for the list: they are not yet measured on hardware, so the rest
    # of the list, and the untuned default, stay what they were.
    streamed = [c for t, c in timed if c.stream_k and t <= 2.0 * timed[0][0]]
    timed = [(t, c) for t, c in timed if not c.stream_k]
    extra: list[GemmConfig] = []
    for cfg in streamed:
        if len(extra) < STREAM_K_CANDIDATES and all(
            (c.block_m, c.block_n) != (cfg.block_m, cfg.block_n) for c in extra
        ):
            extra.append(cfg)
    anchors = [min(listed, key=lambda c: estimate_seconds(c, m, n, k, in_bytes, out_bytes, dev))]
    # 64x128, 4 warps, two programs per SM won 7 of the 11 weak H200 shapes under the old list.
    old_winner = [c for c in listed if (c.block_m, c.block_n, c.programs_per_sm) == (64, 128, 2)]
    for cfg in [listed[0]] + old_winner[-1:]:
        if cfg not in anchors:
            anchors.append(cfg)
    ranked = [c for t, c in timed if t <= 2.0 * timed[0][0] and c not in anchors]
    picked: list[GemmConfig] = []

    def take(cfg: GemmConfig) -> None:
        if cfg not in picked and len(picked) < MAX_CANDIDATES - len(anchors):
            picked.append(cfg)

    def tile(c: GemmConfig) -> tuple:
        return c.block_m, c.block_n

    def variety(c: GemmConfig) -> tuple:
        return tile(c), c.num_warps, c.programs_per_sm, c.split_k > 1 or c.stream_k, c.block_k

    for cfg in ranked:  # 1.
        shapes = {tile(c) for c in picked}
        if tile(cfg) not in shapes and len(shapes) < 7:
            take(cfg)
    whole_m = [c for c in ranked if c.block_m >= min(m, 256)]
    if whole_m and not any(c.block_m >= min(m, 256) for c in picked):  # 2.
        take(whole_m[0])
    shapes = {tile(c) for c in picked}
    for cfg in ranked:  # 3.
        if tile(cfg) in shapes and variety(cfg) not in {variety(c) for c in picked}:
            take(cfg)
    for cfg in ranked:
        take(cfg)
    order = {c: i for i, c in enumerate(ranked)}
    picked.sort(key=lambda c: order[c])
    return tuple(picked + anchors + extra)


# ----------------------------------------------------------------------------------------------
# Problem checks and per-problem feasibility (which fast paths the operands allow).
# ----------------------------------------------------------------------------------------------

IN_DTYPES = (torch.float16, torch.bfloat16, torch.float32, torch.float8_e4m3fn)
OUT_DTYPES = (torch.float16, torch.bfloat16, torch.float32)


@dataclass(frozen=True)
class Problem:
    """Validated operands of one GEMM; `b_is_nk` means B is the transpose of a row-major [N, K]."""

    a: torch.Tensor  # [M, K], unit column stride
    b: torch.Tensor  # [K, N], row-major or column-major
    out_dtype: torch.dtype
    a_scale: torch.Tensor | None  # fp8 only: 1-element float32 on a's device
    b_scale: torch.Tensor | None
    input_precision: str  # what tl.dot receives: "tf32" | "ieee"
    b_is_nk: bool

    @property
    def mnk(self) -> tuple[int, int, int]:
        return self.a.shape[0], self.b.shape[1], self.a.shape[1]

    @property
    def out_bytes(self) -> int:
        return torch.empty((), dtype=self.out_dtype).element_size()


def check_problem(
    a: torch.Tensor,
    b: torch.Tensor,
    out_dtype: torch.dtype | None,
    a_scale: torch.Tensor | None,
    b_scale: torch.Tensor | None,
    fp32_precision: str,
    dev: DeviceInfo,
) -> Problem:
    """Validate shapes, layouts and dtypes; raise ValueError with the reason otherwise."""
    if a.dim() != 2 or b.dim() != 2 or a.shape[1] != b.shape[0]:
        raise ValueError(f"need a [M, K] and b [K, N]; got {tuple(a.shape)} and {tuple(b.shape)}")
    if a.dtype != b.dtype or a.dtype not in IN_DTYPES:
        raise ValueError(f"a and b must share one of {IN_DTYPES}; got {a.dtype}, {b.dtype}")
    if a.device != b.device:
        raise ValueError(f"a on {a.device} but b on {b.device}")
    if a.numel() == 0 or b.numel() == 0:
        raise ValueError(f"empty GEMM {tuple(a.shape)} @ {tuple(b.shape)}")
    if a.stride(1) != 1 and a.shape[1] > 1:
        raise ValueError(f"a must be row-major (unit column stride); strides {a.stride()}")
    b_row = b.stride(1) == 1 or b.shape[1] == 1
    b_col = b.stride(0) == 1 or b.shape[0] == 1
    if not (b_row or b_col):
        raise ValueError(f"b must be row- or column-major; strides {b.stride()}")
    b_is_nk = b_col and not (b_row and b.stride(1) == 1)
    is_fp8 = a.dtype == torch.float8_e4m3fn
    if is_fp8:
        for name, s in (("a_scale", a_scale), ("b_scale", b_scale)):
            if s is None or s.numel() != 1 or s.dtype != torch.float32 or s.device != a.device:
                raise ValueError(f"fp8 needs {name}: a 1-element float32 tensor on {a.device}")
        a_scale, b_scale = a_scale.reshape(1), b_scale.reshape(1)
        if dev.backend == "cuda" and dev.capability < 89:
            raise ValueError(f"float8_e4m3fn needs sm_89+ (Ada/Hopper); device is {dev.arch}")
    elif a_scale is not None or b_scale is not None:
        raise ValueError("a_scale/b_scale are only for float8_e4m3fn inputs")
    out_dtype = out_dtype or (torch.bfloat16 if is_fp8 else a.dtype)
    if out_dtype not in OUT_DTYPES:
        raise ValueError(f"out_dtype must be one of {OUT_DTYPES}; got {out_dtype}")
    if fp32_precision not in ("tf32", "ieee"):
        raise ValueError(f"fp32_precision must be 'tf32' or 'ieee'; got {fp32_precision!r}")
    # AMD's Triton has no tf32 dot (CDNA3's xf32 is not exposed): fp32 runs as fp32 MFMA there.
    tf32 = a.dtype == torch.float32 and fp32_precision == "tf32" and dev.backend != "hip"
    for name, numel in (("a", a.numel()), ("b", b.numel()), ("c", a.shape[0] * b.shape[1])):
        if numel >= 2**31:
            raise ValueError(f"{name} has >= 2**31 elements; 32-bit offsets would overflow")
    return Problem(a, b, out_dtype, a_scale, b_scale, "tf32" if tf32 else "ieee", b_is_nk)


def tma_support(p: Problem, cfg: GemmConfig, dev: DeviceInfo) -> tuple[bool, bool, str]:
    """(load via TMA, store via TMA, reason for any fallback). TMA needs sm_90+, 16-byte aligned
    bases and row strides, and boxes whose inner dimension spans at least 16 bytes."""
    if not cfg.tma:
        return False, False, "disabled by config"
    if dev.capability < 90:
        return False, False, f"no TMA on {dev.arch}"
    m, n, k = p.mnk
    ebytes = p.a.element_size()
    inner_b = cfg.block_k if p.b_is_nk else cfg.block_n
    b_row_stride = p.b.stride(1) if p.b_is_nk else p.b.stride(0)
    reasons = []
    if p.a.data_ptr() % 16 or (p.a.stride(0) * ebytes) % 16 or cfg.block_k * ebytes < 16:
        reasons.append("A base/row stride not 16-byte aligned (K*elem % 16) or box too narrow")
    if p.b.data_ptr() % 16 or (b_row_stride * ebytes) % 16 or inner_b * ebytes < 16:
        reasons.append("B base/row stride not 16-byte aligned or box too narrow")
    load_ok = not reasons
    store_n = cfg.block_n // 2 if cfg.epilogue_subtile else cfg.block_n
    store_ok = load_ok and (n * p.out_bytes) % 16 == 0 and store_n * p.out_bytes >= 16
    if load_ok and not store_ok:
        reasons.append("C row stride (N*elem) not 16-byte aligned: pointer stores")
    return load_ok, store_ok, "; ".join(reasons)


def transposes_b(p: Problem, dev: DeviceInfo, variant: str) -> bool:
    """Whether to also time configs that copy a row-major B K-major first: tf32 on Hopper, where
    wgmma takes 32-bit B only K-major (16-bit types transpose in the descriptor for free). On the
    H200 the own kernel ran tf32 nn problems at 19-20% of the tf32 peak; the in-kernel re-layout
    is the suspected cause (seen in the AOT code, not yet confirmed by a measurement)."""
    return (
        p.input_precision == "tf32"
        and not p.b_is_nk
        and dev.backend == "cuda"
        and dev.capability >= 90
        and variant != "no-tensor-cores"
    )


def interpreter_pick(variant: str, m: int, n: int, k: int, in_bytes: int) -> GemmConfig:
    """Deterministic small config for TRITON_INTERPRET, with split-K when the heuristic wants it."""
    dev = device_info(None)
    cfg = interpreter_config(m, in_bytes)
    if variant == "no-tensor-cores":
        cfg = replace(cfg, block_k=16 if in_bytes == 1 else 8, tensor_cores=False)
    cfg = replace(cfg, split_k=split_k_choices(cfg, m, n, k, dev)[-1])
    return apply_variant(cfg, variant)
