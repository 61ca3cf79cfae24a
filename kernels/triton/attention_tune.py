"""Tuning of the attention kernels: time each candidate config with a cold L2, keep the fastest
whose output agrees with the first good one, and remember the choice per problem key, in this
process and on disk (tune_cache.py), so the next process preparing the point reuses it untimed.

Prefill (own Triton's `tl` kernel and the Gluon FMHA) re-times its closest candidates at the
power cap, as the GEMM tuners do since session 41 (capped_retime.py): on an H100 at 700 W
(results/h100/README.md, session 104; b1, 32/8 heads, D 128, causal, 16k tokens) the bursts
ranked a persistent 128x64 Gluon tile ahead of a non-persistent 128x128, 3.537 against 3.608 ms,
and the sweep, at the cap, timed them at 3.917 and 3.679: the pick ran 0.96x cuDNN where the
other reads 1.03x. Decode keeps its burst pick (memory-bound; not seen reordered).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import torch

from .. import capped_retime, tune_cache
from ..bench_cold import bench_cold

# Tuning results, keyed by (kernel, shapes, dtype, rung, ..., device), in this process.
_TUNE_CACHE: dict[tuple, dict[str, Any]] = {}
# The kernel files a tuned attention decision depends on (a change to any of them re-tunes), one
# set per family: its tuner's imports, its kernels and the timers. Until session 105 one set held
# every attention file, so a change to the Gluon FMHA voided decode's entries too (session 105's
# call 14 spent 254 s re-tuning the batch-16 decode grid after session 104 changed this file).
_TIMERS = ("bench_cold.py", "capped_retime.py", "stream_hold.py")
_SHARED = (
    "triton/attention_configs.py",
    "triton/attention_launch.py",
    "triton/attention_target.py",
    "triton/attention_tune.py",
    "triton/gluon_compat.py",  # both Gluon kernels import it
)
# own Triton's `tl` prefill, the Gluon FMHA, and their tl-or-Gluon choice (attention_choice.py)
PREFILL_SOURCES = (
    "triton/attention_prefill.py",
    "triton/attention_gluon*.py",
    "triton/attention_choice.py",
    *_SHARED,
    *_TIMERS,
)
# the decode kernels; attention_decode_gluon.py imports a helper of attention_prefill.py
DECODE_SOURCES = ("triton/attention_decode*.py", "triton/attention_prefill.py", *_SHARED, *_TIMERS)
# the one set before the split: what scripts/rekey_tune_cache.py --split-attention moves from
TUNE_SOURCES = ("triton/attention_*.py", "triton/gluon_compat.py", *_TIMERS)


def stored_key(
    key: tuple, candidates: Sequence[dict], device: str, sources: tuple[str, ...]
) -> tune_cache.TuneKey | None:
    """The disk-cache key of one tuning decision (None when the cache is off); `sources`: the
    family's set (PREFILL_SOURCES or DECODE_SOURCES)."""
    return tune_cache.make_key(
        "triton-attention",
        device,
        key,
        candidates,
        toolchain=tune_cache.triton_toolchain(),
        sources=sources,
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
    capped: bool = False,
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
    With `capped`, a burst winner of capped_retime.MIN_MS or more and its rivals within BAND
    are timed again at the power cap and capped_retime.winner decides; info (and the disk entry)
    then has tune_capped_ms and tune_burst_pick, or tune_capped_failed where the re-time broke
    (the burst winner stands). tune_ms stays the chosen candidate's burst time.
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
        for field in CAPPED_FIELDS:
            if field in found.record:
                info[field] = found.record[field]
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
    capped_info: dict[str, Any] = {}
    if capped and (picks := capped_retime.contenders(timings)):
        device = output.device if output is not None else torch.device("cuda")
        index_of = {name(c): i for i, c in enumerate(candidates)}
        chosen, capped_info = _retime_at_cap(picks, index_of, candidates, build, device)
        if chosen is not None:
            best = chosen
            best_ms = timings[name(candidates[best])]
    info = dict(
        tuned=True,
        tune_candidates=len(candidates),
        tune_ms=best_ms,
        tune_failed=failed,
        tune_source="tuned",
        tune_key=stored.digest if stored is not None else "",
        **capped_info,
    )
    record: dict[str, Any] = dict(tune_failed=failed, tune_timings_ms=timings, **capped_info)
    if label is not None:
        info["tune_timings_ms"] = timings
    _TUNE_CACHE[key] = dict(config=dict(candidates[best]), info=info)
    tune_cache.save(stored, candidates, best, best_ms, record)
    return dict(candidates[best]), dict(info, tune_cache_hit=False)


# What a capped re-time adds to a decision's info and disk record.
CAPPED_FIELDS = ("tune_capped_ms", "tune_burst_pick", "tune_capped_failed")


def _retime_at_cap(
    picks: list[str],
    index_of: dict[str, int],
    candidates: Sequence[dict],
    build: Callable[[dict], Callable[[], object]],
    device: torch.device,
) -> tuple[int | None, dict[str, Any]]:
    """(the index capped_retime.winner picks among `picks`, the fields it adds to info); (None,
    tune_capped_failed) when a re-timed launch broke or the burst winner read no finite time.
    gemm_gluon_tune.py guards its re-time the same way; the guard is not moved into
    capped_retime.py because that file is among the GEMM tuners' sources (gemm_tune.TUNE_SOURCES):
    editing it voids both GPUs' GEMM tune caches."""
    try:
        launches = {pick: build(candidates[index_of[pick]]) for pick in picks}
        capped_ms = capped_retime.retime(launches, device)
        finite = {pick: ms for pick, ms in capped_ms.items() if math.isfinite(ms)}
        if picks[0] not in finite:
            raise RuntimeError(f"the burst winner read {capped_ms[picks[0]]} ms at the cap")
    except Exception as exc:  # noqa: BLE001 - the burst winner stands
        first = (str(exc).splitlines() or [""])[0][:200]
        return None, dict(tune_capped_failed=f"{type(exc).__name__}: {first}")
    chosen = capped_retime.winner(finite, picks[0])
    fields = dict(
        tune_capped_ms={pick: round(ms, 5) for pick, ms in capped_ms.items()},
        tune_burst_pick=picks[0],
    )
    return index_of[chosen], fields


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
