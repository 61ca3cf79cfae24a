"""Own CuTe FMHA forward: library spec per (kernel, dtype, head_dim), and a launcher.

Kernels with one C ABI (online softmax in registers):
  sm80  fmha_sm80.cu  cp.async K/V buffers, ldmatrix + mma.sync m16n8k16, 4 warps; sm_80, sm_90
  sm90  fmha_sm90.cu  the same pipeline on wgmma: Q K^T from shared memory (SS), P V with P in
                      registers (RS), two warpgroups; sm_90a only
  fa3   fmha_sm90_ws.cu  FlashAttention-3's structure on the same wgmmas: a TMA producer
                      warpgroup, two-stage K and V pipelines, two consumer warpgroups in
                      ping-pong, softmax overlapped with P V, one persistent CTA per SM; sm_90a
                      only. Its rungs drop features: fa3-no-pingpong, fa3-no-overlap,
                      fa3-no-pingpong-no-overlap, fa3-no-st16, fa3-static,
                      fa3-not-persistent, each off fa3-t128 (fa3 on 128x128 tiles;
                      fa3 picks its tile per problem, fa3_tile_rule); fa3-exp-emu adds
                      one, fa3-tiles takes FlashAttention-3's tile shapes (WS_FEATURES)

launch = prepare_fmha(q, k, v, causal=True)   # q [B, Hq, Sq, D], k/v [B, Hkv, Skv, D]
out = launch()                                # [B, Hq, Sq, D], on the current stream
"""

from __future__ import annotations

import ctypes
import math
from typing import Any, NamedTuple

import torch

from . import build

BLOCK_M = 128  # query rows per CTA
BLOCK_N = 64  # keys per KV tile of the cp.async kernels
HEAD_DIMS = (64, 128)
DTYPES = {torch.bfloat16: ("bf16", 0), torch.float16: ("fp16", 1)}


class WsFeatures(NamedTuple):
    """The warp-specialized kernel's switches (fmha_sm90_ws.cu's HK_* defines of the same names)."""

    pingpong: int  # HK_PINGPONG: the consumer warpgroups take turns issuing wgmmas
    overlap: int  # HK_OVERLAP: softmax of one KV tile under the P V wgmma of the last
    persistent: int  # HK_PERSISTENT: one CTA per SM looping over tiles (causal: needs dynamic)
    store16: int  # HK_STORE16: the O tile stored 16 bytes per thread (quad_store.h)
    dynamic: int  # HK_DYNAMIC: persistent for causal too, tiles handed out by an atomic counter
    exp_emu: int = 0  # HK_EXP_EMU: one exp2 in this many on the FMA pipe (fmha_common.h); 0 none
    # the tile shapes (HK_BLOCK_M, HK_BLOCK_N; ws_tile): "128" 128 rows x 128 keys (64 at D 256),
    # "fa3" FA3_TILES, "rule" fa3_tile_rule's choice per problem
    tiles: str = "128"


# The FA3-class kernel and its rungs. fa3 runs on tile shapes chosen per problem (fa3_tile_rule:
# FlashAttention-3's, session 63); fa3-t128 is fa3 on session 62's 128x128 tiles, and each
# other rung switches one feature off fa3-t128 (fa3-exp-emu adds one; fa3-tiles takes FA3's
# non-causal shapes at every point). Session 62 made two of the features defaults on one H200
# run each: the 16-byte O store (fmha_prefill-st16-s62: faster at 29 of 30 points, D 128 at
# 4k-16k 1.01x cuDNN from 0.96x) and the atomic tile counter (fmha_prefill-dyn-s62: causal
# 1.00-1.17x the static schedule, non-causal 0.98-1.01x).
WS_FEATURES = {
    "fa3": WsFeatures(1, 1, 1, 1, 1, tiles="rule"),
    "fa3-t128": WsFeatures(1, 1, 1, 1, 1),
    "fa3-no-pingpong": WsFeatures(0, 1, 1, 1, 1),
    "fa3-no-overlap": WsFeatures(1, 0, 1, 1, 1),
    "fa3-no-pingpong-no-overlap": WsFeatures(0, 0, 1, 1, 1),
    "fa3-no-st16": WsFeatures(1, 1, 1, 0, 1),  # 2-byte O stores
    "fa3-static": WsFeatures(1, 1, 1, 1, 0),  # a static share per CTA; causal one CTA per tile
    "fa3-not-persistent": WsFeatures(1, 1, 0, 1, 0),  # one CTA per tile, causal or not
    # adds one: a quarter of the exponentials on the FMA pipe, for head_dim 64, where the SFU
    # needs about as long as the tensor cores (H200, fa3-exp-emu-s63: no faster at D 64,
    # 0.944x cuDNN against fa3-t128's 0.951x; 6% slower at D 128)
    "fa3-exp-emu": WsFeatures(1, 1, 1, 1, 1, 4),
    "fa3-tiles": WsFeatures(1, 1, 1, 1, 1, tiles="fa3"),
}
# FlashAttention-3's bf16 forward tiles on sm_90 (its hopper/tile_size.h), (query rows, keys)
# per head_dim, non-causal: at 64, 192 rows worked by three consumer warpgroups; at 128, 176
# keys; at 256, 80 keys, which with two stages fills shared memory. None divides a power-of-two
# length: the kernel takes partial tiles (TMA zero-fills, the last KV tile masked, rows past
# q_len not stored).
FA3_TILES = {64: (192, 128), 128: (128, 176), 256: (128, 80)}
SM90_SMEM_BYTES = 227 * 1024  # the opt-in maximum per block
KERNELS = {
    "sm80": ("fmha_sm80.cu", ("sm_80", "sm_90")),
    "sm90": ("fmha_sm90.cu", ("sm_90a",)),
    **{name: ("fmha_sm90_ws.cu", ("sm_90a",)) for name in WS_FEATURES},
}


