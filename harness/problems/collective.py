"""Collectives: all-reduce, all-gather, reduce-scatter and all-to-all among `world_size` ranks.

message_bytes is nccl-tests' "size", the per-rank buffer a row is named by:
    all_reduce      each rank's input, which is also its output (in = out = S)
    all_gather      each rank's gathered output; each rank contributes S / n
    reduce_scatter  each rank's input; each rank receives its reduced S / n share
    all_to_all      each rank's send buffer (= its receive buffer); S / n goes to every rank
Bandwidth as nccl-tests reports it: algbw = S / time (the row's gbps) and busbw = algbw x
busbw_factor (busbw_gbps), the factor turning algbw into the bytes each rank must send (and
receive) per second, so busbw compares with a link's unidirectional speed whatever n is:
    all_reduce 2(n-1)/n; all_gather, reduce_scatter, all_to_all (n-1)/n.

Inputs are small integers, a hash of (seed, rank, element index), so every rank computes any
other rank's input locally and the expected output exactly: sums of <= 64 values in [-4, 4]
are exact in bf16 whatever order the library adds them in, and the check is bitwise.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

import torch

from harness.problems.base import Check, Problem, require_choice, require_positive
from harness.problems.dtypes import get_dtype
from harness.units import fmt_bytes

COLLECTIVES = ("all_reduce", "all_gather", "reduce_scatter", "all_to_all")
COLLECTIVE_DTYPES = ("bf16", "fp16", "fp32")
MAX_WORLD = 64  # 64 x 4 = 256: the largest integer sum bf16 (8 significant bits) holds exactly
_LEVELS = 9  # input values are -4..4
_CHUNK = 1 << 24  # elements per slice of the input hash: bounds its int64 temporaries to 128 MiB


def rank_values(
    seed: int, rank: int, start: int, count: int, dtype: torch.dtype, device: torch.device
) -> torch.Tensor:
    """[count] elements start..start+count-1 of rank `rank`'s input: integers in [-4, 4]."""
    # Golden-ratio multiplicative hash of the index, offset per (seed, rank); the xor-shift mixes
    # the high bits down so neighbouring indices and ranks get unrelated values.
    offset = ((seed * 1_000_003 + rank) * 0x9E3779B1) & 0xFFFFFFFF
    out = torch.empty(count, dtype=dtype, device=device)
    for lo in range(0, count, _CHUNK):
        n = min(_CHUNK, count - lo)
        h = torch.arange(start + lo, start + lo + n, dtype=torch.int64, device=device)
        h = h * 0x9E3779B1 + offset  # < 2^30 x 2^32 + 2^32: no int64 overflow below 1 GiB x 4
        h = h ^ (h >> 17)
        out[lo : lo + n] = (h % _LEVELS - _LEVELS // 2).to(dtype)
    return out


@dataclass(frozen=True)
class CollectiveProblem(Problem):
    """One collective on `world_size` ranks (one process per device) with `message_bytes` as
    nccl-tests defines it (see the module docstring)."""

    op: ClassVar[str] = "collective"
    collective: str
    message_bytes: int
    world_size: int = 2
    dtype: str = "bf16"

    @property
    def elem_bytes(self) -> int:
        return get_dtype(self.dtype).bytes

    @property
    def count(self) -> int:
        """Elements in the message (S / element size)."""
        return self.message_bytes // self.elem_bytes

    @property
    def shard(self) -> int:
        """Elements one rank contributes to, or receives from, each peer's share (S / n)."""
        return self.count // self.world_size

    @property
    def in_elems(self) -> int:
        return self.shard if self.collective == "all_gather" else self.count

    @property
    def out_elems(self) -> int:
        return self.shard if self.collective == "reduce_scatter" else self.count

    def validate(self) -> None:
        require_choice("collective", self.collective, COLLECTIVES)
        require_choice("dtype", self.dtype, COLLECTIVE_DTYPES)
        require_positive(message_bytes=self.message_bytes, world_size=self.world_size)
        if not 2 <= self.world_size <= MAX_WORLD:
            raise ValueError(f"world_size: {self.world_size}; allowed: 2..{MAX_WORLD}")
        unit = self.elem_bytes * self.world_size
        if self.message_bytes % unit:
            raise ValueError(
                f"message_bytes: {self.message_bytes} does not split into {self.world_size} "
                f"whole {self.dtype} shares; allowed: multiples of {unit}"
            )

    def busbw_factor(self) -> float:
        """nccl-tests' bus bandwidth correction: busbw = algbw x this."""
        n = self.world_size
        return (2 if self.collective == "all_reduce" else 1) * (n - 1) / n

    def flops(self) -> int:
        return 0  # communication; the reductions' additions are not counted

    def min_bytes(self) -> int:
        """Bytes each rank sends plus receives at the least: busbw_factor x S each way."""
        return round(2 * self.busbw_factor() * self.message_bytes)

    def tolerance(self) -> float:
        return 0.0  # integer data: every sum is exact

    def label(self) -> str:
        return f"{self.collective} {fmt_bytes(self.message_bytes)} x{self.world_size} {self.dtype}"

    def make_inputs(
        self, seed: int, fill: str, device: torch.device, rank: int = 0
    ) -> dict[str, Any]:
        """Rank `rank`'s {'x': [in_elems], 'out': [out_elems] NaN, 'rank', 'seed', 'fill'}.

        Any fill but zeros gives the integer hash (values do not change a collective's speed)."""
        dt = get_dtype(self.dtype).torch_dtype
        if fill == "zeros":
            x = torch.zeros(self.in_elems, dtype=dt, device=device)
        else:
            x = rank_values(seed, rank, 0, self.in_elems, dt, device)
        out = torch.full((self.out_elems,), math.nan, dtype=dt, device=device)  # unwritten: NaN
        return {"x": x, "out": out, "rank": rank, "seed": seed, "fill": fill}

    def reference(self, inputs: dict[str, Any]) -> torch.Tensor:
        """[out_elems] fp32: what rank inputs['rank'] must hold after the collective."""
        seed, me, dev = inputs["seed"], inputs["rank"], inputs["x"].device
        n, c = self.world_size, self.shard
        if inputs["fill"] == "zeros":
            return torch.zeros(self.out_elems, dtype=torch.float32, device=dev)
        f32 = torch.float32
        if self.collective == "all_reduce":  # sum of every rank's whole buffer
            return torch.stack(
                [rank_values(seed, r, 0, self.count, f32, dev) for r in range(n)]
            ).sum(0)
        if self.collective == "reduce_scatter":  # sum of every rank's share `me`
            return torch.stack([rank_values(seed, r, me * c, c, f32, dev) for r in range(n)]).sum(0)
        if self.collective == "all_gather":  # block r = rank r's whole input
            return torch.cat([rank_values(seed, r, 0, c, f32, dev) for r in range(n)])
        # all_to_all: block r = rank r's block `me`
        return torch.cat([rank_values(seed, r, me * c, c, f32, dev) for r in range(n)])

    def check(self, out: torch.Tensor, ref: torch.Tensor) -> Check:
        """Bitwise: rel_err is the fraction of wrong elements; NaN (never written) is wrong."""
        if tuple(out.shape) != tuple(ref.shape):
            return Check(
                math.nan, math.nan, 0.0, False, f"shape {tuple(out.shape)} != {tuple(ref.shape)}"
            )
        o = out.float()
        bad = int((o != ref).sum())
        max_abs = float((o - ref).abs().nan_to_num(nan=math.inf).max()) if o.numel() else 0.0
        ok = bad == 0
        reason = None if ok else f"{bad} of {o.numel()} elements differ from the expected result"
        return Check(bad / max(o.numel(), 1), max_abs, 0.0, ok, reason)

    def derived(self, row: dict) -> dict:
        """algbw (gbps: S / median time) and busbw (busbw_gbps), in GB/s as nccl-tests has them."""
        ms = row.get("latency_ms_median")
        if not ms:
            return {}
        algbw = self.message_bytes / (ms / 1e3) / 1e9
        return {"gbps": algbw, "busbw_gbps": algbw * self.busbw_factor()}


COLLECTIVE_PROBLEMS = {"collective": CollectiveProblem}
