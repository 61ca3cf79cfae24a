"""Cost model of the own Triton GEMM on Hopper at mid M (32 < M <= 512): a modelled run time per
config, used only to rank the generated space of gemm_candidates.py; the tuner times the rest.

The notes below say which effects it models and where its constants come from.
"""

from __future__ import annotations

from .gemm_configs import GemmConfig, shared_mem_bytes
from .gemm_split import splitk_reduce_rows, stream_k_plan
from .gemm_target import KernelTarget

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
#    unit (the split-K loop is not flattened). With reduce_apart the units only store, and a
#    second launch reads every partial over all SMs: a launch gap plus the partials at L2 rate.
#  * Tensor-core rate per tile. wgmma m64nNk16 reads both operands from shared memory (128 B
#    per clock per SM against 4096 bf16 FLOP per clock), so narrow N starves it: relative rate
#    ~ (64N / (64 + N)) / 51.2, i.e. N=64: 0.63, 128: 0.83, 256: 1; a single warpgroup alone on
#    an SM (4 warps, one program) has no second warpgroup to issue while it waits: x 0.9.
#
# estimate_seconds() turns these into a time for the busiest SM and for machine-wide traffic;
# gemm_candidates._mid_candidates() keeps the best config of each tile shape, then variations
# of those shapes, and appends the old fixed list's picks as anchors, MAX_CANDIDATES in all. The
# model only has to rank: the tuner times every survivor. Its constants are H200 figures (the
# ranking depends on their ratios: FLOP/s per SM vs HBM and L2 bytes/s vs the loaded latency);
# the two L2 bandwidths and the L2 latency are assumptions, not measurements.
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
# reduce_apart's second launch (gemm_reduce_kernel.py): the gap between two dependent launches on
# one stream plus the sum's ramp (an assumption, not measured); its reads go at _L2_BW.
_SUM_LAUNCH = 2e-6
ACC_REGS = 128  # fp32 accumulators per thread beyond which ptxas spills (with addresses etc.)


def uses_mid_model(m: int, dev: KernelTarget) -> bool:
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
    cfg: GemmConfig, m: int, n: int, k: int, in_bytes: int, out_bytes: int, dev: KernelTarget
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
        # reduce_apart: no unit sums; the second launch does, after the GEMM (below)
        in_kernel = 0 if cfg.reduce_apart else sm_reduces
        overhead += (sm_partials * store + in_kernel * reduce) / resident

    a_bytes, b_bytes, c_bytes = m * k * in_bytes, n * k * in_bytes, m * n * out_bytes
    hbm = a_bytes + b_bytes + c_bytes + (partials if partials > _L2_BYTES else 0)
    l2 = a_bytes * tiles_n + b_bytes * tiles_m + 2 * partials + c_bytes
    # reduce_apart: the L2 term above still counts the partials' read (and C's store) in the
    # GEMM, and the sum's term counts the read again: a lean against the twins that session 82's
    # gate (gemm_candidates._reduce_apart_twins) was measured with, so it is kept.
    gemm = _soft_max(busy + overhead, hbm / _HBM_BW, l2 / _L2_BW)
    return gemm + (_SUM_LAUNCH + partials / _L2_BW if cfg.reduce_apart and split > 1 else 0.0)


def _soft_max(*times: float) -> float:
    """Overlapped limits (math vs loads, one SM vs the whole memory system) add up a little near
    a tie: nothing saturates two resources at once. A 4-norm: = max when one term dominates,
    1.19 x max for two equal ones; it also ranks configs that all hit HBM bandwidth by their
    headroom instead of leaving them tied."""
    return sum(t**4 for t in times) ** 0.25


def fits_sm(cfg: GemmConfig, in_bytes: int, out_bytes: int, dev: KernelTarget) -> bool:
    """programs_per_sm programs must be co-resident, or the extra ones just queue: shared memory
    (1 KB reserved per block on top of the per-block opt-in limit) and registers (<= 256
    threads at <= 255 registers each fit the 64K register file)."""
    per_block = shared_mem_bytes(cfg, in_bytes, out_bytes) + 1024
    threads = 32 * cfg.num_warps * cfg.programs_per_sm
    return cfg.programs_per_sm * per_block <= dev.max_shared_mem + 1024 and threads <= 256
