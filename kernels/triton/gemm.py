"""Own Triton GEMM: C[M, N] = A[M, K] @ B[K, N], fp32 accumulation, one kernel for every rung.

This file is the public launcher (prepare_matmul) and what it builds; the kernel and its
scheduling (split-K, stream-K) are in gemm_kernel.py.

The "full" kernel turns on every fast path the device has; each ladder rung removes exactly
one of them, so the gap between a rung and "full" is what that feature is worth on the hardware.

| rung            | removes                  | why it matters on hardware                      |
|-----------------|--------------------------|-------------------------------------------------|
| full            | nothing (`own-triton`)   | reference rung                                  |
| no-gluon        | the Gluon kernel         | sm_90 bf16/fp16, fp8 with B K-major: "full"     |
|                 | (gemm_gluon_kernel.py)   | also tunes the warp-specialized Gluon GEMM and  |
|                 |                          | runs it where its tuned time beats the `tl`     |
|                 |                          | kernel's (tile widths like 160 that fill the    |
|                 |                          | SMs; config["kernel"] says which ran); this     |
|                 |                          | rung is `tl` alone                              |
| no-swap-ab      | swapped configs          | decode (M <= 32, B a weight [N, K]): C^T =      |
|                 | (C^T = B^T A^T)          | W A^T puts the weight's rows on wgmma's 64- or  |
|                 |                          | 128-row tiles and the tokens on its N; tf32 nn: |
|                 |                          | B read in place as wgmma's register operand.    |
|                 |                          | The rung keeps the Gluon GEMM: its gap is the   |
|                 |                          | swap's alone                                    |
| no-wave-tiles   | the Gluon GEMM's 144-    | N a multiple of 144 (Qwen2.5-7B's fused QKV,    |
|                 | wide tiles (128 + 16)    | 4608): one wave of tiles where the power-of-two |
|                 |                          | widths leave a second or uneven SMs; the `tl`   |
|                 |                          | configs and the rest of the Gluon GEMM kept     |
| burst-ties      | the tie rule: a capped   | heavy GEMMs run at the power cap, where Gluon   |
|                 | tie timed again at the   | draws more per FLOP than a burst shows; this    |
|                 | cap (kernel_choice.py)   | rung lets a burst pair break the tie, as "full" |
|                 |                          | did before session 85                           |
| tl-ties         | the same                 | two capped readings a side scatter by 2-7%:     |
|                 |                          | this rung gives a tie to `tl` without timing it |
|                 |                          | again, as "full" did in sessions 85-100         |
| no-tma          | tensor descriptors (TMA) | sm_90 TMA moves a whole tile per instruction,   |
|                 |                          | no address registers; pointer loads (cp.async)  |
|                 |                          | spend registers and issue slots on addresses    |
|                 |                          | and masks                                       |
| no-pipeline     | software pipelining      | num_stages=1: each K step waits for its own     |
|                 | (and warp specialization)| global->shared copy, exposing HBM/L2 latency    |
| not-persistent  | persistent tile loop     | one program per tile: per-CTA launch/prologue   |
|                 |                          | cost, tail waves, no overlap of a tile's        |
|                 |                          | epilogue with the next tile's loads             |
| no-splitk       | split-K and stream-K     | decode-sized M has fewer output tiles than SMs: |
|                 |                          | without splitting K most SMs idle while the     |
|                 |                          | weights stream from HBM; mid M leaves a partial |
|                 |                          | last wave of tiles                              |
| no-tensor-cores | tl.dot (MMA/WGMMA/MFMA)  | broadcast multiply + in-thread sum = FFMA only, |
|                 |                          | and on NVIDIA also tl.dot on fp32 at ieee (the  |
|                 |                          | FMA dot: FFMA only, shared-memory reuse); FP32  |
|                 |                          | FFMA peak is ~1/15 of dense bf16 MMA peak       |

Where a feature does not exist (TMA before sm_90 and on AMD) its rung equals "full";
config["tma_fallback"] says why. Features the operands forbid (unaligned strides) are reported
the same way rather than silently dropped.

tf32 with a row-major B: wgmma reads 32-bit B only K-major, so such a B tile is re-laid out
through shared memory every K step (sm_90 AOT: st.shared in the loop; the H200 ran tf32 nn at
19-20% of the tf32 peak). Two configs avoid it: transpose_b copies B K-major once per call
before the kernel (inside the timed call: at M 128 that copy moved more bytes than the GEMM,
0.35x cuBLAS on the H200), and swap_ab computes C^T = B^T A^T, where B's tiles are wgmma's A
operand, read from shared memory into registers in any layout (AOT: no st.shared in the loop).

fp8 and bf16 decode with a column-major B (a Linear weight, nt): swap_ab also puts the
weight's rows on wgmma's 64-row tiles and the few tokens on its N (decode_swap_configs), where
the unswapped tiles spend 16-64 rows on 1-32 tokens (mma.sync at 16 rows); both operands stay
K-major.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import torch
import triton
from triton.tools.tensor_descriptor import TensorDescriptor

from .. import capped_retime
from . import gemm_tune
from .gemm_candidates import candidate_configs, decode_swap_configs, interpreter_pick
from .gemm_configs import RUNGS, GemmConfig
from .gemm_gluon import TUNE_SOURCES as GLUON_TUNE_SOURCES
from .gemm_gluon import GluonGemmUnsupported, GluonMatmulLaunch, prepare_gluon_matmul
from .gemm_kernel import _gemm_kernel
from .gemm_operands import GemmOperands, check_operands, tma_support, transposes_b
from .gemm_reduce_kernel import SplitKSum, splitk_sum
from .gemm_split import StreamKPlan, splitk_reduce_rows, stream_k_plan
from .gemm_target import KernelTarget, interpreting, kernel_target
from .gemm_tune import reference, remember, stored_key, tune_or_lookup
from .kernel_choice import choose

__all__ = ["RUNGS", "MatmulLaunch", "build_launch", "prepare_matmul"]

# Decode-sized M streams the weights through few output tiles: the `tl` kernel splits K for it,
# the Gluon kernel does not, so at M <= 64 it is not timed (it could only lose).
GLUON_MIN_M = 64
# the rungs that keep an earlier rule for a capped tie between the two kernels (kernel_choice.py
# TIES); "full" and every other rung time the tie again at the cap
_TIE_RULES = {"burst-ties": "burst", "tl-ties": "tl"}


@dataclass
class MatmulLaunch:
    """A prepared GEMM: calling it only launches (no allocation, tuning or sync); returns `out`.

    It satisfies harness_kernels.launch.Launch."""

    out: torch.Tensor  # [M, N]
    # GemmConfig fields (block_m/n/k, num_warps, num_stages, group_m, split_k, programs_per_sm,
    # persistent, tensor_cores, warp_specialize, matrix_instr_nonkdim, waves_per_eu) plus what
    # the operands allowed (tma, tma_store, tma_fallback, epilogue_subtile), the grid
    # (num_programs, units), input_precision, fp8_fast_accum, b_layout, arch, device_name,
    # variant (the rung, stored under the key "variant": rows already recorded carry that key
    # in provider_config, so the stored name stays although the code says rung),
    # tuned, candidates_tried, tune_source ("tuned" now, "cache" read from disk, "untuned") and
    # tune_key (the disk entry's name), and tuned_ms, candidates_rejected and candidates (each
    # timed candidate's median ms, by its short name) after tuning.
    config: dict[str, Any]
    _grid: tuple[int, int, int]
    _args: tuple  # pointers, sizes and strides, in _gemm_kernel's order
    _constexprs: dict[str, Any]  # its meta-parameters, by name
    _options: dict[str, Any] = field(default_factory=dict)
    _runner: Any = None  # CompiledKernel[grid], once bind_compiled() has compiled it
    _runner_args: tuple = ()  # positional_args(), kept with the runner
    _prologue: Any = None  # work each call does before the kernel (transpose_b's copy of B)
    _sum: SplitKSum | None = None  # reduce_apart: the launch that sums the split-K partials

    def __call__(self) -> torch.Tensor:
        if self._prologue is not None:
            self._prologue()
        if self._runner is not None:
            # Same launch the JIT would make, minus re-binding and re-hashing identical args.
            self._runner(*self._runner_args)
        else:
            _gemm_kernel[self._grid](*self._args, **self._constexprs, **self._options)
        if self._sum is not None:
            self._sum()
        return self.out

    def positional_args(self) -> tuple:
        """Every _gemm_kernel argument in parameter order, meta-parameters included: what a
        compiled kernel's launcher and an AOT compile take (neither binds names)."""
        names = _gemm_kernel.arg_names[len(self._args) :]
        return (*self._args, *(self._constexprs[name] for name in names))

    def bind_compiled(self) -> None:
        """Compile (via one JIT launch) and keep the compiled kernel for direct launches."""
        kernel = _gemm_kernel[self._grid](*self._args, **self._constexprs, **self._options)
        kernel = kernel.result() if hasattr(kernel, "result") else kernel
        if not interpreting() and hasattr(kernel, "packed_metadata"):
            self._runner, self._runner_args = kernel[self._grid], self.positional_args()
        if self._sum is not None:
            self._sum.bind_compiled()


