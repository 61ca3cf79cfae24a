"""In-process tuning of the attention kernels: time each candidate config with a cold L2, keep
the fastest whose output agrees with the first good one, and remember the choice per problem key.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import torch

from .bench_cold import bench_cold

# Tuning results, keyed by (kernel, shapes, dtype, rung, ..., device). In-process only.
_TUNE_CACHE: dict[tuple, dict[str, Any]] = {}


def tune(
    key: tuple,
    candidates: Sequence[dict],
    build: Callable[[dict], Callable[[], object]],
    enabled: bool,
    output: torch.Tensor | None = None,
) -> tuple[dict, dict[str, Any]]:
    """Pick the fastest candidate by timing build(c)() with a cold L2 (bench_cold: a read
    flush before every launch, as the harness times; do_bench's zero_() flush taxes the
    HBM-bound decode candidates with write-backs and mis-ranked them on the H200).

    Returns (config, info); info has tuned, tune_candidates, tune_ms and tune_failed. Results
    are cached in-process by `key`; with enabled False the first candidate is taken untimed.
    Candidates that fail to compile or run (e.g. out of shared memory) are dropped, and so are
    those whose `output` (the buffer every candidate writes) disagrees with the first good one:
    a fast wrong config must never win.
    """
    if not enabled or len(candidates) == 1:
        return dict(candidates[0]), dict(tuned=False, tune_candidates=len(candidates))
    if key in _TUNE_CACHE:
        hit = _TUNE_CACHE[key]
        return dict(hit["config"]), dict(hit["info"], tune_cache_hit=True)

    best_ms, best, failed, first = math.inf, None, [], None
    for cand in candidates:
        try:
            fn = build(cand)
            fn()  # compile outside the timed region
            torch.cuda.synchronize()
            if output is not None:
                if first is None:
                    first = output.float().clone()
                else:
                    err = (output.float() - first).abs().max().item()
                    if not err <= 2e-2 * max(1.0, first.abs().max().item()):
                        failed.append(f"{_short(cand)}: output differs by {err:.3g}")
                        continue
            ms = bench_cold(fn, output.device if output is not None else torch.device("cuda"))
        except Exception as exc:  # noqa: BLE001 - a failed candidate is just not chosen
            failed.append(f"{_short(cand)}: {type(exc).__name__}")
            continue
        if ms < best_ms:
            best_ms, best = ms, cand
    if best is None:
        raise RuntimeError(f"no attention config compiled and ran: {failed}")
    info = dict(tuned=True, tune_candidates=len(candidates), tune_ms=best_ms, tune_failed=failed)
    _TUNE_CACHE[key] = dict(config=dict(best), info=info)
    return dict(best), dict(info, tune_cache_hit=False)


def _short(cfg: dict) -> str:
    splits = f"x{cfg['num_splits']}" if "num_splits" in cfg else ""
    return "m{BLOCK_M}n{BLOCK_N}w{num_warps}s{num_stages}".format(**cfg) + splits
