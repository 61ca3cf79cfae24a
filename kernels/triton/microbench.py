"""Triton kernels of the microbenchmarks: stream read / write / copy, pointer chase, FMA chains.

Like every kernel here, it imports nothing from the harness; the public launchers check
arguments, allocate outputs and return zero-argument closures. Their Launch is this module's own
(run, config) pair, older than the harness_kernels.launch.Launch protocol and not (yet) under it:
harness.providers.microbench calls .run.

Stream kernels move `stream_blocks` blocks over a working set of `n_blocks` blocks, i.e.
stream_blocks / n_blocks passes. Each read program walks a contiguous share of that stream from
its own evenly spaced starting block, so a block is re-read only after the whole set has been
read: a set that fits one SM's L1 is re-read from L1, one that fits the L2 from L2, and a larger
one streams from memory on every pass. Write and copy make one pass.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import torch
import triton
import triton.language as tl

BLOCK_BYTES = 16 << 10  # one loop trip moves 16 KiB per program (4 x 16 B per thread at 8 warps)
MIN_ONE_PASS_BLOCK_BYTES = 4 << 10  # 16 B per thread: a one-pass read of a small set narrows to it
STREAM_WARPS = 8
FMA_BLOCK = 1024  # chains per program: 8 independent chains per thread at 4 warps (ILP 8)
FMA_WARPS = 4
CHASE_LANES = 32  # one warp (half an AMD wavefront) follows the chain


@dataclass
class Launch:
    """A launch-only closure plus the configuration it was built with."""

    run: Callable[[], torch.Tensor]
    config: dict = field(default_factory=dict)


@triton.jit
def _share(stream_blocks, n_blocks):
    """This program's contiguous share [lo, hi) of the stream and its first working-set block
    (write and copy: one pass over the set, so shares never meet)."""
    pid = tl.program_id(0).to(tl.int64)
    progs = tl.num_programs(0).to(tl.int64)
    lo = pid * stream_blocks // progs
    hi = (pid + 1) * stream_blocks // progs
    return lo, hi, lo % n_blocks


@triton.jit
def _offsets(BLOCK: tl.constexpr, WRAP: tl.constexpr):
    """A trip's element offsets; a set smaller than a block is read BLOCK / WRAP times per trip,
    so tiny (L1) sets run the same instruction mix per byte as large ones."""
    offs = tl.arange(0, BLOCK)
    if WRAP:
        offs = offs % WRAP
    return offs


@triton.jit
def _stream_read_kernel(
    # pointers
    x_ptr,  # [n_blocks * BLOCK] the working set
    partial_ptr,  # [programs] fp32: each program's sum, so the loads cannot be dropped
    # sizes
    n_blocks,
    stream_blocks,
    # meta-parameters
    BLOCK: tl.constexpr,
    WRAP: tl.constexpr,  # set size in elements when it is smaller than BLOCK, else 0
):
    # Program p walks its share of the stream from block p * n_blocks / P of the set, wrapping:
    # long contiguous runs (the loads pipeline), and at any moment the programs sit on blocks
    # spread evenly over the set, so a block is re-read only after the whole set has been (the
    # reuse distance is the working set: L1, L2 or HBM by size alone). The launcher picks P so
    # that every block is read exactly passes times. (Starting every program at lo % n_blocks
    # put programs one set apart on the same blocks at the same time: sets of 256 MiB-2 GiB read
    # at 8-16 TB/s out of L2 on the H200.)
    pid = tl.program_id(0).to(tl.int64)
    progs = tl.num_programs(0).to(tl.int64)
    lo = pid * stream_blocks // progs
    hi = (pid + 1) * stream_blocks // progs
    blk = (pid * n_blocks // progs) % n_blocks
    offs = _offsets(BLOCK, WRAP)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for _ in range(lo, hi):
        acc += tl.load(x_ptr + blk * BLOCK + offs, cache_modifier=".ca").to(tl.float32)
        blk += 1
        blk = tl.where(blk == n_blocks, 0, blk)
    tl.store(partial_ptr + tl.program_id(0), tl.sum(acc, axis=0))


@triton.jit
def _stream_write_kernel(
    # pointers
    dst_ptr,  # [n_blocks * BLOCK]
    # values and sizes
    value,  # fp32 scalar, converted to the buffer's type
    n_blocks,
    stream_blocks,
    # meta-parameters
    BLOCK: tl.constexpr,
    WRAP: tl.constexpr,  # set size in elements when it is smaller than BLOCK, else 0
):
    lo, hi, blk = _share(stream_blocks, n_blocks)
    offs = _offsets(BLOCK, WRAP)
    vals = (tl.zeros([BLOCK], dtype=tl.float32) + value).to(dst_ptr.dtype.element_ty)
    for _ in range(lo, hi):
        tl.store(dst_ptr + blk * BLOCK + offs, vals)
        blk += 1
        blk = tl.where(blk == n_blocks, 0, blk)


@triton.jit
def _stream_copy_kernel(
    # pointers
    src_ptr,  # [n_blocks * BLOCK]
    dst_ptr,  # [n_blocks * BLOCK]
    # sizes
    n_blocks,
    stream_blocks,
    # meta-parameters
    BLOCK: tl.constexpr,
    WRAP: tl.constexpr,  # set size in elements when it is smaller than BLOCK, else 0
):
    lo, hi, blk = _share(stream_blocks, n_blocks)
    offs = _offsets(BLOCK, WRAP)
    for _ in range(lo, hi):
        tl.store(dst_ptr + blk * BLOCK + offs, tl.load(src_ptr + blk * BLOCK + offs))
        blk += 1
        blk = tl.where(blk == n_blocks, 0, blk)


@triton.jit
def _chase_kernel(
    # pointers
    chase_ptr,  # [words] int32: word i of a slot holds the element index of the next slot
    out_ptr,  # [1] int32: where the chain ended (checked against the host)
    # values
    start,  # element index of the first slot
    hops,
    zero,  # always 0; see below
    # meta-parameters
    LANES: tl.constexpr,
):
    """One program, one dependent load per trip: each address is the value just loaded, so the
    loads serialize and a trip costs one full load-to-use latency of the level that holds the
    working set. Every lane follows the same chain (one transaction per hop); the lanes'
    pointers are offset by lane * zero, which the compiler cannot prove uniform, so AMD's
    backend keeps vector loads through L1 instead of scalar loads through the scalar cache."""
    lanes = tl.arange(0, LANES)
    ptrs = chase_ptr + lanes * zero  # loop-invariant: a hop is still one multiply-add + load
    idx = tl.zeros([LANES], dtype=tl.int32) + start
    for _ in range(hops):
        idx = tl.load(ptrs + idx, cache_modifier=".ca")  # cached in L1: the L1 level exists
    tl.store(out_ptr + lanes, idx, mask=lanes == 0)


@triton.jit
def _fma_kernel(
    # pointers
    x_ptr,  # [elements] fp32 chain starts
    y_ptr,  # [elements] fp32 chain ends
    # values
    a,
    b,
    trips,  # iterations // UNROLL
    # meta-parameters
    BLOCK: tl.constexpr,
    UNROLL: tl.constexpr,
):
    """y = x after trips x UNROLL steps of x <- fma(x, a, b). BLOCK / threads independent chains
    per thread hide the FMA latency (4 cycles on Hopper); the unrolled body keeps loop overhead
    to ~3 instructions per UNROLL x chains FMAs."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    for _ in range(trips):
        for _ in tl.static_range(UNROLL):
            x = tl.fma(x, a, b)
    tl.store(y_ptr + offs, x)