def build_launch(p: GemmOperands, cfg: GemmConfig, dev: KernelTarget) -> MatmulLaunch:
    """Allocate the output (and split-K workspace), make descriptors and fix the grid for `cfg`."""
    prologue = None
    result: torch.Tensor | None = None  # swap_ab: the [M, N] output the kernel writes as C^T
    swapped_layout = ""
    if cfg.swap_ab:
        m0, n0, _ = p.mnk
        result = torch.empty((m0, n0), device=p.a.device, dtype=p.out_dtype)
        if p.b_is_nk:
            # A' = W [N, K] and B' = A^T [K, M], both K-major (TMA reads both); C' = C^T
            p = replace(p, a=p.b.t(), b=p.a.t(), a_scale=p.b_scale, b_scale=p.a_scale)
            cfg = replace(cfg, epilogue_subtile=False)
            swapped_layout = "col, the weight as wgmma's A operand (C^T = W A^T)"
        else:
            swapped_layout = "row, as wgmma's A operand (C^T = B^T A^T)"
            # A' = B^T [N, K] (N contiguous), B' = A^T [K, M] (K contiguous: "nk"), C' = C^T
            p = replace(p, a=p.b.t(), b=p.a.t(), b_is_nk=True)
            cfg = replace(cfg, tma=False, epilogue_subtile=False)
    m, n, k = p.mnk
    if cfg.transpose_b and not p.b_is_nk:
        # wgmma reads 32-bit (tf32) B only K-major; a row-major B would be re-laid out in shared
        # memory every K step. Copy it K-major once per call instead (timed with the kernel).
        b_row, b_nk = p.b, torch.empty((n, k), device=p.b.device, dtype=p.b.dtype)
        prologue = lambda: b_nk.copy_(b_row.t())  # noqa: E731
        p = replace(p, b=b_nk.t(), b_is_nk=True)
    a, b = p.a, p.b
    bm, bn, bk = cfg.block_m, cfg.block_n, cfg.block_k
    out = (
        result.t()
        if result is not None
        else torch.empty((m, n), device=a.device, dtype=p.out_dtype)
    )
    tma_load, tma_store, tma_reason = tma_support(p, cfg, dev)
    if cfg.stream_k and (cfg.split_k != 1 or not cfg.persistent):
        raise ValueError(f"stream_k needs a persistent config with split_k=1; got {cfg}")
    if cfg.reduce_apart and (cfg.split_k == 1 or cfg.stream_k):
        raise ValueError(f"reduce_apart sums split-K partials: it needs split_k > 1 (got {cfg})")
    # The partial-tile reduction (split-K, stream-K) writes C by pointers, as does a swapped
    # product (C^T into C's layout: unit stride down its rows).
    tma_store = tma_store and cfg.split_k == 1 and not cfg.stream_k and result is None
    subtile = cfg.epilogue_subtile and tma_store
    a_arg, b_arg, c_arg = a, b, out
    if tma_load:
        a_arg = TensorDescriptor(a, [m, k], [a.stride(0), 1], [bm, bk])
        if p.b_is_nk:  # b = w.t() with w [N, K] row-major: describe w
            b_arg = TensorDescriptor(b.t(), [n, k], [b.stride(1), 1], [bn, bk])
        else:
            b_arg = TensorDescriptor(b, [k, n], [b.stride(0), 1], [bk, bn])
    if tma_store:
        c_arg = TensorDescriptor(out, [m, n], [n, 1], [bm, bn // 2 if subtile else bn])
    tiles = triton.cdiv(m, bm) * triton.cdiv(n, bn)
    units = tiles * cfg.split_k
    num_programs = min(units, dev.num_sms * cfg.programs_per_sm) if cfg.persistent else units
    # Partial tiles live in a tile-local fp32 workspace: [slots, parts, BLOCK_M, BLOCK_N].
    slots, parts = (tiles, cfg.split_k) if cfg.split_k > 1 else (0, 1)
    sk: StreamKPlan | None = None
    if cfg.stream_k:
        sk = stream_k_plan(tiles, triton.cdiv(k, bk), dev.num_sms * cfg.programs_per_sm)
        num_programs, slots, parts = sk.num_programs, sk.sk_tiles, sk.max_parts
    ws = counters = None
    if slots:
        if slots * parts * bm * bn >= 2**31:
            raise ValueError(f"split workspace of {slots}x{parts} tiles overflows 32-bit offsets")
        ws = torch.empty(slots * parts * bm * bn, device=a.device, dtype=torch.float32)
        # the one-launch reduction's arrival counters (reduce_apart's second launch needs none)
        if not cfg.reduce_apart:
            counters = torch.zeros(slots, device=a.device, dtype=torch.int32)
    # Kept unformatted: the launch arguments one role per line (pointers, sizes, strides).
    # fmt: off
    args = (
        a_arg, b_arg, c_arg, p.a_scale, p.b_scale, ws, counters,
        m, n, k, num_programs, sk.sk_tiles if sk else 0,
        a.stride(0), a.stride(1), b.stride(0), b.stride(1), out.stride(0), out.stride(1),
    )
    # fmt: on
    constexprs = dict(
        BLOCK_M=bm,
        BLOCK_N=bn,
        BLOCK_K=bk,
        GROUP_M=cfg.group_m,
        SPLIT_K=cfg.split_k,
        PERSISTENT=cfg.persistent,
        TMA_LOAD=tma_load,
        TMA_STORE=tma_store,
        B_IS_NK=p.b_is_nk,
        USE_DOT=cfg.tensor_cores or cfg.fma_dot,
        # the FMA dot: fp32 operands (UPCAST) at ieee precision, which no tensor core takes
        INPUT_PRECISION="ieee" if cfg.fma_dot else p.input_precision,
        HAS_SCALE=p.a_scale is not None,
        EVEN_K=k % bk == 0,
        EPILOGUE_SUBTILE=subtile,
        WARP_SPECIALIZE=cfg.warp_specialize,
        UPCAST=interpreting() or cfg.fma_dot,
        REDUCE_M=splitk_reduce_rows(bm, bn, parts, cfg.num_warps),
        STREAM_K=cfg.stream_k,
        MAX_PARTS=parts,
        REDUCE_APART=cfg.reduce_apart,
    )
    options: dict[str, Any] = {"num_warps": cfg.num_warps, "num_stages": cfg.num_stages}
    if dev.backend == "hip":
        options["matrix_instr_nonkdim"] = cfg.matrix_instr_nonkdim
        options["waves_per_eu"] = cfg.waves_per_eu
    config = cfg.as_dict() | {
        "tma": tma_load,
        "tma_store": tma_store,
        "tma_fallback": tma_reason if cfg.tma else "",
        "epilogue_subtile": subtile,
        "num_programs": num_programs,
        "units": units,
        # stream-K: whole tiles, tiles shared out by K, and how many of those several programs
        # share (each such tile costs partial stores and one reduction)
        **(
            {
                "dp_tiles": sk.dp_tiles,
                "sk_tiles": sk.sk_tiles,
                "sk_shared_tiles": sk.shared_tiles,
                "sk_max_parts": sk.max_parts,
            }
            if sk
            else {}
        ),
        "input_precision": "ieee" if cfg.fma_dot else p.input_precision,
        # Triton's sm_90 default for fp8 dots: wgmma accumulates without periodic fp32
        # promotion (cuBLAS's use_fast_accum=True behaviour), faster but less precise.
        "fp8_fast_accum": a.dtype == torch.float8_e4m3fn and dev.capability == 90,
        "b_layout": (
            "row, copied K-major per call"
            if prologue
            else swapped_layout
            if result is not None
            else ("col" if p.b_is_nk else "row")
        ),
        "arch": dev.arch,
        "device_name": dev.name,
    }
    summed = None
    if cfg.reduce_apart:
        assert ws is not None
        summed = splitk_sum(ws, out, p.a_scale, p.b_scale, tiles, bm, bn, cfg.group_m, parts)
        config["sum_programs"] = summed.grid[0]
    grid = (num_programs, 1, 1)
    out = result if result is not None else out
    return MatmulLaunch(
        out, config, grid, args, constexprs, options, _prologue=prologue, _sum=summed
    )


def prepare_matmul(
    a: torch.Tensor,
    b: torch.Tensor,
    *,
    rung: str = "full",
    out_dtype: torch.dtype | None = None,
    a_scale: torch.Tensor | None = None,
    b_scale: torch.Tensor | None = None,
    fp32_precision: str = "tf32",
    tune: bool = True,
) -> MatmulLaunch | GluonMatmulLaunch:
    """Choose (on a GPU: time) and compile a config for a @ b; return the launch closure
    (a MatmulLaunch; on sm_90 with rung "full" the Gluon kernel's launch where it is faster).

    a: [M, K] row-major. b: [K, N] row-major, or column-major (b = w.t(), w [N, K] contiguous).
    fp8 e4m3 inputs need per-tensor float32 scales; their output is bf16 (a@b)*a_scale*b_scale.
    `rung` is the ladder rung (one of RUNGS).
    """
    if rung not in RUNGS:
        raise ValueError(f"unknown rung {rung!r}; expected one of {RUNGS}")
    if a.device.type == "cpu" and not interpreting():
        raise ValueError("CPU tensors run only under the Triton interpreter (TRITON_INTERPRET=1)")
    dev = kernel_target(None if interpreting() else a.device)
    p = check_operands(a, b, out_dtype, a_scale, b_scale, fp32_precision, dev)
    m, n, k = p.mnk
    # "no-gluon", "no-wave-tiles" and the two tie rules' rungs time the `tl` configs "full" times
    # (and share its decisions)
    tl_rung = "full" if rung in ("no-gluon", "no-wave-tiles", *_TIE_RULES) else rung
    aligned = (a.data_ptr() % 16, b.data_ptr() % 16, a.stride(0), b.stride())
    key: tuple = (m, n, k, a.dtype, p.out_dtype, p.b_is_nk, p.input_precision, tl_rung, dev.name)
    key += (aligned, "tuned" if tune and dev.backend != "interpreter" else "untuned")
    if dev.backend == "interpreter":
        result = remember(key, interpreter_pick(tl_rung, m, n, k, a.element_size()))
    else:
        cands = candidate_configs(tl_rung, m, n, k, a.element_size(), p.out_bytes, dev)
        if transposes_b(p, dev, tl_rung):
            # the top two configs again with B copied K-major, and the product swapped (C^T =
            # B^T A^T: B read in place as wgmma's register operand), tiled for [N, M]
            swapped = candidate_configs(tl_rung, n, m, k, a.element_size(), p.out_bytes, dev)
            cands = cands + [replace(c, transpose_b=True) for c in cands[:2]]
            if tl_rung != "no-swap-ab":
                cands = cands + [replace(c, swap_ab=True, tma=False) for c in swapped[:3]]
        if p.b_is_nk:
            swaps = decode_swap_configs(tl_rung, m, n, k, a.element_size(), p.out_bytes, dev)
            cands = cands + [c for c in swaps if c not in cands]
        if not tune:
            result = remember(key, cands[0])
        else:
            exact = p.input_precision == "ieee" and a.dtype == torch.float32
            result = tune_or_lookup(
                key,
                cands,
                lambda cfg: build_launch(p, cfg, dev),
                lambda: reference(p),
                1e-4 if exact else 3e-2,
                stored_key(key, cands, dev.name),
            )
    launch = build_launch(p, result.config, dev)
    # "variant": the rung's stored key in provider_config (committed rows carry it)
    launch.config.update(variant=rung, tuned=result.tuned, candidates_tried=result.candidates_tried)
    # tune_source: "tuned" (timed now), "cache" (a decision read from disk), "untuned"
    launch.config.update(tune_source=result.source, tune_key=result.cache_key)
    if result.timings_ms:
        # the chosen config's time: at the power cap where the contenders were re-timed there
        capped = result.capped_ms
        launch.config["tuned_ms"] = min((capped or result.timings_ms).values())
        if capped:
            launch.config["capped"] = {k: round(v, 5) for k, v in capped.items()}
        launch.config["candidates_rejected"] = len(result.rejected)
        # every candidate's tuner time, as own-cutlass records them: what the choice beat
        launch.config["candidates"] = {k: round(v, 5) for k, v in result.timings_ms.items()}
    launch.bind_compiled()  # compile now, outside any timed window
    # these rungs remove the swap or the wave tiles, not the Gluon GEMM
    if rung in ("full", "no-swap-ab", "no-wave-tiles", *_TIE_RULES) and tune:
        return _gluon_if_faster(launch, p, dev, rung)
    return launch


def _gluon_if_faster(
    launch: MatmulLaunch, p: GemmOperands, dev: KernelTarget, rung: str = "full"
) -> MatmulLaunch | GluonMatmulLaunch:
    """On sm_90 with bf16/fp16 operands (C of their dtype) or fp8 e4m3 with B K-major (bf16 C),
    also tune the Gluon GEMM (gemm_gluon.py) and return it
    where it is faster than the tuned `tl` kernel: the two winners are re-timed interleaved
    (kernel_choice.py; the tuners' minima come from bursts in different clock states). Each
    side's tuned and re-timed ms and its choice are recorded in the winner's config."""
    fp8 = p.a.dtype == torch.float8_e4m3fn
    if fp8:
        takes = p.out_dtype == torch.bfloat16 and p.b_is_nk
    else:
        takes = p.a.dtype in (torch.bfloat16, torch.float16) and p.out_dtype == p.a.dtype
    if not (dev.backend == "cuda" and dev.capability == 90 and takes):
        return launch
    if "tuned_ms" not in launch.config:
        return launch
    if p.mnk[0] <= GLUON_MIN_M:
        return launch
    tl_ms = launch.config["tuned_ms"]
    tl_tile = f"{launch.config['block_m']}x{launch.config['block_n']}"
    try:
        gluon = prepare_gluon_matmul(
            p.a,
            p.b,
            a_scale=p.a_scale,
            b_scale=p.b_scale,
            out_dtype=p.out_dtype,
            wave_tiles=rung != "no-wave-tiles",
        )
    except GluonGemmUnsupported as e:
        launch.config.update(kernel="tl", gluon=f"not run: {e}")
        return launch
    gluon_ms = gluon.config.get("tune_ms")
    gluon_tile = f"{gluon.config['block_m']}x{gluon.config['block_n']}"
    split = gluon.config.get("split_k", 1)
    gluon_pick = f"{gluon_tile} {gluon.config['schedule']}" + (
        f" split-K {split}" if split > 1 else ""
    )
    choice = choose(
        launch,
        gluon,
        (
            f"tl {launch.config.get('tune_key', '')} {tl_tile}",
            f"gluon {gluon.config.get('tune_key', '')} {gluon_pick}",
        ),
        (p.mnk, str(p.a.dtype), p.b_is_nk),
        p.a.device,
        dev.name,
        gemm_tune.TUNE_SOURCES + GLUON_TUNE_SOURCES,
        capped=tl_ms >= capped_retime.MIN_MS,
        ties=_TIE_RULES.get(rung, "retime"),
    )
    both = dict(
        tl_tuned_ms=tl_ms,
        gluon_tuned_ms=gluon_ms,
        tl_tile=tl_tile,
        gluon_tile=gluon_tile,
        gluon_schedule=gluon.config["schedule"],
        # every Gluon candidate's tuned time (both schedules): what ping-pong vs cooperative did
        gluon_timings_ms=gluon.config.get("tune_timings_ms", {}),
        # the deciding re-time of the two winners, interleaved (kernel_choice.py)
        choice_tl_ms=choice.tl_ms,
        choice_gluon_ms=choice.gluon_ms,
        choice_source=choice.source,
        choice_decided_by=choice.decided_by,
    )
    if choice.burst_tl_ms is not None:
        # the capped pair was within the noise and a burst pair decided: the times that decided
        both.update(
            choice_burst_tl_ms=choice.burst_tl_ms, choice_burst_gluon_ms=choice.burst_gluon_ms
        )
    if choice.kernel == "gluon-ws":
        gluon.config.update(kernel="gluon-ws", variant=rung, **both)
        return gluon
    launch.config.update(kernel="tl", **both)
    return launch
