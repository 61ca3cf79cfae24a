"""Our attention layouts into other libraries' and back: pure tensor functions (CPU-testable).

Ours (harness.problems.attention): q [B, Hq, Sq, D]; dense k, v [B, Hkv, Skv, D]; a paged cache
[pages, page_size, Hkv, D] with block_table [B, pages_per_seq] int32 and cache_seqlens [B] int32.
Theirs:
  BSHD     [B, S, H, D]: flash-attn 2 and 4.
  tokens   [B * S, H, D], sequence b's tokens in rows b*S .. b*S + S - 1: FlashInfer's ragged
           ("NHD") tensors, indexed by an indptr [B + 1] of row offsets.
  CSR pages FlashInfer's page table: indptr [B + 1] into indices (the pages of every sequence,
           concatenated) and last_page_len [B] in [1, page_size] (0 for an empty sequence).
The copies are made in prepare, outside the timed window; the way back is a view, for the check.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import torch


def to_bshd(x: torch.Tensor) -> torch.Tensor:
    """[B, H, S, D] -> [B, S, H, D], contiguous (a copy unless S or H is 1)."""
    return x.transpose(1, 2).contiguous()


def bshd_to_ours(o: torch.Tensor) -> torch.Tensor:
    """[B, S, H, D] -> [B, H, S, D] (a view)."""
    return o.transpose(1, 2)


def to_tokens(x: torch.Tensor) -> torch.Tensor:
    """[B, H, S, D] -> [B * S, H, D], token-major, contiguous."""
    B, H, S, D = x.shape
    return x.transpose(1, 2).reshape(B * S, H, D).contiguous()


def tokens_to_ours(o: torch.Tensor, batch: int) -> torch.Tensor:
    """[B * S, H, D] -> [B, H, S, D] (a view)."""
    tokens, H, D = o.shape
    return o.view(batch, tokens // batch, H, D).transpose(1, 2)


def uniform_indptr(batch: int, length: int, device: torch.device | str = "cpu") -> torch.Tensor:
    """Row offsets of `batch` sequences of `length` tokens each: [0, L, 2L, ..., B*L], int32."""
    return torch.arange(batch + 1, dtype=torch.int32, device=device) * length


def page_table_to_csr(
    block_table: torch.Tensor, seqlens: torch.Tensor, page_size: int
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Our page table -> FlashInfer's (indptr [B + 1], indices [sum pages], last_page_len [B]).

    block_table [B, n] int32 lists each sequence's pages in order; seqlens [B] its token count
    (ragged lengths allowed). Sequence b uses its first ceil(seqlens[b] / page_size) pages; the
    rest of its row is padding and is left out. All outputs int32, on block_table's device.
    """
    if block_table.dim() != 2 or seqlens.shape != (block_table.shape[0],):
        raise ValueError(
            f"block_table {tuple(block_table.shape)} and seqlens {tuple(seqlens.shape)}: "
            "expected [B, pages_per_seq] and [B]"
        )
    lens = seqlens.to(device=block_table.device, dtype=torch.int64)
    pages = (lens + page_size - 1) // page_size  # [B]
    if len(pages) and int(pages.max()) > block_table.shape[1]:
        raise ValueError(
            f"seqlens up to {int(lens.max())} need {int(pages.max())} pages of {page_size}; "
            f"the block table holds {block_table.shape[1]} per sequence"
        )
    indptr = torch.zeros(len(pages) + 1, dtype=torch.int64, device=block_table.device)
    indptr[1:] = torch.cumsum(pages, 0)
    used = torch.arange(block_table.shape[1], device=block_table.device)[None, :] < pages[:, None]
    indices = block_table[used]  # row-major: sequence by sequence, pages in table order
    last = lens - (pages - 1).clamp(min=0) * page_size
    return indptr.to(torch.int32), indices.to(torch.int32), last.to(torch.int32)


def wall_s(fn: Callable[[], Any], device: torch.device) -> tuple[Any, float]:
    """fn()'s result and its wall time in seconds, the device synchronized before and after
    (a first call: JIT compilation, module loading and the kernel itself)."""
    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda *_: None)
    sync(device)
    t0 = time.perf_counter()
    result = fn()
    sync(device)
    return result, time.perf_counter() - t0
