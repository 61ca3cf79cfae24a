"""Config spaces of the own Triton GEMM (gemm.py): what one kernel instance is, the per-vendor
candidate lists, the ladder rungs that switch one feature off, and the prune predicate.

Nothing here launches a kernel. Which of these configs get timed for one problem is decided in
gemm_candidates.py (with split-K and stream-K from gemm_split.py and, on Hopper at mid M, the
cost model in gemm_cost_model.py); tuning itself lives in gemm_tune.py.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace

from .gemm_target import KernelTarget

# "no-gluon" leaves the configs as "full" does: it only keeps prepare_matmul from also timing the
# Gluon kernel (gemm.py); "no-swap-ab" leaves them too, less every swapped one (C^T = B^T A^T);
# "no-wave-tiles" leaves them and the Gluon kernel, less its 144-wide tiles (WAVE_PARTS);
# "burst-ties" leaves both kernels' candidates and lets a burst pair break a capped tie between
# them, as "full" did before session 85; "tl-ties" gives the tie to `tl` unmeasured, as "full"
# did in sessions 85-100 (kernel_choice.py: "full" times a tie again at the cap)
RUNGS = (
    "full",
    "no-gluon",
    "no-swap-ab",
    "no-wave-tiles",
    "burst-ties",
    "tl-ties",
    "no-tma",
    "no-pipeline",
    "not-persistent",
    "no-splitk",
    "no-tensor-cores",
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
    # Compute C^T = B^T A^T; block_m / block_n then tile C^T ([N, M]), written into C's layout by
    # pointers. Row-major B (tf32): B's tiles are wgmma's A operand, read into registers in any
    # layout (sm_90 AOT: no st.shared re-layout, no copy of B); pointer loads (B^T is not K-major
    # for TMA). Column-major B (fp8 decode, decode_swap_configs): the weight's rows fill wgmma's
    # 64-row tiles and the few tokens are its N; both operands K-major, so TMA loads both.
    swap_ab: bool = False
    # split_k > 1 only: units store their fp32 partials and a second kernel sums them over every
    # SM (gemm_reduce_kernel.py, cuBLAS's split-K + splitKreduce), instead of the last unit of
    # each tile summing them alone at one SM's L2 bandwidth (session 82's ncu at 256x2304x16384:
    # 128x256 tiles split 7 took 47.7 us; at the per-SM rate of a 128x128 tile at whole K there,
    # its main loop needs about 29).
    reduce_apart: bool = False
    # AMD only: MFMA shape (16 -> 16x16 instructions, 32 -> 32x32) and the occupancy hint.
    matrix_instr_nonkdim: int = 0
    waves_per_eu: int = 0
    # tensor_cores False only (the no-tensor-cores rung): the FFMAs as tl.dot over fp32 operands
    # at "ieee" precision, Triton's FMA dot (operands staged through shared memory, each thread
    # an outer-product block of outputs), instead of the broadcast multiply-sum. NVIDIA only:
    # gfx942 lowers an fp32 dot to v_mfma_f32 (AOT), matrix cores after all.
    fma_dot: bool = False

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


def get_fma_configs(backend: str, elem_bytes: int = 2) -> list[GemmConfig]:
    """No-tensor-core candidates: tiles small enough that the [BM, BN, BK] product fits registers,
    and on NVIDIA, for operands of 16 bits or fewer, the same FFMAs as Triton's FMA dot, which
    the tuner times beside them."""
    # Each thread owns BM*BN/threads outputs and does BK FFMAs (v_fma on AMD) per output per K
    # step; 64x64x8 on 8 warps is 128 FFMAs per step per thread at <=173 registers, no spills on
    # sm_80/sm_90/gfx942 (AOT ptxas -v), where 4 warps would need 255 and spill fp32 on sm_80.
    # The broadcast multiply-sum ran 3.1 TFLOP/s at fp16 1024-8192 on an H100 (thesis-s97h),
    # 5% of the FP32 FMA roof: its operands come from registers loaded per K step with little
    # reuse. The FMA dot reuses each shared-memory operand over a thread's block of outputs, as a
    # hand-written SIMT GEMM does.
    broadcast = [
        _c(64, 64, 8, 8, 3, tensor_cores=False),
        _c(64, 64, 4, 4, 3, tensor_cores=False),
        _c(32, 64, 8, 4, 3, tensor_cores=False, programs_per_sm=2),
    ]
    if backend == "hip" or elem_bytes > 2:
        # fp32 operands need no upcast, and a 128x64 FMA dot on them spills (sm_90 AOT: 1,672
        # bytes): the broadcast tiles alone there
        return broadcast
    return broadcast + [
        _c(128, 128, 16, 8, 2, tensor_cores=False, fma_dot=True),
        _c(128, 64, 16, 4, 3, tensor_cores=False, fma_dot=True),
        _c(64, 64, 16, 4, 3, tensor_cores=False, fma_dot=True, programs_per_sm=2),
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
    # the FMA dot converts its operands to fp32 through shared memory: one more K step of A and
    # B at 4 bytes, where the stages' own bytes serve part of it (sm_90 AOT, exact to 8 bytes:
    # 128x128x16 s2 bf16 57352, 128x64x16 s3 fp8 34832, 64x64x16 s3 bf16 24592)
    fp32_operands = (cfg.block_m + cfg.block_n) * cfg.block_k * max(4 - in_bytes, 0)
    return max(cfg.num_stages, 1) * (ab + 8) + c + (fp32_operands if cfg.fma_dot else 0)


def keep_config(
    cfg: GemmConfig, m: int, n: int, k: int, in_bytes: int, out_bytes: int, dev: KernelTarget
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


def apply_rung(cfg: GemmConfig, rung: str) -> GemmConfig:
    """Remove the one feature a ladder rung names (see the table at the top of gemm.py)."""
    if rung == "no-tma":
        return replace(cfg, tma=False)
    if rung == "no-pipeline":
        # Warp specialization is itself a producer/consumer pipeline, so it goes with the stages.
        return replace(cfg, num_stages=1, warp_specialize=False)
    if rung == "not-persistent":
        return replace(cfg, persistent=False, programs_per_sm=1, stream_k=False)
    if rung == "no-splitk":  # stream-K splits tiles' K ranges too
        return replace(cfg, split_k=1, stream_k=False, reduce_apart=False)
    return cfg