def head_dims(kernel: str) -> tuple[int, ...]:
    """Head dims `kernel` is built for (the warp-specialized one also takes 256)."""
    return (64, 128, 256) if kernel in WS_FEATURES else HEAD_DIMS


def fa3_tile_rule(head_dim: int, causal: bool, q_len: int | None) -> tuple[int, int]:
    """fa3's tile per problem: FlashAttention-3's choice (FA3_TILES, but 128 keys at D 128 when
    causal, where the diagonal's masked share grows with the tile), and 128 rows at D 64 for
    causal q_len < 2048. Measured on one H200 (fa3-tiles-s63, FA3's non-causal shapes at every
    point against 128x128): at D 128 causal 176 keys were 0.96x / 0.91x at 2k / 1k tokens,
    1.00-1.03x at 4k-16k; at D 64 causal 1k 192 rows were 0.92x (1.07x at 2k); everywhere else
    FA3's shapes were faster or level (non-causal 1.03-1.18x)."""
    if head_dim == 128 and causal:
        return (128, 128)
    if head_dim == 64 and causal and q_len is not None and q_len < 2048:
        return (128, 128)
    return FA3_TILES[head_dim]


def ws_tile(
    kernel: str, head_dim: int, causal: bool = False, q_len: int | None = None
) -> tuple[int, int]:
    """(query rows, keys) per tile of the warp-specialized kernel `kernel` on a problem (its
    head_dim, causal mask, q_len; without them a non-causal long one): fa3_tile_rule's for fa3,
    FA3_TILES for fa3-tiles; else 128 rows (two consumer warpgroups) and 128 keys up to
    head_dim 128, where the consumers' S and O accumulators fit the registers, 64 at 256."""
    tiles = WS_FEATURES[kernel].tiles
    if tiles == "rule":
        return fa3_tile_rule(head_dim, causal, q_len)
    if tiles == "fa3":
        return FA3_TILES[head_dim]
    return (128, 128 if head_dim <= 128 else 64)


