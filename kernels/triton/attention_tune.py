"""Tuning of the attention kernels: time each candidate config with a cold L2, keep the fastest
whose output agrees with the first good one, and remember the choice per problem key, in this
process and on disk (tune_cache.py), so the next process preparing the point reuses it untimed.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import torch

from .. import tune_cache
from ..bench_cold import bench_cold

# Tuning results, keyed by (kernel, shapes, dtype, rung, ..., device), in this process.
_TUNE_CACHE: dict[tuple, dict[str, Any]] = {}
# The kernel files a tuned attention choice depends on (a change to any of them re-tunes).
# the Gluon FMHA imports gluon_compat.py: a change there re-tunes it too
TUNE_SOURCES = (
    "triton/attention_*.py",
    "triton/gluon_compat.py",
    "bench_cold.py",
    "stream_hold.py",
)


def stored_key(key: tuple, candidates: Sequence[dict], device: str) -> tune_cache.TuneKey | None:
    """The disk-cache key of one tuning decision (None when the cache is off)."""
    return tune_cache.make_key(
        "triton-attention",
        device,
        key,
        candidates,
        toolchain=tune_cache.triton_toolchain(),
        sources=TUNE_SOURCES,
    )


def tune(
    key: tuple,
    candidates: Sequence[dict],
    build: Callable[[dict], Callable[[], object]],
    enabled: bool,
    output: torch.Tensor | None = None,
    stored: tune_cache.TuneKey | None = None,
    label: Callable[[dict], str] | None = None,
    poison: Sequence[torch.Tensor] = (),
) -> tuple[dict, dict[str, Any]]:
    """Pick the fastest candidate by timing build(c)() with a cold L2 (bench_cold: a read
    flush before every launch, as the harness times; do_bench's zero_() flush taxes the
    HBM-bound decode candidates with write-backs and mis-ranked them on the H200).

    Returns (config, info); info has tuned, tune_candidates, tune_ms, tune_failed, tune_source
    ("tuned" timed now, "cache" read from disk, "untuned") and tune_key (the disk entry's name);
    given `label` (a candidate's name), also tune_timings_ms: every timed candidate's time, what
    the choice beat (kept on disk with the decision, so a cache hit reports them too).
    Results are cached in-process by `key` and on disk under `stored` (when given; a stored
    decision is reused untimed); with enabled False the first candidate is taken untimed.
    `poison` (the output, scratch buffers) is filled with NaN before each candidate's first run,
    so a candidate that leaves some of it unwritten cannot pass on what an earlier one wrote.
    Candidates that fail to compile or run (e.g. out of shared memory) are dropped, and so are
    those whose `output` (the buffer every candidate writes) disagrees with the first good one:
    a fast wrong config must never win.
    """
    if not enabled or len(candidates) == 1:
        untuned = dict(tuned=False, tune_candidates=len(candidates), tune_source="untuned")
        return dict(candidates[0]), untuned
    # A hit counts only if its config is still a candidate: a key may leave out what the list
    # depends on (decode keys hold next_pow2(max_kv_len), its split counts the exact length), and
    # a split count from another list could outrun this call's split buffers.
    hit = _TUNE_CACHE.get(key)
    if hit is not None and hit["config"] in candidates:
        return dict(hit["config"]), dict(hit["info"], tune_cache_hit=True)
    if (found := tune_cache.load(stored, candidates)) is not None:
        assert stored is not None  # load() finds nothing without a key
        info = dict(
            tuned=True,
            tune_candidates=found.candidates_tried,
            tune_ms=found.tuned_ms,
            tune_failed=list(found.record.get("tune_failed", [])),
            tune_source="cache",
            tune_key=stored.digest,
        )
        if label is not None and "tune_timings_ms" in found.record:
            info["tune_timings_ms"] = dict(found.record["tune_timings_ms"])
        _TUNE_CACHE[key] = dict(config=dict(candidates[found.index]), info=info)
        return dict(candidates[found.index]), dict(info, tune_cache_hit=True)

    best_ms, best, failed, first = math.inf, None, [], None
    timings: dict[str, float] = {}
    name = label or candidate_name
    for i, cand in enumerate(candidates):
        try:
            fn = build(cand)
            for t in poison:
                t.fill_(math.nan)
            fn()  # compile outside the timed region
            torch.cuda.synchronize()
            if output is not None:
                if first is None:
                    first = output.float().clone()
                    if not torch.isfinite(first).all():  # NaN/Inf, or rows left unwritten
                        failed.append(f"{name(cand)}: output not finite")
                        first = None
                        continue
                else:
                    err = (output.float() - first).abs().max().item()
                    if not err <= 2e-2 * max(1.0, first.abs().max().item()):
                        failed.append(f"{name(cand)}: output differs by {err:.3g}")
                        continue
            ms = bench_cold(fn, output.device if output is not None else torch.device("cuda"))
        except Exception as exc:  # noqa: BLE001 - a failed candidate is just not chosen
            failed.append(f"{name(cand)}: {type(exc).__name__}")
            continue
        timings[name(cand)] = round(ms, 5)
        if ms < best_ms:
            best_ms, best = ms, i
    if best is None:
        raise RuntimeError(f"no candidate config compiled and ran: {failed}")
    info = dict(
        tuned=True,
        tune_candidates=len(candidates),
        tune_ms=best_ms,
        tune_failed=failed,
        tune_source="tuned",
        tune_key=stored.digest if stored is not None else "",
    )
    record: dict[str, Any] = dict(tune_failed=failed, tune_timings_ms=timings)
    if label is not None:
        info["tune_timings_ms"] = timings
    _TUNE_CACHE[key] = dict(config=dict(candidates[best]), info=info)
    tune_cache.save(stored, candidates, best, best_ms, record)
    return dict(candidates[best]), dict(info, tune_cache_hit=False)


def candidate_name(cfg: dict) -> str:
    """A candidate's name in tune_failed and tune_timings_ms: the `tl` kernels' tile shorthand, or
    every key=value for other kernels' configs (the Gluon FMHA's have no BLOCK_M or num_warps)."""
    if not {"BLOCK_M", "BLOCK_N", "num_warps", "num_stages"} <= cfg.keys():
        return ",".join(f"{k}={v}" for k, v in sorted(cfg.items()))
    splits = f"x{cfg['num_splits']}" if "num_splits" in cfg else ""
    splits = "-balanced" if cfg.get("split_by") == "balanced" else splits  # slots: the lengths'
    # decode candidates that differ only in how the splits are cut or merged need names apart:
    # without these, one overwrote the other's time in tune_timings_ms (session 57)
    splits += "-longest" if cfg.get("split_by") == "longest" else ""
    splits += f"-{cfg['REDUCE']}" if "REDUCE" in cfg else ""
    splits += f"-rows{cfg['ROWS']}" if "ROWS" in cfg else ""  # the Gluon decode's row split
    kernel = "gluon-" if cfg.get("impl") == "gluon" else ""  # the decode's Gluon kernel
    return kernel + "m{BLOCK_M}n{BLOCK_N}w{num_warps}s{num_stages}".format(**cfg) + splits
