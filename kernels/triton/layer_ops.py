"""The memory-bound kernels of a decoder layer: RMSNorm (optionally fused with the residual add
before it), rotary embedding on q and k, SiLU-and-multiply, and the paged KV-cache append.

Each is one pass over its rows: a program loads a token's row (or a column block of it) into
registers, computes in fp32 and stores in the input type, so the kernel moves the bytes the
problem counts and nothing else. Rows are whole per program where they fit (hidden sizes up to
32,768: the reduction of RMSNorm needs the row), as vLLM's and SGLang's CUDA kernels do. The
public launchers check shapes, allocate outputs and return a launch that only starts the kernel.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import torch
import triton
import triton.language as tl

MAX_ROW = 32768  # RMSNorm keeps a row in registers: 64 fp32 per thread at 16 warps
VEC_BYTES = 16  # one 128-bit access per thread per step


@dataclass
class LayerOpLaunch:
    """A prepared call of `kernel[grid](*args, **meta)`: `outputs` are written by every call;
    `out` is the first of them. Kept as parts, not a closure, so an ahead-of-time compile can
    specialize the kernel on exactly these arguments (tests/kernels/test_layer_ops_aot.py)."""

    kernel: Any  # a triton.jit function
    grid: tuple[int, ...]
    args: tuple
    meta: dict[str, Any]  # constexprs and num_warps
    outputs: tuple[torch.Tensor, ...]
    config: dict[str, Any] = field(default_factory=dict)

    @property
    def out(self) -> torch.Tensor:
        return self.outputs[0]

    def __call__(self) -> tuple[torch.Tensor, ...]:
        self.kernel[self.grid](*self.args, **self.meta)
        return self.outputs


def _row_warps(block: int, elem_bytes: int) -> int:
    """Warps for one row of `block` elements: about four 16-byte vectors per thread, rounded
    down to a power of two (Triton's rule; rope's 40 heads x 128 asked for 5 on the H200)."""
    per_warp = 32 * 4 * max(1, VEC_BYTES // elem_bytes)
    warps = max(1, min(16, block // per_warp))
    return 1 << (warps.bit_length() - 1)


# --- RMSNorm, with or without the residual add --------------------------------------------

# From this row width (elements, a power of two) the weight is loaded after the row's sum. One
# H200 run of both orders (results/h200/add_rmsnorm-weight-s84, add-RMSNorm, m 1-8192): the
# early load took 0.78-0.94x the late one's time at n 4096 and 8192 for m <= 256, and 0.99-1.09x
# at n 16384 (1.09x at m 256). Why: at 16384 the early load holds the weight's 32 values a
# thread across the sum, and add-RMSNorm's 16-warp program takes 77 registers (Triton 3.6; 75
# under 3.9), one program per SM, where the late load's 62 fit two (tests/kernels/
# test_layer_ops_aot.py checks it): 256 rows run in two waves instead of one.
WEIGHT_LATE_MIN_N = 16384
# The two-pass persistent kernel (a chunk of the row at a time, the row read twice, the second
# time from L2), torch.compile's looped reduction's plan: a rung only (own-triton-looped), never
# the headline's pick. At N 16384, m >= 512 torch.compile's kernel ran 0.88-0.99x the one-pass
# kernel's time (results/h200/README.md, session 84). This kernel's first config (4 programs of 8
# warps per SM) lost 1.02-1.65x to the one-pass kernel there: Nsight Compute put the loss in
# latency (47% achieved occupancy against torch.compile's 89%), not bytes (DRAM reads 277 MB
# against 268: the second read hits L2). The config below (16 warps, 34 registers, three
# programs resident per SM) has not run on a GPU (results/h200/README.md, "Owed runs").
LOOPED_CHUNK = 4096
LOOPED_PER_SM = 16  # programs per SM in the grid; how many are resident is the registers' say
LOOPED_WARPS = 16  # 8 elements a thread per 4096-wide chunk


@triton.jit
def _rmsnorm_kernel(
    # pointers
    x_ptr,
    res_ptr,
    w_ptr,
    y_ptr,
    res_out_ptr,
    # sizes and strides (elements)
    n,
    stride_x,
    stride_res,
    stride_y,
    stride_res_out,
    eps,
    # meta-parameters
    BLOCK_N: tl.constexpr,
    HAS_RESIDUAL: tl.constexpr,
    WEIGHT_LATE: tl.constexpr = False,
):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK_N)
    mask = offs < n
    x = tl.load(x_ptr + row * stride_x + offs, mask=mask, other=0.0).to(tl.float32)
    # The weight is loaded here, before the row's sum, for rows up to 8192 wide: loaded after it
    # (as first written), its loads issue only after the sum's CTA barrier, a second memory
    # round trip in series (the sm_90 SASS showed the LDGs behind BAR.SYNC), where one row is
    # the whole kernel's work. Rows of 16384 (WEIGHT_LATE, prepare_rmsnorm's rule) load it after
    # the sum: there the early load costs add-RMSNorm a program per SM (WEIGHT_LATE_MIN_N).
    if not WEIGHT_LATE:
        w = tl.load(w_ptr + offs, mask=mask, other=0.0)
    if HAS_RESIDUAL:
        # The sum feeds the norm unrounded; the stored residual is rounded (vLLM's order).
        x += tl.load(res_ptr + row * stride_res + offs, mask=mask, other=0.0).to(tl.float32)
        tl.store(
            res_out_ptr + row * stride_res_out + offs,
            x.to(res_out_ptr.dtype.element_ty),
            mask=mask,
        )
    rstd = tl.rsqrt(tl.sum(x * x, axis=0) / n + eps)
    if WEIGHT_LATE:
        w = tl.load(w_ptr + offs, mask=mask, other=0.0)
    y = x * rstd * w.to(tl.float32)
    tl.store(y_ptr + row * stride_y + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _rmsnorm_looped_kernel(
    # pointers
    x_ptr,
    res_ptr,
    w_ptr,
    y_ptr,
    res_out_ptr,
    # sizes and strides (elements)
    m,
    n,
    stride_x,
    stride_res,
    stride_y,
    stride_res_out,
    eps,
    # meta-parameters
    CHUNK: tl.constexpr,
    HAS_RESIDUAL: tl.constexpr,
):
    # Persistent: the grid is a few programs per SM, each taking rows m apart by the grid, so the
    # rows in flight (whose second read should hit L2) stay a few per SM.
    offs = tl.arange(0, CHUNK)
    for r in range(tl.program_id(0), m, tl.num_programs(0)):
        row = tl.cast(r, tl.int64)  # the interpreter's range yields Python ints
        # pass 1: the sum of squares (and the stored residual), a chunk at a time
        acc = tl.zeros([CHUNK], tl.float32)
        for start in range(0, n, CHUNK):
            cols = start + offs
            mask = cols < n
            x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=0.0).to(tl.float32)
            if HAS_RESIDUAL:
                x += tl.load(res_ptr + row * stride_res + cols, mask=mask, other=0.0).to(tl.float32)
                tl.store(
                    res_out_ptr + row * stride_res_out + cols,
                    x.to(res_out_ptr.dtype.element_ty),
                    mask=mask,
                )
            acc += x * x
        rstd = tl.rsqrt(tl.sum(acc, axis=0) / n + eps)
        # pass 2: the row read again (from L2: it was read a moment ago) and the same fp32 sum
        # formed again, unrounded as in pass 1, then scaled by the weight
        for start in range(0, n, CHUNK):
            cols = start + offs
            mask = cols < n
            x = tl.load(
                x_ptr + row * stride_x + cols, mask=mask, other=0.0, eviction_policy="evict_first"
            ).to(tl.float32)
            if HAS_RESIDUAL:
                x += tl.load(
                    res_ptr + row * stride_res + cols,
                    mask=mask,
                    other=0.0,
                    eviction_policy="evict_first",
                ).to(tl.float32)
            w = tl.load(w_ptr + cols, mask=mask, other=0.0)
            y = x * rstd * w.to(tl.float32)
            tl.store(y_ptr + row * stride_y + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


def prepare_rmsnorm(
    x: torch.Tensor,
    weight: torch.Tensor,
    residual: torch.Tensor | None = None,
    eps: float = 1e-5,
    weight_late: bool | None = None,
    looped: bool = False,
    sms: int | None = None,
) -> LayerOpLaunch:
    """x [m, n] (and residual [m, n]), weight [n] -> y [m, n] (and the new residual [m, n]).
    `weight_late`: the one-pass kernel loads the weight after the row's sum rather than before
    it; None takes WEIGHT_LATE_MIN_N's rule (the rung own-triton-weight-late passes True).
    `looped`: the two-pass persistent kernel (a chunk of the row at a time, the row read twice;
    the rung own-triton-looped) rather than the one-pass one (the row held in registers).
    `sms`: the SM count that sizes the two-pass grid (None: the device's; on the CPU, 1)."""
    m, n = x.shape
    if weight.shape != (n,) or (residual is not None and residual.shape != x.shape):
        raise ValueError(f"rmsnorm: weight {tuple(weight.shape)} / residual vs x {tuple(x.shape)}")
    if n > MAX_ROW:
        raise ValueError(f"rmsnorm: row of {n} > {MAX_ROW} elements is not implemented")
    if x.stride(1) != 1 or weight.stride(0) != 1:
        raise ValueError("rmsnorm: rows must be contiguous")
    block = triton.next_power_of_2(n)
    y = torch.empty_like(x)
    fused = residual is not None
    res = residual if residual is not None else x
    res_out = torch.empty_like(x) if fused else y
    strides = (x.stride(0), res.stride(0), y.stride(0), res_out.stride(0))
    ptrs = (x, res, weight, y, res_out)
    kind = "add_rmsnorm" if fused else "rmsnorm"
    outputs = (y, res_out) if fused else (y,)
    if looped:
        if sms is None:
            cuda = x.device.type == "cuda"
            sms = torch.cuda.get_device_properties(x.device).multi_processor_count if cuda else 1
        chunk = min(block, LOOPED_CHUNK)
        warps = min(LOOPED_WARPS, _row_warps(chunk, x.element_size()) * 4)
        grid = (max(1, min(m, LOOPED_PER_SM * sms)),)
        meta = {"CHUNK": chunk, "HAS_RESIDUAL": fused, "num_warps": warps}
        config = {"kernel": f"{kind}_looped", "chunk": chunk, "num_warps": warps,
                  "programs": grid[0]}  # fmt: skip
        args = (*ptrs, m, n, *strides, eps)
        return LayerOpLaunch(_rmsnorm_looped_kernel, grid, args, meta, outputs, config)
    warps = _row_warps(block, x.element_size())
    if weight_late is None:
        weight_late = block >= WEIGHT_LATE_MIN_N
    meta = {"BLOCK_N": block, "HAS_RESIDUAL": fused, "WEIGHT_LATE": weight_late, "num_warps": warps}
    config = {"kernel": kind, "block_n": block, "num_warps": warps}
    if weight_late:  # rows of the early load keep the keys their stored rows have
        config["weight_load"] = "after the row's sum"
    return LayerOpLaunch(_rmsnorm_kernel, (m,), (*ptrs, n, *strides, eps), meta, outputs, config)


# --- SiLU and multiply ----------------------------------------------------------------------


@triton.jit
def _silu_mul_kernel(
    # pointers
    x_ptr,
    y_ptr,
    # sizes and strides (elements)
    n,
    stride_x,
    stride_y,
    # meta-parameters
    BLOCK: tl.constexpr,
):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    gate = tl.load(x_ptr + row * stride_x + offs, mask=mask, other=0.0).to(tl.float32)
    up = tl.load(x_ptr + row * stride_x + n + offs, mask=mask, other=0.0).to(tl.float32)
    y = gate / (1.0 + tl.exp(-gate)) * up
    tl.store(y_ptr + row * stride_y + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _silu_mul_flat_kernel(
    x_ptr,
    y_ptr,
    total,  # m * n
    n,
    stride_x,
    stride_y,
    BLOCK: tl.constexpr,
):
    # One index over the whole output, as Inductor's pointwise kernels take it: consecutive
    # programs read consecutive bytes, and no block straddles a row's end half empty.
    i = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = i < total
    row = i // n
    col = i % n
    gate = tl.load(x_ptr + row * stride_x + col, mask=mask, other=0.0).to(tl.float32)
    up = tl.load(x_ptr + row * stride_x + n + col, mask=mask, other=0.0).to(tl.float32)
    y = gate / (1.0 + tl.exp(-gate)) * up
    tl.store(y_ptr + row * stride_y + col, y.to(y_ptr.dtype.element_ty), mask=mask)


# How a silu_mul grid walks the output. "flat" (the headline): one index over m x n, so
# consecutive programs read consecutive bytes. "rows": one row's column blocks on the grid's
# second axis, so consecutive programs read rows 2n elements apart. One H200 run
# (results/h200/silu_mul-order-s86, m 8192 and 32768, n 14336 and 18944): "rows", the headline
# until then, took 1.045-1.050x the time of the flat order (and of a row's blocks first, a third
# order measured there and not kept), which ran at 4.38-4.42 TB/s with torch.compile's
# (0.997-1.000x its time).
SILU_ORDERS = ("flat", "rows")


def prepare_silu_mul(x: torch.Tensor, sms: int, order: str = "flat") -> LayerOpLaunch:
    """x [m, 2n] (gate | up) -> y [m, n]. Blocks of 1,024 outputs, or 256 when that would leave
    fewer than four programs per SM (decode: a few rows, so more, shorter programs)."""
    m, two_n = x.shape
    if two_n % 2 or x.stride(1) != 1:
        raise ValueError(f"silu_mul: x {tuple(x.shape)} must be [m, 2n] with contiguous rows")
    if order not in SILU_ORDERS:
        raise ValueError(f"silu_mul: order {order!r}; allowed: {SILU_ORDERS}")
    n = two_n // 2
    block = 1024 if m * triton.cdiv(n, 1024) >= 4 * sms else 256
    warps = max(1, min(8, block * x.element_size() // (32 * VEC_BYTES)))
    y = torch.empty((m, n), dtype=x.dtype, device=x.device)
    # rows before session 86 carry no "order": theirs was "rows"
    config = {"kernel": "silu_mul", "block": block, "num_warps": warps, "order": order}
    strides = (x.stride(0), y.stride(0))
    if order == "flat":
        return LayerOpLaunch(
            _silu_mul_flat_kernel,
            (triton.cdiv(m * n, block),),
            (x, y, m * n, n, *strides),
            {"BLOCK": block, "num_warps": warps},
            (y,),
            config,
        )
    return LayerOpLaunch(
        _silu_mul_kernel,
        (m, triton.cdiv(n, block)),
        (x, y, n, *strides),
        {"BLOCK": block, "num_warps": warps},
        (y,),
        config,
    )


# --- rotary embedding (NeoX halves) ---------------------------------------------------------


@triton.jit
def _rotate_heads(
    x_ptr, out_ptr, heads, stride_h, stride_oh, cos, sin, HALF: tl.constexpr, BLOCK_H: tl.constexpr
):
    """Rotate one token's heads [heads, 2 * HALF]: (x1, x2) -> (x1 cos - x2 sin, x2 cos + x1 sin)."""
    h = tl.arange(0, BLOCK_H)[:, None]
    d = tl.arange(0, HALF)[None, :]
    mask = h < heads
    x1 = tl.load(x_ptr + h * stride_h + d, mask=mask, other=0.0).to(tl.float32)
    x2 = tl.load(x_ptr + h * stride_h + HALF + d, mask=mask, other=0.0).to(tl.float32)
    ty = out_ptr.dtype.element_ty
    tl.store(out_ptr + h * stride_oh + d, (x1 * cos - x2 * sin).to(ty), mask=mask)
    tl.store(out_ptr + h * stride_oh + HALF + d, (x2 * cos + x1 * sin).to(ty), mask=mask)


@triton.jit
def _rope_kernel(
    # pointers
    q_ptr,
    k_ptr,
    pos_ptr,
    cos_sin_ptr,
    q_out_ptr,
    k_out_ptr,
    # sizes and strides (elements)
    q_heads,
    kv_heads,
    stride_qt,
    stride_qh,
    stride_kt,
    stride_kh,
    stride_qot,
    stride_qoh,
    stride_kot,
    stride_koh,
    stride_cs,
    # meta-parameters
    HALF: tl.constexpr,
    BLOCK_HQ: tl.constexpr,
    BLOCK_HKV: tl.constexpr,
):
    t = tl.program_id(0).to(tl.int64)
    pos = tl.load(pos_ptr + t)
    d = tl.arange(0, HALF)
    cos = tl.load(cos_sin_ptr + pos * stride_cs + d)[None, :]
    sin = tl.load(cos_sin_ptr + pos * stride_cs + HALF + d)[None, :]
    _rotate_heads(
        q_ptr + t * stride_qt, q_out_ptr + t * stride_qot, q_heads, stride_qh, stride_qoh,
        cos, sin, HALF, BLOCK_HQ,
    )  # fmt: skip
    _rotate_heads(
        k_ptr + t * stride_kt, k_out_ptr + t * stride_kot, kv_heads, stride_kh, stride_koh,
        cos, sin, HALF, BLOCK_HKV,
    )  # fmt: skip


def prepare_rope(
    q: torch.Tensor, k: torch.Tensor, positions: torch.Tensor, cos_sin: torch.Tensor
) -> LayerOpLaunch:
    """q [m, Hq, D], k [m, Hkv, D], positions [m] int64, cos_sin [P, D] fp32 (cos | sin) ->
    rotated q and k (new tensors). D a power of two; one program per token."""
    m, hq, d = q.shape
    hkv = k.shape[1]
    if k.shape != (m, hkv, d) or positions.shape != (m,) or cos_sin.shape[1] != d:
        raise ValueError(f"rope: q {tuple(q.shape)}, k {tuple(k.shape)}, cos_sin {cos_sin.shape}")
    if d & (d - 1) or q.stride(2) != 1 or k.stride(2) != 1 or cos_sin.stride(1) != 1:
        raise ValueError(f"rope: head_dim {d} must be a power of two with contiguous heads")
    q_out, k_out = torch.empty_like(q), torch.empty_like(k)
    bq, bk = triton.next_power_of_2(hq), triton.next_power_of_2(hkv)
    warps = _row_warps((bq + bk) * d, q.element_size())

    args = (
        q, k, positions, cos_sin, q_out, k_out,
        hq, hkv, q.stride(0), q.stride(1), k.stride(0), k.stride(1),
        q_out.stride(0), q_out.stride(1), k_out.stride(0), k_out.stride(1), cos_sin.stride(0),
    )  # fmt: skip
    meta = {"HALF": d // 2, "BLOCK_HQ": bq, "BLOCK_HKV": bk, "num_warps": warps}
    config = {"kernel": "rope_neox", "num_warps": warps}
    return LayerOpLaunch(_rope_kernel, (m,), args, meta, (q_out, k_out), config)


# --- paged KV-cache append ------------------------------------------------------------------


@triton.jit
def _kv_append_kernel(
    # pointers
    key_ptr,
    value_ptr,
    k_cache_ptr,
    v_cache_ptr,
    slot_ptr,
    # sizes and strides (elements)
    row,
    stride_kt,
    stride_vt,
    # meta-parameters
    BLOCK: tl.constexpr,
):
    t = tl.program_id(0).to(tl.int64)
    slot = tl.load(slot_ptr + t)
    offs = tl.arange(0, BLOCK)
    # A negative slot is a padding token (vLLM's convention): nothing is written.
    mask = (offs < row) & (tl.zeros([BLOCK], tl.int64) + slot >= 0)
    k = tl.load(key_ptr + t * stride_kt + offs, mask=mask)
    v = tl.load(value_ptr + t * stride_vt + offs, mask=mask)
    tl.store(k_cache_ptr + slot * row + offs, k, mask=mask)
    tl.store(v_cache_ptr + slot * row + offs, v, mask=mask)


def prepare_kv_append(
    key: torch.Tensor,
    value: torch.Tensor,
    k_cache: torch.Tensor,
    v_cache: torch.Tensor,
    slot_mapping: torch.Tensor,
) -> LayerOpLaunch:
    """key, value [T, Hkv, D] into caches [pages, page_size, Hkv, D] (contiguous) at
    slot_mapping [T] int64 (page * page_size + offset); one program per token."""
    t, hkv, d = key.shape
    if value.shape != key.shape or k_cache.shape[2:] != (hkv, d) or v_cache.shape != k_cache.shape:
        raise ValueError(f"kv_append: key {tuple(key.shape)}, cache {tuple(k_cache.shape)}")
    if not (k_cache.is_contiguous() and v_cache.is_contiguous()):
        raise ValueError("kv_append: caches must be contiguous")
    if key.stride()[1:] != (d, 1) or value.stride()[1:] != (d, 1):
        raise ValueError("kv_append: each token's heads must be contiguous")
    row = hkv * d
    block = triton.next_power_of_2(row)
    warps = _row_warps(block, key.element_size())

    args = (key, value, k_cache, v_cache, slot_mapping, row, key.stride(0), value.stride(0))
    meta = {"BLOCK": block, "num_warps": warps}
    config = {"kernel": "kv_append", "block": block, "num_warps": warps}
    return LayerOpLaunch(_kv_append_kernel, (t,), args, meta, (k_cache, v_cache), config)