def stages(block_m: int, block_n: int, head_dim: int) -> int:
    """K/V pipeline stages of the warp-specialized kernel: as many as fit shared memory beside
    the Q tile (1 KiB kept for the barriers), at most three (the Gluon FMHA's tuner picked three
    at D 128 on the H200): three at head_dim <= 128 with 128-key tiles (224 KiB at D 128), two at
    256 and with FA3's 176- and 80-key tiles."""
    q_bytes, kv_bytes = 2 * block_m * head_dim, 2 * block_n * head_dim  # 16-bit elements
    n = min(3, (SM90_SMEM_BYTES - 1024 - q_bytes) // (2 * kv_bytes))
    # one stage leaves the producer nothing to load ahead; three consumers at 160 registers hold
    # a 64-row O accumulator of head_dim 64 only (fmha_sm90_ws.h's register split)
    if n < 2 or (block_m == 192 and head_dim != 64):
        raise ValueError(f"tile {block_m}x{block_n} at head_dim {head_dim}: {n} stages fit")
    return n


def fmha_spec(
    dtype: str,
    head_dim: int,
    kernel: str = "sm80",
    *,
    causal: bool = False,
    q_len: int | None = None,
) -> build.KernelSpec:
    """The library for `kernel` (a KERNELS name), `dtype` (bf16 | fp16) and `head_dim`
    (head_dims(kernel)), for a problem with `causal` and `q_len` where the tile depends on them
    (fa3: ws_tile): sm80 carries sm_80 and sm_90 SASS, the others sm_90a (wgmma) alone."""
    code = {"bf16": 0, "fp16": 1}[dtype]
    source, archs = KERNELS[kernel]
    defines: tuple[tuple[str, int], ...] = (("HK_DTYPE", code), ("HK_HEAD_DIM", head_dim))
    label = f"fmha-{kernel}-{dtype}-d{head_dim}"
    if kernel in WS_FEATURES:
        features = WS_FEATURES[kernel]._asdict()
        block_m, bn = ws_tile(kernel, head_dim, causal, q_len)
        if features.pop("tiles") != "128":  # a choice of the two tile defines, not a switch
            label += f"-{block_m}x{bn}"
        defines += (
            ("HK_BLOCK_M", block_m),
            ("HK_BLOCK_N", bn),
            ("HK_STAGES", stages(block_m, bn, head_dim)),
            *((f"HK_{name.upper()}", int(on)) for name, on in features.items()),
        )
    return build.KernelSpec(
        source,
        defines,
        archs,
        label,
        # exp2 as one MUFU.EX2, reciprocal without the IEEE fix-up: softmax needs neither.
        extra_flags=("--use_fast_math",),
    )


def shape_problem(
    q_len: int,
    kv_len: int,
    head_dim: int,
    dtype: str,
    causal: bool,
    paged: bool = False,
    kernel: str = "sm80",
) -> str | None:
    """Why `kernel` cannot take this shape, or None."""
    if dtype not in ("bf16", "fp16"):
        return "own CUTLASS FMHA takes bf16 or fp16"
    if head_dim not in head_dims(kernel):
        return f"own CUTLASS FMHA ({kernel}) takes head_dim {head_dims(kernel)}"
    if paged:
        return "own CUTLASS FMHA reads dense K/V only"
    # the TMA kernel takes partial tiles; the cp.async kernels do not
    if kernel not in WS_FEATURES and (q_len % BLOCK_M or kv_len % BLOCK_N):
        return f"own CUTLASS FMHA ({kernel}) needs q_len % {BLOCK_M} == 0 and kv_len % {BLOCK_N} == 0 (no partial tiles)"
    if causal and q_len > kv_len:
        return "causal needs q_len <= kv_len"
    return None


def _bind(lib: ctypes.CDLL) -> ctypes.CDLL:
    if getattr(lib, "_hk_bound", False):
        return lib
    c_int, c_void = ctypes.c_int, ctypes.c_void_p
    lib.hk_fmha_plan.argtypes = [c_void] * 4 + [c_int] * 5
    lib.hk_fmha_plan.argtypes += [ctypes.POINTER(ctypes.c_int64), ctypes.c_float, c_int]
    lib.hk_fmha_plan.argtypes += [ctypes.POINTER(c_void)]
    lib.hk_fmha_plan.restype = c_int
    lib.hk_fmha_run.argtypes = [c_void, c_void]
    lib.hk_fmha_run.restype = c_int
    lib.hk_fmha_destroy.argtypes = [c_void]
    lib.hk_fmha_destroy.restype = None
    if hasattr(lib, "hk_fmha_bind_workspace"):  # the warp-specialized library's tile counter
        lib.hk_fmha_workspace_bytes.argtypes = []
        lib.hk_fmha_workspace_bytes.restype = c_int
        lib.hk_fmha_bind_workspace.argtypes = [c_void, c_void]
        lib.hk_fmha_bind_workspace.restype = c_int
    lib.hk_status_string.argtypes = [c_int]
    lib.hk_status_string.restype = ctypes.c_char_p
    lib._hk_bound = True  # type: ignore[attr-defined]  # our mark: bound once
    return lib


class FmhaLaunch:
    """A planned attention forward: call it to launch on the current stream; returns O.

    One launch of a plan in flight at a time: fa3's tile counter lives with the plan, and two
    launches at once (two streams, no event between) would share it. It satisfies
    harness_kernels.launch.Launch."""

    out: torch.Tensor  # [B, Hq, Sq, D]
    config: dict[str, Any]

    def __init__(
        self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool, kernel: str = "sm80"
    ):
        if q.dtype not in DTYPES or k.dtype != q.dtype or v.dtype != q.dtype:
            raise ValueError(f"dtype {q.dtype}: need bf16 or fp16 q, k, v")
        B, Hq, Sq, D = q.shape
        Hkv, Skv = k.shape[1], k.shape[2]
        if k.shape != v.shape or k.shape[0] != B or k.shape[3] != D:
            raise ValueError(
                f"k {tuple(k.shape)} / v {tuple(v.shape)} do not match q {tuple(q.shape)}"
            )
        dtype = DTYPES[q.dtype][0]
        if kernel not in KERNELS:
            raise ValueError(f"kernel {kernel!r}; allowed: {', '.join(KERNELS)}")
        if why := shape_problem(Sq, Skv, D, dtype, causal, kernel=kernel):
            raise ValueError(why)
        for name, t in (("q", q), ("k", k), ("v", v)):
            if t.stride(3) != 1:
                raise ValueError(f"{name} needs unit stride along head_dim")
        self.out = torch.empty((B, Hq, Sq, D), dtype=q.dtype, device=q.device)
        lib, manifest = build.load(fmha_spec(dtype, D, kernel, causal=causal, q_len=Sq))
        self._lib = _bind(lib)
        strides = [t.stride(i) for t in (q, k, v, self.out) for i in range(3)]  # batch, head, row
        self._keep = (q, k, v)  # the plan holds raw pointers into these
        handle = ctypes.c_void_p()
        with torch.cuda.device(q.device):
            rc = self._lib.hk_fmha_plan(
                q.data_ptr(),
                k.data_ptr(),
                v.data_ptr(),
                self.out.data_ptr(),
                B,
                Hq,
                Hkv,
                Sq,
                Skv,
                (ctypes.c_int64 * 12)(*strides),
                1.0 / math.sqrt(D),
                int(causal),
                ctypes.byref(handle),
            )
        if rc:
            raise build.KernelError(
                f"plan: {self._lib.hk_status_string(rc).decode()} (status {rc})", rc
            )
        self._handle: ctypes.c_void_p | None = handle
        # The tile counter's zeroed ints (fa3's HK_DYNAMIC), from torch's allocator: freed with
        # this object, no device-wide sync as a cudaFree in the library would be.
        self._workspace: torch.Tensor | None = None
        self._workspace_stream: torch.cuda.Stream | None = None
        if hasattr(self._lib, "hk_fmha_bind_workspace") and (
            nbytes := self._lib.hk_fmha_workspace_bytes()
        ):
            self._workspace = torch.zeros(nbytes, dtype=torch.uint8, device=q.device)
            self._workspace_stream = torch.cuda.current_stream(q.device)
            self._workspace_stream.synchronize()  # zeroed before any stream runs it
            if rc := self._lib.hk_fmha_bind_workspace(handle, self._workspace.data_ptr()):
                raise build.KernelError(
                    f"workspace: {self._lib.hk_status_string(rc).decode()} (status {rc})", rc
                )
        self._run = self._lib.hk_fmha_run
        self._device = q.device
        info = build.describe(self._lib)
        self.config = {
            "library": "own-cutlass",
            "kernel": info.get("kernel"),
            "tile": info.get("tile"),
            "warps": info.get("warps"),
            "schedule": info.get("schedule"),
            "cutlass_version": info.get("cutlass"),
            "header_source": manifest.get("header_source"),
            "source_hash": manifest.get("source_hash"),
            "build_flags": " ".join(manifest.get("flags", [])),
            "archs": ",".join(manifest.get("archs", [])),
            "nvcc_version": manifest.get("nvcc_version"),
        }

    def __call__(self) -> torch.Tensor:
        stream = torch.cuda.current_stream(self._device)
        if self._workspace is not None and stream != self._workspace_stream:
            # freed while this launch runs, the counters must not go to the allocation stream's
            # next tensor before it ends
            self._workspace.record_stream(stream)
        rc = self._run(self._handle, stream.cuda_stream)
        if rc:
            raise build.KernelError(
                f"launch: {self._lib.hk_status_string(rc).decode()} (status {rc})", rc
            )
        return self.out

    def __del__(self) -> None:
        handle = getattr(self, "_handle", None)
        if handle:
            self._handle = None
            try:
                self._lib.hk_fmha_destroy(handle)
            except Exception:  # interpreter shutdown: the library may already be gone
                pass


def prepare_fmha(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, *, causal: bool, kernel: str = "sm80"
) -> FmhaLaunch:
    """Plan the forward pass (scale 1/sqrt(D), bottom-right causal alignment when `causal`)."""
    return FmhaLaunch(q, k, v, causal, kernel)


__all__ = [
    "BLOCK_M",
    "BLOCK_N",
    "FA3_TILES",
    "HEAD_DIMS",
    "KERNELS",
    "WS_FEATURES",
    "FmhaLaunch",
    "WsFeatures",
    "fa3_tile_rule",
    "fmha_spec",
    "head_dims",
    "prepare_fmha",
    "ws_tile",
]
