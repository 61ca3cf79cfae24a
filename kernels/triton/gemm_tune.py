"""Tuning of the own Triton GEMM: time candidate configs on the real tensors, once per point.

Each candidate is compiled, launched once, checked against a reference (so a miscompiled or racy
config can never win), timed with bench_cold, and checked again after timing (a split-K counter
race would show up in the last of many launches). The fastest survivor is cached by problem key
in this process and on disk (tune_cache.py: keyed by GPU, driver, Triton, kernel sources and
problem); later prepares of the same point, in this process or the next, reuse it untimed.

Timing reads 256 MB before every launch (bench_cold.py says why not do_bench's zero_() flush).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

from .. import capped_retime, tune_cache
from ..bench_cold import bench_cold
from ..exc_text import first_line
from .gemm_configs import GemmConfig
from .gemm_operands import GemmOperands


@dataclass
class TuneResult:
    """What tuning decided for one problem key."""

    config: GemmConfig
    tuned: bool
    candidates_tried: int
    timings_ms: dict[str, float] = field(default_factory=dict)  # str(config) -> median ms
    rejected: dict[str, str] = field(default_factory=dict)  # str(config) -> reason
    source: str = "untuned"  # "tuned" (timed in this process) | "cache" (read from disk)
    cache_key: str = ""  # tune_cache.TuneKey.digest of the disk entry, when there is one
    # the contenders re-timed at the power cap (capped_retime.py) -> mean ms; they decided
    capped_ms: dict[str, float] = field(default_factory=dict)


# The kernel files a tuned GEMM choice depends on (a change to any of them re-tunes).
# (Not the Gluon GEMM's files, gemm_gluon*.py: its own tuner keys on those.)
TUNE_SOURCES = (
    "triton/gemm.py",
    "triton/gemm_[!g]*.py",
    "triton/kernel_choice.py",  # the tl / Gluon decision
    "bench_cold.py",
    "capped_retime.py",
    "stream_hold.py",
)


# The capped re-time (capped_retime.py) re-orders only the candidates whose bursts are within
# this of the fastest: one capped reading scatters by about 3% (capped_retime.NOISE says where
# that was measured), and in gemm_llama-twins (H100) the re-time chose 256x128 at 8192x8192x28672
# over 128x256, whose burst was 8.4% faster: the sweep timed the pick at 0.92x cuBLAS, and the
# probe timed 128x256 at 1.03x. Session 41's reorder (own CUTLASS) was 3.2% apart in the burst.
CAPPED_BAND = 1.05

_CACHE: dict[tuple, TuneResult] = {}


def clear_cache() -> None:
    """Forget every tuned decision (tests; or after changing clocks/power limits)."""
    _CACHE.clear()


def stored_key(
    key: tuple, candidates: Sequence[GemmConfig], device: str
) -> tune_cache.TuneKey | None:
    """The disk-cache key of one tuning decision (None when the cache is off)."""
    return tune_cache.make_key(
        "triton-gemm",
        device,
        key,
        candidates,
        toolchain=tune_cache.triton_toolchain(),
        sources=TUNE_SOURCES,
    )


def cached(key: tuple) -> TuneResult | None:
    """The tuned decision for `key`, if this process has made one."""
    return _CACHE.get(key)


def relative_error(out: torch.Tensor, ref: torch.Tensor, rows_per_chunk: int = 4096) -> float:
    """Relative Frobenius error ||out - ref|| / ||ref||, in fp64, a few thousand rows at a time
    (a 16384 x 57344 output would otherwise need three fp32 copies at once)."""
    err2 = ref2 = 0.0
    for r in range(0, out.shape[0], rows_per_chunk):
        o = out[r : r + rows_per_chunk].double()
        f = ref[r : r + rows_per_chunk].double()
        err2 += torch.sum((o - f) ** 2).item()
        ref2 += torch.sum(f * f).item()
    return math.sqrt(err2) / max(math.sqrt(ref2), 1e-30)


def _short(cfg: GemmConfig) -> str:
    """A candidate's name in the recorded timings: unique within one candidate list (a stream-K
    twin differs from its data-parallel config only in stream_k, so that key is named)."""
    keys = (
        "block_m",
        "block_n",
        "block_k",
        "num_warps",
        "num_stages",
        "split_k",
        "stream_k",
        "programs_per_sm",
        "epilogue_subtile",
        "warp_specialize",
    )
    d = cfg.as_dict()
    # named only where set, so that the names recorded before these options existed still hold
    flags = [k for k in ("swap_ab", "transpose_b", "reduce_apart", "fma_dot") if d[k]]
    return "/".join([f"{k}={d[k]}" for k in keys] + [f"{k}=True" for k in flags])


def tune_or_lookup(
    key: tuple,
    candidates: Sequence[GemmConfig],
    build: Callable[[GemmConfig], Any],
    reference: Callable[[], torch.Tensor],
    tolerance: float,
    stored: tune_cache.TuneKey | None = None,
) -> TuneResult:
    """Return the cached decision for `key` (this process's, else the disk entry `stored`), or
    time every candidate and cache the fastest (in this process and, with `stored`, on disk).

    `build(cfg)` returns a zero-argument launch whose call returns the output tensor;
    `reference()` returns the tensor every candidate's output must match within `tolerance`
    (relative Frobenius error).
    """
    hit = _CACHE.get(key)
    if hit is not None:
        return hit
    if (found := tune_cache.load(stored, candidates)) is not None:
        assert stored is not None  # load() finds nothing without a key
        rec = found.record
        hit = TuneResult(
            candidates[found.index],
            True,
            found.candidates_tried,
            dict(rec.get("timings_ms", {})),
            dict(rec.get("rejected", {})),
            "cache",
            stored.digest,
            dict(rec.get("capped_ms", {})),
        )
        _CACHE[key] = hit
        return hit
    ref = reference()
    timings: dict[str, float] = {}
    rejected: dict[str, str] = {}
    best: tuple[float, int] | None = None  # (ms, index into candidates)
    # burst ms of each candidate that passed both checks, by index: names (_short) can repeat
    # (prepare_matmul's transpose_b twins), so the re-time at the cap goes by index
    passed: dict[int, float] = {}
    for i, cfg in enumerate(candidates):
        name = _short(cfg)
        try:
            launch = build(cfg)
            launch.out.fill_(float("nan"))  # poison: a config that skips tiles must fail
            err = relative_error(launch(), ref)
            if not err <= tolerance:
                rejected[name] = f"wrong result before timing (rel err {err:.3g})"
                continue
            ms = bench_cold(launch, launch.out.device)
            err = relative_error(launch(), ref)
            if not err <= tolerance:
                rejected[name] = f"wrong result after timing (rel err {err:.3g})"
                continue
        except Exception as exc:  # compile failure, out of resources, launch error
            rejected[name] = first_line(exc)
            continue
        timings[name] = ms
        passed[i] = ms
        if math.isfinite(ms) and (best is None or ms < best[0]):
            best = (ms, i)
    if best is None:
        raise RuntimeError(f"no GEMM config worked for {key}: {rejected}")
    if rejected:
        warnings.warn(
            f"GEMM tuning rejected {len(rejected)} config(s) for {key}: {rejected}", stacklevel=3
        )
    capped: dict[str, float] = {}
    close = {str(i): ms for i, ms in passed.items() if ms <= best[0] * CAPPED_BAND}
    if picks := capped_retime.contenders(close):
        try:
            launches = {p: build(candidates[int(p)]) for p in picks}
            by_index = capped_retime.retime(launches, next(iter(launches.values())).out.device)
        except Exception as exc:  # out of memory with four launches alive: the burst decides
            rejected["capped re-time"] = first_line(exc)
        else:
            winner = capped_retime.winner(by_index, picks[0])
            best = (by_index[winner], int(winner))
            capped = {_short(candidates[int(p)]): ms for p, ms in by_index.items()}
    result = TuneResult(
        candidates[best[1]],
        True,
        len(candidates),
        timings,
        rejected,
        "tuned",
        stored.digest if stored is not None else "",
        capped,
    )
    _CACHE[key] = result
    record = dict(timings_ms=timings, capped_ms=capped, rejected=rejected)
    tune_cache.save(stored, candidates, best[1], best[0], record)
    return result


def remember(key: tuple, cfg: GemmConfig) -> TuneResult:
    """Cache an untimed decision (interpreter, or tune=False) so repeated prepares agree."""
    result = TuneResult(cfg, False, 0)
    _CACHE.setdefault(key, result)
    return _CACHE[key]


def reference(p: GemmOperands) -> torch.Tensor:
    """Vendor-library result used to reject wrong configs while tuning (not a timing baseline)."""
    if p.a.dtype == torch.float8_e4m3fn:  # e4m3 values are exact in bf16
        assert p.a_scale is not None and p.b_scale is not None  # check_operands requires them
        prod = (p.a.to(torch.bfloat16) @ p.b.to(torch.bfloat16)).float()
        return prod * (p.a_scale * p.b_scale)
    if p.a.dtype == torch.float32:  # fp64: independent of torch's global TF32 switches
        return p.a.double() @ p.b.double()
    return p.a @ p.b
