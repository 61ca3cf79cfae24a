"""The second launch of a split-K GEMM whose units only store partials (GemmConfig.reduce_apart):
sum each tile's fp32 parts in split order, scale, cast and store C.

Why a second kernel: in gemm_kernel.py's one-launch split-K the last unit of a tile reads every
other unit's partial through its own SM's L2 port, after its main loop. At 256x2304x16384 nt
(Llama-3.1-405B's fused QKV on 8 GPUs) that read sat on the critical path of every tile
(128x256 tiles split 7: 47.7 us under ncu on an H200, session 82), where cuBLAS's split-K GEMM
(29.3 us) hands its partials to a splitKreduce kernel (6.7 us, cold) that reads them on every
SM. Here each program sums a few rows of one tile: a tile's parts are read by tens of SMs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import torch
import triton
import triton.language as tl

from .gemm_kernel import _tile_coords
from .gemm_target import interpreting

# Elements one program sums per part: 8 fp32 per thread of 4 warps, so up to 16 parts' loads
# (128 registers) can be in flight at once.
SUM_ELEMS = 1024
SUM_WARPS = 4


def sum_rows(block_m: int, block_n: int) -> int:
    """Rows of a tile one program sums: SUM_ELEMS elements of the tile's width padded to a power
    of two (a power of two, within the tile)."""
    rows = max(SUM_ELEMS // triton.next_power_of_2(block_n), 1)
    return min(block_m, 1 << (rows.bit_length() - 1))


# fmt: off
@triton.jit
def _splitk_sum_kernel(
    ws_ptr, c, a_scale_ptr, b_scale_ptr,
    M, N, stride_cm, stride_cn,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, GROUP_M: tl.constexpr,
    SPLIT_K: tl.constexpr, ROWS: tl.constexpr, HAS_SCALE: tl.constexpr, BN_POW2: tl.constexpr,
):
    """Program p sums rows [r, r + ROWS) of tile p // (BLOCK_M // ROWS) over its SPLIT_K parts
    (workspace [tiles, SPLIT_K, BLOCK_M, BLOCK_N], tile ids in the GEMM's grouped order; the
    Gluon GEMM's tiles may be 144 wide: columns run to BN_POW2, masked past BLOCK_N)."""
    pid = tl.program_id(axis=0)
    chunks = BLOCK_M // ROWS
    tile = pid // chunks
    r = (pid % chunks) * ROWS
    pid_m, pid_n = _tile_coords(tile, tl.cdiv(M, BLOCK_M), tl.cdiv(N, BLOCK_N), GROUP_M=GROUP_M)
    rows = r + tl.arange(0, ROWS)
    cols = tl.arange(0, BN_POW2)
    in_tile = (rows[:, None] < BLOCK_M) & (cols[None, :] < BLOCK_N)
    tile_elems = BLOCK_M * BLOCK_N
    # int64: the workspace may pass 2**31 bytes (build_launch keeps the `tl` kernel's under 2**31
    # elements; the Gluon GEMM's units fit one wave, a few million elements)
    src = ws_ptr + tile.to(tl.int64) * (SPLIT_K * tile_elems) + rows[:, None] * BLOCK_N + cols[None, :]
    total = tl.zeros((ROWS, BN_POW2), dtype=tl.float32)
    for s in tl.static_range(SPLIT_K):
        # .cg: the partials were written by other SMs in the previous launch; read them from L2
        total += tl.load(src + s * tile_elems, mask=in_tile, other=0.0, cache_modifier=".cg")
    if HAS_SCALE:
        total = total * (tl.load(a_scale_ptr) * tl.load(b_scale_ptr))
    offs_m = pid_m * BLOCK_M + rows
    offs_n = pid_n * BLOCK_N + cols
    mask = (offs_m[:, None] < M) & (offs_n[None, :] < N) & in_tile
    tl.store(c + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn,
             total.to(c.dtype.element_ty), mask=mask)
# fmt: on


@dataclass
class SplitKSum:
    """The prepared second launch: sums `ws` into `out` (MatmulLaunch calls it after the GEMM)."""

    grid: tuple[int, int, int]
    args: tuple
    constexprs: dict[str, Any]
    _runner: Any = None
    _runner_args: tuple = field(default=())

    def __call__(self) -> None:
        if self._runner is not None:
            self._runner(*self._runner_args)
        else:
            _splitk_sum_kernel[self.grid](*self.args, **self.constexprs, num_warps=SUM_WARPS)

    def bind_compiled(self) -> None:
        """Compile (one JIT launch) and keep the compiled kernel for direct launches."""
        kernel = _splitk_sum_kernel[self.grid](*self.args, **self.constexprs, num_warps=SUM_WARPS)
        kernel = kernel.result() if hasattr(kernel, "result") else kernel
        if not interpreting() and hasattr(kernel, "packed_metadata"):
            names = _splitk_sum_kernel.arg_names[len(self.args) :]
            self._runner = kernel[self.grid]
            self._runner_args = (*self.args, *(self.constexprs[n] for n in names))


def splitk_sum(
    ws: torch.Tensor,
    out: torch.Tensor,
    a_scale: torch.Tensor | None,
    b_scale: torch.Tensor | None,
    tiles: int,
    block_m: int,
    block_n: int,
    group_m: int,
    split_k: int,
) -> SplitKSum:
    """The second launch for a GEMM of `tiles` output tiles whose units stored `split_k` parts."""
    m, n = out.shape
    rows = sum_rows(block_m, block_n)
    args = (ws, out, a_scale, b_scale, m, n, out.stride(0), out.stride(1))
    constexprs = dict(
        BLOCK_M=block_m,
        BLOCK_N=block_n,
        GROUP_M=group_m,
        SPLIT_K=split_k,
        ROWS=rows,
        HAS_SCALE=a_scale is not None,
        BN_POW2=triton.next_power_of_2(block_n),
    )
    return SplitKSum((tiles * (block_m // rows), 1, 1), args, constexprs)
