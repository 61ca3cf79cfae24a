"""Own CUTLASS GEMMs: the kernel configs and a launcher that plans once and then only launches.

Configs (one compiled library per config x dtype x B layout):
  sm90-coop-128x256      TMA + WGMMA, cooperative, 128x256x64 tile, cluster 2x1 (large M)
  sm90-coop-256x128      cooperative, 256x128x64, cluster 1x2
  sm90-pingpong-128x128  ping-pong (epilogue of one warp group under the other's mainloop), 2x1
  sm90-coop-128x128-c2x1  the same tile and cluster, cooperative (one tile per CTA at M 512, N 4096)
  sm90-coop-128x{64,...,224}[-c2x1]   wave-filling widths (WAVE_FILL_WIDTHS) for the mid band,
                         alone or in 2x1 clusters that multicast the shared weight tile to a pair
  sm90-pingpong-64x{96,128}-c2x1   64-token ping-pong tiles in pairs (M 65-256)
  sm90-streamk-128x128   cooperative + stream-K / split-K scheduler (fewer tiles than SMs)
  sm90-streamk-128x256   cooperative + stream-K, 2x1 (wave quantization at large M)
  sm90-swapab-128x{16,32,64}   D^T = B^T A^T: decode's small M on WGMMA's narrow N side,
                         cooperative + stream-K so a handful of N tiles still fills every SM
                         (128x64 also in a 1x2 cluster: sm90-swapab-128x64-c1x2)
  sm90-swapab-dp-128x{16,32,64}[-c2x1,-c4x1]   swapped, one CTA per weight tile (no stream-K),
                         alone or in clusters that multicast the token tile
  sm90-swapab-pingpong-64x{16,32,64}   swapped, 64-row tiles, data-parallel: twice the CTAs of
                         the 128-row tiles and no split-K (no workspace flags to clear per launch)
  sm80-multistage        cp.async multistage + mma.sync, 128x256x64, 3 stages (sm_80 and sm_90)

    launch = prepare_gemm(a, b, CONFIGS["sm90-coop-128x256"])    # a [M, K], b [K, N] view
    out = launch()                                                 # [M, N], on the current stream
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass, replace
from typing import Any

import torch

from . import build

# Element codes of the HK_DTYPE define, and the bytes per input element.
DTYPES = {
    torch.bfloat16: ("bf16", 0),
    torch.float16: ("fp16", 1),
    torch.float8_e4m3fn: ("fp8_e4m3", 2),
    torch.float32: ("tf32", 3),  # fp32 in and out, TF32 tensor cores (the harness's "tf32")
}
DTYPE_CODES = dict(DTYPES.values())  # name -> HK_DTYPE
ELEMENT_BYTES = {"bf16": 2, "fp16": 2, "fp8_e4m3": 1, "tf32": 4}  # every SM90 input dtype
MODES = {"heuristic": 0, "data-parallel": 1, "split-k": 2, "stream-k": 3}
RASTERS = {"heuristic": 0, "along-m": 1, "along-n": 2}  # sm90_gemm.cu's raster codes
REDUCTIONS = {"deterministic": 0, "nondeterministic": 1}  # sm90_gemm.cu's reduction codes


def layout_problem(dtype: str, b_col: bool) -> str | None:
    """Why no own CUTLASS config takes `dtype` with B row-major (nn); None when the layout is
    fine for every config that takes the dtype."""
    if not b_col and dtype == "fp8_e4m3":
        return "fp8 WGMMA needs both operands K-major: use layout nt"
    return None


@dataclass(frozen=True)
class GemmConfig:
    """One kernel configuration; `tile` K is in 16-bit elements (fp8 doubles it and tf32 halves
    it: the same bytes per stage)."""

    name: str
    kernel: str  # sm90 | sm80
    tile: tuple[int, int, int]
    cluster: tuple[int, int] = (1, 1)
    schedule: str = "cooperative"  # cooperative | pingpong | multistage
    streamk: bool = False
    swap_ab: bool = False
    # the two consumer warp groups split the cooperative tile along N (sm90_gemm.cu HK_SPLIT_N)
    split_n: bool = False
    # with split_n: its register epilogue stores 16 bytes per thread, not 2 (HK_QUAD_STORES)
    quad_stores: bool = False
    warp: tuple[int, int, int] = (64, 64, 64)  # sm80 only
    stages: int = 3  # sm80 only; SM90 kernels take as many stages as shared memory holds

    @property
    def min_cc(self) -> tuple[int, int]:
        return (9, 0) if self.kernel == "sm90" else (8, 0)

    @property
    def dtypes(self) -> tuple[str, ...]:
        if self.kernel != "sm90" or self.split_n:  # sm90_gemm.cu: the N split is 16-bit only
            return ("bf16", "fp16")
        # tf32 writes fp32, and CuTe's epilogue layout then needs the tile's N in multiples of
        # 32: 128x80 and 128x176 fail its "Stride Divisibility Condition" static assertion in nt
        # and nn alike (nvcc 13.0, CUTLASS 4.2; 128x64, 128x160, 128x192 build). Found by the
        # GPU tests on an H100 (results/h100/README.md, session 51); the swapped tiles untested.
        if not self.swap_ab and self.tile[1] % 32:
            return tuple(d for d in ELEMENT_BYTES if d != "tf32")
        return tuple(ELEMENT_BYTES)

    def unbuildable(self, dtype: str, b_col: bool) -> str | None:
        """Why no library of this config takes `dtype` with B column-major (nt) or row-major
        (nn); None when one does."""
        if dtype not in self.dtypes:
            return f"takes {', '.join(self.dtypes)}"
        if why := layout_problem(dtype, b_col):
            return why
        # A row-major B is MN-major in shared memory, whose 128-byte swizzle atom is 64 elements
        # wide: each warpgroup's 160 columns fail CuTe's "Shape Divisibility Condition" (nvcc
        # 13.0, CUTLASS 4.2; found by the prebuild on an H200, session 52). Sweeps run nt.
        if not b_col and self.split_n:
            return "the N split builds in nt only"
        return None

    def tile_for(self, dtype: str) -> tuple[int, int, int]:
        m, n, k = self.tile
        return (m, n, k * 2 // ELEMENT_BYTES[dtype])

    def swaps(self, dtype: str, b_col: bool) -> bool:
        """Whether the library computes D^T = B^T A^T: the swap_ab configs, and every tf32 nn
        build. wgmma reads a 32-bit B only K-major, so a row-major B has to come from registers,
        which only the A operand can: swapped, B^T is that operand (sm90_gemm.cu says why the
        CUTLASS builder's own swap is not used)."""
        return self.swap_ab or (dtype == "tf32" and not b_col and self.kernel == "sm90")

    def spec(self, dtype: str, b_col: bool) -> build.KernelSpec:
        """The library to build for inputs of `dtype` and B column-major (nt) or row-major (nn)."""
        code = DTYPE_CODES[dtype]
        tm, tn, tk = self.tile_for(dtype)
        defines: list[tuple[str, int | str]] = [
            ("HK_DTYPE", code),
            ("HK_B_COL", int(b_col)),
            ("HK_TILE_M", tm),
            ("HK_TILE_N", tn),
            ("HK_TILE_K", tk),
        ]
        layout = "nt" if b_col else "nn"
        label = f"gemm-{self.name}-{dtype}-{layout}"
        if self.kernel == "sm80":
            wm, wn, wk = self.warp
            defines += [("HK_WARP_M", wm), ("HK_WARP_N", wn), ("HK_WARP_K", wk)]
            defines += [("HK_STAGES", self.stages)]
            # sm_80 SASS for Ampere and sm_90 SASS for Hopper (sm_80 SASS does not run on 9.x).
            return build.KernelSpec("sm80_gemm.cu", tuple(defines), ("sm_80", "sm_90"), label)
        defines += [
            ("HK_SWAP_AB", int(self.swaps(dtype, b_col))),
            ("HK_CLUSTER_M", self.cluster[0]),
            ("HK_CLUSTER_N", self.cluster[1]),
            ("HK_SCHEDULE", 0 if self.schedule == "cooperative" else 1),
            ("HK_STREAMK", int(self.streamk)),
        ]
        if self.split_n:  # only then: every other library compiles exactly as before
            defines.append(("HK_SPLIT_N", 1))
        if self.quad_stores:
            defines.append(("HK_QUAD_STORES", 1))
        # sm_90a: WGMMA and the TMA multicast forms exist only in the arch-specific target.
        return build.KernelSpec("sm90_gemm.cu", tuple(defines), ("sm_90a",), label)


_SM90 = GemmConfig("", "sm90", (128, 128, 64))
_SPLIT_N = replace(
    _SM90, name="sm90-coopn-128x320-c2x1", tile=(128, 320, 64), cluster=(2, 1), split_n=True
)
WAVE_FILL_WIDTHS = (64, 80, 96, 160, 176, 192, 224)
# Every config by name; harness/providers/own_cutlass.py registers one provider per entry
# (own-cutlass-<name>), so a name here is a provider name in recorded rows: keep names stable.
CONFIGS: dict[str, GemmConfig] = {
    c.name: c
    for c in (
        replace(_SM90, name="sm90-coop-128x256", tile=(128, 256, 64), cluster=(2, 1)),
        replace(_SM90, name="sm90-coop-256x128", tile=(256, 128, 64), cluster=(1, 2)),
        replace(_SM90, name="sm90-pingpong-128x128", cluster=(2, 1), schedule="pingpong"),
        # The same tile and cluster, cooperative: where the grid is one tile per CTA (M 512,
        # N 4096: 128 tiles on 132 SMs) a ping-pong CTA has one tile for its two consumer warp
        # groups, so one computes it while the other idles and its epilogue runs exposed; the
        # cooperative CTA splits the tile between both. cuBLAS runs 128x128 tiles in 2x1
        # clusters there (nvjet_sm90_tst_128x128_64x6_2x1), where own ping-pong ran 0.959x its
        # speed at K 4096, both at 1,980 MHz, and 0.957x at K 14336 (H100, gemm_llama-s94h).
        replace(_SM90, name="sm90-coop-128x128-c2x1", cluster=(2, 1)),
        # Wave-filling widths for the mid band (M 128-1024): wgmma takes N in steps of 8, so a
        # 128-row tile 64, 80, 96, 160, 176, 192 or 224 wide turns a partial last wave of
        # power-of-two tiles into a nearly full one (M 256, N 10240: 80 tiles of 128x256 fill
        # 61% of 132 SMs, 128 tiles of 128x160 fill 97%; N 57344: 652 tiles of 128x176 fill 99%
        # of five waves, where cuBLAS runs its 176x128 nvjet kernel on the H200; M 128, N 10240:
        # 128 tiles of 128x80, cuBLAS's 80x128 kernel there; M 256, N 4096: 128 tiles of 128x64,
        # cuBLAS's 128x64 kernel there, 16.8 us on the H200 where our best, 104 tiles of 128x80,
        # took 19.6: results/h200/gemm_llama-s51). 224 (session 88): N 28672 and 57344 are 128
        # and 256 of them, so M 128-1024 fills 97% of whole waves where 128x128 left own CUTLASS
        # 0.937x / 0.938x cuBLAS at 128x / 512x28672x4096 (gemm_llama-cutlass-s88; cuBLAS ran
        # 128 CTAs at M 128). See gemm_tune.wave_fill.
        *(
            replace(_SM90, name=f"sm90-coop-128x{n}", tile=(128, n, 64), cluster=(1, 1))
            for n in WAVE_FILL_WIDTHS
        ),
        # The same widths in 2x1 clusters: the two CTAs of a cluster own vertically adjacent
        # tiles and TMA multicasts their shared B (weight) tile to both, halving the weight
        # traffic out of L2. cuBLAS's nvjet kernels pair M tiles this way across the mid band
        # (H200, results/h200/cublas_kernels: e.g. 168x128 tiles in 1x2 clusters at M 256).
        *(
            replace(_SM90, name=f"sm90-coop-128x{n}-c2x1", tile=(128, n, 64), cluster=(2, 1))
            for n in WAVE_FILL_WIDTHS
        ),
        # 64-token tiles, one per consumer warpgroup (ping-pong), in 2x1 clusters: at M 128 the
        # two tile rows share each weight tile, and N 6144 / 96 gives 2 x 64 = 128 tiles on 132
        # SMs where 128-row tiles leave half the SMs idle (cuBLAS's 96x64 1x2 kernel there).
        *(
            replace(
                _SM90,
                name=f"sm90-pingpong-64x{n}-c2x1",
                tile=(64, n, 64),
                cluster=(2, 1),
                schedule="pingpong",
            )
            for n in (96, 128)
        ),
        # 128x320 in 2x1 clusters, each consumer warp group owning 128x160 (split along N):
        # cuBLAS's tile at M 512-1024, N 10240 (nvjet_sm90_tst_320x128_64x3_1x2_h_bz_coopB,
        # 238.6 us at 1024x10240x8192 on the H200, where every own candidate took >= 254.4 us
        # at the cap: results/h200/gemm_llama-s51). 16-bit inputs only (sm90_gemm.cu).
        _SPLIT_N,
        # The same with 16-byte stores in its epilogue (sm90_quad_store_epilogue.h): ncu found
        # the 2-byte stores above filling the store queue (results/h200/README.md, session 54).
        replace(_SPLIT_N, name=f"{_SPLIT_N.name}-st16", quad_stores=True),
        # Ping-pong 128x128 pairs sharing the activation tile (1x2: the two CTAs own tiles side
        # by side along N). fp8 at M 128-256 only (gemm_tune says where it won).
        replace(_SM90, name="sm90-pingpong-128x128-c1x2", cluster=(1, 2), schedule="pingpong"),
        replace(_SM90, name="sm90-streamk-128x128", streamk=True),
        replace(
            _SM90, name="sm90-streamk-128x256", tile=(128, 256, 64), cluster=(2, 1), streamk=True
        ),
        # Split-K on 128x144 tiles in 2x1 clusters (the pair multicasts its shared weight tile):
        # the decomposition cuBLAS runs at Llama-3.1-405B's fused QKV (N 2304, K 16384) at M 256,
        # nvjet_sm90_tst_144x128_64x6_1x2_h_bz_splitK on 128 CTAs (32 tiles split 4 ways). Own
        # Triton's Gluon GEMM at that decomposition, without multicast (Triton 3.6 has none),
        # read 27% more bytes through L2 and its main loop took 33 us to nvjet's 29.2 (ncu,
        # H200, session 83). gemm_tune offers it split where its tiles fill at most half the SMs.
        replace(
            _SM90,
            name="sm90-streamk-128x144-c2x1",
            tile=(128, 144, 64),
            cluster=(2, 1),
            streamk=True,
        ),
        *(
            replace(
                _SM90, name=f"sm90-swapab-128x{n}", tile=(128, n, 128), streamk=True, swap_ab=True
            )
            for n in (16, 32, 64)
        ),
        # The swapped tiles on the plain persistent scheduler: one CTA per weight tile, no
        # stream-K or split-K machinery (fp8 decode: gemm_tune says why).
        *(
            replace(_SM90, name=f"sm90-swapab-dp-128x{n}", tile=(128, n, 128), swap_ab=True)
            for n in (16, 32, 64)
        ),
        # The same in 2x1 and 4x1 clusters: the CTAs of a cluster own adjacent weight tiles and
        # TMA multicasts the token tile (B of the swapped problem) to all of them, so the L2
        # serves it once per cluster instead of once per CTA. cuBLAS's bf16 decode kernels are
        # swapped one-CTA-per-tile kernels in 4x1 clusters (H200, M 64: nvjet_sm90_tst_112x64
        # _64x9_4x1 at N 10240, 80x64 4x1 at N 8192; results/h200/cublas_kernels).
        *(
            replace(
                _SM90,
                name=f"sm90-swapab-dp-128x{n}-c{c}x1",
                tile=(128, n, 128),
                cluster=(c, 1),
                swap_ab=True,
            )
            for n in (16, 32, 64)
            for c in (2, 4)
        ),
        # Swapped 128x64 in 1x2 clusters: the pair shares a 128-row weight tile (multicast)
        # across two 64-token tiles; cuBLAS's choice at 256x4096x4096 and 128x8192x8192.
        replace(
            _SM90,
            name="sm90-swapab-128x64-c1x2",
            tile=(128, 64, 128),
            cluster=(1, 2),
            streamk=True,
            swap_ab=True,
        ),
        # 64-row ping-pong tiles, 128 deep along K; 16- and 32-token ones also 256 deep ("-k256":
        # half as many, twice as large TMA loads per stage for the same bytes in flight). Own
        # Triton's decode pick at N 4096 is that block (64 weight rows x 256 K, 64 programs:
        # 1x4096x4096 15.6 us on an H100, 1.006x a cold read of its bytes), where own CUTLASS's
        # best, 128x16x128 tiles in 4x1 clusters, took 16.6 (0.948x; results/h100/gemm_llama-s94h,
        # moved out in session 99).
        *(
            replace(
                _SM90,
                name=f"sm90-swapab-pingpong-64x{n}" + ("" if k == 128 else f"-k{k}"),
                tile=(64, n, k),
                schedule="pingpong",
                swap_ab=True,
            )
            for n, k in ((16, 128), (32, 128), (64, 128), (16, 256), (32, 256))
        ),
        GemmConfig("sm80-multistage", "sm80", (128, 256, 64), schedule="multistage"),
    )
}


@dataclass(frozen=True)
class RunOptions:
    """Runtime scheduler choices (stream-K configs use mode/splits; swizzle: persistent ones)."""

    mode: str = "heuristic"  # heuristic | data-parallel | split-k | stream-k
    splits: int = 1
    swizzle: int = 1  # group up to this many tiles along the raster (1, 2, 4, 8)
    # the persistent scheduler's raster: CUTLASS's heuristic, or along the kernel's M or N
    # (cuBLAS's nvjet names say h or v per shape at large M: results/h100/_logs/session41)
    raster: str = "heuristic"  # heuristic | along-m | along-n
    # How split-K / stream-K peers of one tile add their partials in the workspace (CUTLASS's
    # ReductionMode): "deterministic" in turn, each peer waiting for the one before (the same
    # bits every launch; the peers' adds are serialised on the tile's critical path), or
    # "nondeterministic" at once, by atomic adds (the last peer still waits for all; the bits of
    # C may differ between launches, so a row that uses it says so in its run_options).
    reduction: str = "deterministic"

    def __post_init__(self) -> None:
        # packed_swizzle gives the swizzle one byte, the raster the next, the reduction the third
        if not 1 <= self.swizzle <= 255:
            raise ValueError(f"swizzle {self.swizzle}; allowed: 1..255")
        if self.raster not in RASTERS:
            raise ValueError(f"raster {self.raster!r}; allowed: {', '.join(RASTERS)}")
        if self.reduction not in REDUCTIONS:
            raise ValueError(f"reduction {self.reduction!r}; allowed: {', '.join(REDUCTIONS)}")

    def __str__(self) -> str:
        split = f"x{self.splits}" if self.mode == "split-k" else ""
        raster = "" if self.raster == "heuristic" else f"/{self.raster}"  # names kept as they were
        reduction = "/nondet" if self.reduction == "nondeterministic" else ""
        return f"{self.mode}{split}/sw{self.swizzle}{raster}{reduction}"

    @classmethod
    def parse(cls, text: str) -> RunOptions:
        """Options back from their printed form (str): "data-parallel/sw8", "split-kx2/sw1",
        "heuristic/sw4/along-n", "split-kx4/sw1/nondet"."""
        mode, _, rest = text.partition("/sw")
        sw, *tail = rest.split("/")
        splits = 1
        if mode.startswith("split-kx"):
            mode, splits = "split-k", int(mode.removeprefix("split-kx"))
        raster, reduction = "heuristic", "deterministic"
        for part in tail:
            if part == "nondet":
                reduction = "nondeterministic"
            elif part in RASTERS:
                raster = part
            else:
                raise ValueError(f"run options {text!r}: {part!r} is no raster or 'nondet'")
        return cls(mode, splits, int(sw or 1), raster, reduction)

    @property
    def packed_swizzle(self) -> int:
        """The swizzle argument of hk_gemm_plan / hk_gemm_workspace: the raster order's code
        (RASTERS) above the swizzle's low byte, the reduction's code (REDUCTIONS) above that."""
        return self.swizzle | RASTERS[self.raster] << 8 | REDUCTIONS[self.reduction] << 16


def _bind(lib: ctypes.CDLL) -> ctypes.CDLL:
    """Declare the C signatures of common.h on a freshly loaded library (idempotent)."""
    if getattr(lib, "_hk_bound", False):
        return lib
    c_int, c_i64, c_void = ctypes.c_int, ctypes.c_int64, ctypes.c_void_p
    lib.hk_gemm_workspace.argtypes = [c_int] * 6
    lib.hk_gemm_workspace.restype = c_i64
    argtypes: list[Any] = [c_void] * 4 + [c_int] * 3 + [c_i64] * 3 + [c_int] * 3
    lib.hk_gemm_plan.argtypes = [*argtypes, c_void, ctypes.POINTER(c_void)]
    lib.hk_gemm_plan.restype = c_int
    lib.hk_gemm_run.argtypes = [c_void, c_void]
    lib.hk_gemm_run.restype = c_int
    lib.hk_gemm_destroy.argtypes = [c_void]
    lib.hk_gemm_destroy.restype = None
    lib.hk_status_string.argtypes = [c_int]
    lib.hk_status_string.restype = ctypes.c_char_p
    lib.hk_gemm_stages.restype = c_int
    lib._hk_bound = True  # type: ignore[attr-defined]  # our mark: bound once
    return lib


def layout_of(a: torch.Tensor, b: torch.Tensor) -> tuple[bool, int, int]:
    """(b column-major?, lda, ldb) for a [M, K] row-major and b [K, N] in either order; raises
    ValueError for anything else (transposed A, non-unit inner strides, batches)."""
    if a.dim() != 2 or b.dim() != 2 or a.shape[1] != b.shape[0]:
        raise ValueError(f"need a [M, K] and b [K, N], got {tuple(a.shape)} and {tuple(b.shape)}")
    m, k = a.shape
    n = b.shape[1]
    if a.stride(1) != 1 and m > 1:
        raise ValueError("a must be row-major (unit stride along K)")
    lda = a.stride(0) if m > 1 else k
    if b.stride(0) == 1 and (b.stride(1) >= k or n == 1):
        return True, lda, max(b.stride(1), k)  # column-major: b = w.t(), w [N, K]
    if b.stride(1) == 1:
        return False, lda, max(b.stride(0), n)  # row-major [K, N]
    raise ValueError("b must be row-major or column-major")


class GemmLaunch:
    """A planned GEMM: call it to launch on the current stream; it returns the output tensor.

    It satisfies harness_kernels.launch.Launch."""

    out: torch.Tensor  # [M, N] row-major
    config: dict[str, Any]

    def __init__(
        self,
        a: torch.Tensor,
        b: torch.Tensor,
        config: GemmConfig,
        alpha: torch.Tensor | None = None,
        options: RunOptions = RunOptions(),
    ):
        if a.dtype not in DTYPES or b.dtype != a.dtype:
            raise ValueError(
                f"dtype {a.dtype} / {b.dtype}: need bf16, fp16, fp8 e4m3 or fp32 pairs"
            )
        dtype = DTYPES[a.dtype][0]
        if dtype not in config.dtypes:
            raise ValueError(f"{config.name} does not take {dtype}")
        b_col, lda, ldb = layout_of(a, b)
        m, k = a.shape
        n = b.shape[1]
        out_dtype = torch.bfloat16 if dtype == "fp8_e4m3" else a.dtype
        self.out = torch.empty((m, n), dtype=out_dtype, device=a.device)
        spec = config.spec(dtype, b_col)
        lib, manifest = build.load(spec)
        self._lib = _bind(lib)
        mode = MODES[options.mode]
        self._keep = (a, b, alpha)  # the plan holds raw pointers into these
        handle = ctypes.c_void_p()
        with torch.cuda.device(a.device):
            swizzle = options.packed_swizzle
            ws = self._lib.hk_gemm_workspace(m, n, k, mode, options.splits, swizzle)
            self.workspace = torch.empty(max(ws, 1), dtype=torch.uint8, device=a.device)
            rc = self._lib.hk_gemm_plan(
                a.data_ptr(),
                b.data_ptr(),
                self.out.data_ptr(),
                None if alpha is None else alpha.data_ptr(),
                m,
                n,
                k,
                lda,
                ldb,
                n,
                mode,
                options.splits,
                swizzle,
                self.workspace.data_ptr() if ws > 0 else None,
                ctypes.byref(handle),
            )
        self._check(rc, "plan")
        self._handle: ctypes.c_void_p | None = handle
        self._run = self._lib.hk_gemm_run
        self._device = a.device
        info = build.describe(self._lib)
        self.config = {
            "library": "own-cutlass",
            "variant": config.name,  # the config's name; a stored provider_config key, kept
            "kernel": info.get("kernel"),
            "tile": "x".join(map(str, config.tile_for(dtype))),
            "cluster": "x".join(map(str, config.cluster)),
            "schedule": info.get("schedule"),
            "scheduler": info.get("scheduler"),
            "swap_ab": config.swaps(dtype, b_col),
            "stages": int(self._lib.hk_gemm_stages()),
            "run_options": str(options),
            "workspace_bytes": int(ws),
            "b_layout": "col" if b_col else "row",
            "cutlass_version": info.get("cutlass"),
            "header_source": manifest.get("header_source"),
            "source_hash": manifest.get("source_hash"),
            "build_flags": " ".join(manifest.get("flags", [])),
            "archs": ",".join(manifest.get("archs", [])),
            "nvcc_version": manifest.get("nvcc_version"),
        }

    def _check(self, rc: int, what: str) -> None:
        if rc != 0:
            text = self._lib.hk_status_string(rc).decode()
            raise build.KernelError(f"{what}: {text} (status {rc})", rc)

    def __call__(self) -> torch.Tensor:
        stream = torch.cuda.current_stream(self._device).cuda_stream
        rc = self._run(self._handle, stream)
        if rc:
            self._check(rc, "launch")
        return self.out

    def __del__(self) -> None:
        handle = getattr(self, "_handle", None)
        if handle:
            self._handle = None
            try:
                self._lib.hk_gemm_destroy(handle)
            except Exception:  # interpreter shutdown: the library may already be gone
                pass


def alignment_problem(m: int, n: int, k: int, dtype: str, b_col: bool) -> str | None:
    """Why TMA / cp.async cannot take this shape (16-byte aligned rows), or None."""
    elems = 16 // ELEMENT_BYTES[dtype]
    out_elems = 4 if dtype == "tf32" else 8  # fp32 out for tf32, 16-bit out otherwise
    if k % elems:
        return f"K={k} must be a multiple of {elems} (16-byte rows of A)"
    if n % out_elems:
        return f"N={n} must be a multiple of {out_elems} (16-byte rows of the output)"
    if not b_col and n % elems:
        return f"N={n} must be a multiple of {elems} (16-byte rows of row-major B)"
    return None


def prepare_gemm(
    a: torch.Tensor,
    b: torch.Tensor,
    config: GemmConfig,
    *,
    alpha: torch.Tensor | None = None,
    options: RunOptions = RunOptions(),
) -> GemmLaunch:
    """Plan `config` for D = alpha * a @ b (a [M, K] row-major, b [K, N] either order)."""
    for t in (a, b):
        if t.data_ptr() % 16:
            raise ValueError("operands must be 16-byte aligned (TMA / cp.async)")
    return GemmLaunch(a, b, config, alpha, options)