def _stream_geometry(
    t: torch.Tensor, stream_elems: int, programs: int, block_bytes: int = BLOCK_BYTES
) -> dict:
    """Launch geometry {BLOCK, WRAP, n_blocks, stream_blocks, grid} for a 1-D working set `t`."""
    if t.dim() != 1 or not t.is_contiguous():
        raise ValueError("working set: expected a contiguous 1-D tensor")
    n, full = t.numel(), block_bytes // t.element_size()
    if n < full and full % n == 0 and stream_elems % full == 0:
        block, wrap = full, n  # one trip covers the whole set exactly full / n times
    else:
        block, wrap = math.gcd(n, full), 0
    if stream_elems % block:
        raise ValueError(f"stream: {stream_elems} elements is not a multiple of BLOCK {block}")
    stream_blocks = stream_elems // block
    return dict(
        BLOCK=block,
        WRAP=wrap,
        n_blocks=max(1, n // block),
        stream_blocks=stream_blocks,
        grid=max(1, min(programs, stream_blocks)),
    )


def _one_pass_block_bytes(set_bytes: int, programs: int) -> int:
    """The trip size of a one-pass read: BLOCK_BYTES, halved (not below
    MIN_ONE_PASS_BLOCK_BYTES) while the set holds fewer blocks than programs. A 1-8 MiB set
    holds 64-512 blocks of 16 KiB, fewer than a 132-SM GPU's 528 programs, and _read_grid gave
    such a set one program: the H100's cold reads of 1-8 MiB ran at 32-35 GB/s
    (`read_once-s91h`)."""
    size = BLOCK_BYTES
    while size > MIN_ONE_PASS_BLOCK_BYTES and set_bytes // size < programs:
        size //= 2
    return size


def _read_grid(n_blocks: int, passes: int, programs: int) -> int:
    """Programs for the read stream such that every block is read exactly `passes` times: a
    divisor of n_blocks when the set has at least as many blocks as programs (shares then tile
    the set, as they do for one pass over any set), else a divisor of passes (each share then
    covers the set a whole number of times).
    On 132 SMs a power-of-two set runs 128 programs: the 4 idle SMs cost L1/L2 figures ~3%."""
    pool = n_blocks if n_blocks >= programs or passes == 1 else passes
    return max(d for d in range(1, min(programs, pool) + 1) if pool % d == 0)


def _config(kernel: str, g: dict) -> dict:
    return {
        "kernel": kernel,
        "BLOCK": g["BLOCK"],
        "WRAP": g["WRAP"],
        "programs": g["grid"],
        "num_warps": STREAM_WARPS,
    }


def stream_read(x: torch.Tensor, stream_elems: int, programs: int) -> Launch:
    """Sum the virtual stream over x; run() returns the [grid] fp32 per-program partial sums."""
    g = _stream_geometry(x, stream_elems, programs)
    if stream_elems == x.numel() and g["WRAP"] == 0 and g["n_blocks"] < programs:
        block_bytes = _one_pass_block_bytes(x.numel() * x.element_size(), programs)
        g = _stream_geometry(x, stream_elems, programs, block_bytes)
    n, stream = g["n_blocks"], g["stream_blocks"]
    if stream % n:
        raise ValueError("stream: the read stream must be whole passes over the working set")
    g["grid"] = _read_grid(n, stream // n, programs)
    partial = torch.empty(g["grid"], dtype=torch.float32, device=x.device)
    # Programs that start on one block walk the set in step: a set of fewer blocks than programs
    # is read as shared lines (several SMs asking for one L2 line at once), not an L2 stream.
    config = {**_config("stream_read", g), "readers_per_block": -(-g["grid"] // n)}

    def run() -> torch.Tensor:
        _stream_read_kernel[(g["grid"],)](
            x,
            partial,
            g["n_blocks"],
            g["stream_blocks"],
            BLOCK=g["BLOCK"],
            WRAP=g["WRAP"],
            num_warps=STREAM_WARPS,
        )
        return partial

    return Launch(run, config)


def stream_write(dst: torch.Tensor, value: float, stream_elems: int, programs: int) -> Launch:
    """Write `value` over the virtual stream laid onto dst; run() returns dst."""
    g = _stream_geometry(dst, stream_elems, programs)

    def run() -> torch.Tensor:
        _stream_write_kernel[(g["grid"],)](
            dst,
            value,
            g["n_blocks"],
            g["stream_blocks"],
            BLOCK=g["BLOCK"],
            WRAP=g["WRAP"],
            num_warps=STREAM_WARPS,
        )
        return dst

    return Launch(run, _config("stream_write", g))


def stream_copy(src: torch.Tensor, dst: torch.Tensor, stream_elems: int, programs: int) -> Launch:
    """Copy src to dst along the virtual stream; run() returns dst."""
    if src.shape != dst.shape or src.dtype != dst.dtype:
        raise ValueError("copy: src and dst must have the same shape and dtype")
    g = _stream_geometry(src, stream_elems, programs)

    def run() -> torch.Tensor:
        _stream_copy_kernel[(g["grid"],)](
            src,
            dst,
            g["n_blocks"],
            g["stream_blocks"],
            BLOCK=g["BLOCK"],
            WRAP=g["WRAP"],
            num_warps=STREAM_WARPS,
        )
        return dst

    return Launch(run, _config("stream_copy", g))


def pointer_chase(chase: torch.Tensor, start: int, hops: int) -> Launch:
    """Follow the chain `hops` times from `start` with one single-warp program."""
    if chase.dtype != torch.int32 or chase.dim() != 1:
        raise ValueError("chase: expected a 1-D int32 tensor")
    if not 0 <= start < chase.numel():
        raise ValueError(f"start: {start} outside [0, {chase.numel()})")
    out = torch.empty(1, dtype=torch.int32, device=chase.device)

    def run() -> torch.Tensor:
        _chase_kernel[(1,)](chase, out, start, hops, 0, LANES=CHASE_LANES, num_warps=1)
        return out

    return Launch(run, {"kernel": "chase", "programs": 1, "num_warps": 1})


def fma_chains(x: torch.Tensor, a: float, b: float, iterations: int, unroll: int) -> Launch:
    """Run x <- fma(x, a, b) `iterations` times on every element; run() returns the results."""
    if x.dtype != torch.float32 or x.dim() != 1 or x.numel() % FMA_BLOCK:
        raise ValueError(f"x: expected 1-D fp32 with a multiple of {FMA_BLOCK} elements")
    if iterations % unroll:
        raise ValueError(f"iterations: {iterations} is not a multiple of unroll {unroll}")
    y = torch.empty_like(x)
    grid = x.numel() // FMA_BLOCK

    def run() -> torch.Tensor:
        _fma_kernel[(grid,)](
            x, y, a, b, iterations // unroll, BLOCK=FMA_BLOCK, UNROLL=unroll, num_warps=FMA_WARPS
        )
        return y

    return Launch(
        run,
        {
            "kernel": "fma",
            "BLOCK": FMA_BLOCK,
            "UNROLL": unroll,
            "programs": grid,
            "num_warps": FMA_WARPS,
        },
    )


def aot_specs() -> list[dict]:
    """Compile specs [{name, fn, signature, constexprs, attrs, options}] for `harness inspect`:
    the fp32 stream kernels, the chase and the FMA kernel as the providers launch them."""
    ptr16 = [["tt.divisibility", 16]]
    specs = []
    for name, fn, sig in (
        (
            "stream_read",
            _stream_read_kernel,
            dict(x_ptr="*fp32", partial_ptr="*fp32", n_blocks="i32", stream_blocks="i32"),
        ),
        (
            "stream_write",
            _stream_write_kernel,
            dict(dst_ptr="*fp32", value="fp32", n_blocks="i32", stream_blocks="i32"),
        ),
        (
            "stream_copy",
            _stream_copy_kernel,
            dict(src_ptr="*fp32", dst_ptr="*fp32", n_blocks="i32", stream_blocks="i32"),
        ),
    ):
        block = BLOCK_BYTES // 4
        attrs = {(i,): ptr16 for i, t in enumerate(sig.values()) if t.startswith("*")}
        specs.append(
            dict(
                name=name,
                fn=fn,
                signature={**sig, "BLOCK": "constexpr", "WRAP": "constexpr"},
                constexprs={"BLOCK": block, "WRAP": 0},
                attrs=attrs,
                options={"num_warps": STREAM_WARPS},
            )
        )
    specs.append(
        dict(
            name="chase",
            fn=_chase_kernel,
            signature=dict(
                chase_ptr="*i32",
                out_ptr="*i32",
                start="i32",
                hops="i32",
                zero="i32",
                LANES="constexpr",
            ),
            constexprs={"LANES": CHASE_LANES},
            attrs={(0,): ptr16, (1,): ptr16, (4,): ptr16},
            options={"num_warps": 1},
        )
    )
    specs.append(
        dict(
            name="fma",
            fn=_fma_kernel,
            signature=dict(
                x_ptr="*fp32",
                y_ptr="*fp32",
                a="fp32",
                b="fp32",
                trips="i32",
                BLOCK="constexpr",
                UNROLL="constexpr",
            ),
            constexprs={"BLOCK": FMA_BLOCK, "UNROLL": 16},
            attrs={(0,): ptr16, (1,): ptr16},
            options={"num_warps": FMA_WARPS},
        )
    )
    return specs
