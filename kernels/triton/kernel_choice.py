"""Which of own-triton's two sm_90 kernels runs a problem: the `tl` kernel or the Gluon one (the
GEMMs, gemm.py, and the prefill FMHAs, attention_choice.py).

Each tuner's minimum is taken in its own burst of short timings, the `tl` candidates first. The
GPU's clock in a burst depends on what ran just before it (measured on an H200, 4096x10240x8192:
the `tl` kernel timed 865 us in its tuning burst and 1,005-1,021 us sustained at the 700 W cap),
so comparing the two minima compares two clock states as well as two kernels. The two winners
are therefore re-timed against each other, interleaved tl, Gluon, Gluon, tl (a drift in clock
over the four cancels to first order), with the same cold-L2 timer, and the mean of each pair
decides. Where the `tl` winner takes capped_retime.MIN_MS or more, the re-time runs at the
power cap (bench_capped), as the sweep will time the pair. At the cap one reading scatters by
about 3%, so where the capped pair is closer than NOISE the pair is timed again in bursts
(bench_cold, interleaved the same way: one clock state for both) and those decide; on an H100
the capped pair at 8192x10240x8192 put Gluon 1.5% ahead, and the sweep then timed it 7% behind
the `tl` kernel that every burst had ranked first (results/h100/_logs/session49). The decision
is kept on disk like the tuners' own (tune_cache.py), so a second sweep re-times nothing.

Since session 101 a GEMM's capped tie is timed again at the cap (ties="retime"): RETIME_ROUNDS
more interleaved rounds, and the median of each side's six capped readings decides; a pair still
within TIE_BAND of each other runs the `tl` kernel (decided_by "tie"). Two readings were too few:
a capped reading of the Gluon GEMM scatters by 2% at the median and up to 7% (the H100 tune
cache of session 100, 64 pairs), so a 2% band caught pairs 3-7% apart in the sweep. On an H100,
256x57344x8192 had Gluon 1.9% ahead in its capped pair; the tie went to `tl`, which the sweep
timed at 0.894x cuBLAS (gemm_llama-s99h), where the run before it (gemm_llama-s98h, another card,
Gluon 5.6% ahead at the cap) had run Gluon at 0.963x; 1024x10240x8192 the same (0.926x against
0.956x).

From session 85 to 100 a GEMM's capped tie went to the `tl` kernel without a burst pair (ties="tl",
the rung own-triton-tl-ties keeps it). A burst runs before the power limiter engages, and there the Gluon GEMM is
the faster per cycle; at the cap it draws more power per FLOP and loses clock. On an H200
(results/h200/gemm_fp8-choice-s85, fp8, one run) the Gluon rows ran 3-4% lower SM clocks than
the `tl` kernel's at the same ~685 W (8192x6144x4096: 1,575 against 1,635 MHz), and at the one
point where a burst broke the tie (capped: Gluon 0.4% ahead; burst: Gluon 2.2% ahead) the sweep
timed Gluon 1.5% behind the `tl` kernel. Over the H200's whole bf16 grid (gemm_llama-s61) and
fp8 grid (sessions 74-75) the 22 capped ties that bursts gave to Gluon ran 0.980x and 0.976x
the vendor, the 12 they gave to `tl` 0.995x and 0.999x (where both kernels may simply have been
weak). In one run with both rules (results/h200/gemm-ties-s85; the old rule is the rung
burst-ties) the tie rule ran 0.989x cuBLAS against 0.981x (bf16, 4 points) and 0.981x cuBLASLt
against 0.977x (fp8, 8 points); where the two ran different kernels `tl` led at 5 of 9: a small
gain, partly noise, as each rule re-timed its own capped pair. Attention keeps the burst pair
(ties="burst"): nothing here measured its ties.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from statistics import fmean, median
from typing import Any

import torch

from .. import capped_retime, tune_cache
from ..bench_cold import bench_capped, bench_cold

GEMM_FAMILY = "triton-gemm-choice"  # the disk cache's family per op
ATTENTION_FAMILY = "triton-attention-choice"
_KERNELS = ("tl", "gluon-ws")  # a stored decision's index names one of these
_DECIDED: dict[str, Choice] = {}
NOISE = capped_retime.NOISE  # capped pairs closer than this are a tie (TIES says who takes it)
# who takes a capped tie: an interleaved burst pair decides it, the `tl` kernel runs, or more
# capped rounds decide (and `tl` runs where they too are within TIE_BAND)
TIES = ("burst", "tl", "retime")
RETIME_ROUNDS = 2  # more interleaved capped rounds for a tie: six readings a side in all
# Re-timed medians closer than this still run the `tl` kernel: at the cap the Gluon GEMM draws
# more power per FLOP (results/h200/gemm_fp8-choice-s85: 3-4% lower SM clocks at the same ~685 W),
# so an even pair tends to `tl` over a sweep's 0.5-2 s. Six readings' median scatters by about
# 1% where one reading scatters by 2% (the spread above).
TIE_BAND = 1.01


@dataclass(frozen=True)
class Choice:
    """The kernel that runs, each side's re-timed ms, and whether timed now or read from disk."""

    kernel: str  # "tl" | "gluon-ws"
    tl_ms: float
    gluon_ms: float
    source: str  # "timed" | "cache"
    # "capped" | "burst" (bench_cold; capped pairs within NOISE too) | "retime" (a capped pair
    # within NOISE timed again at the cap, its medians apart by TIE_BAND or more) | "tie" (given
    # to the `tl` kernel: a capped pair within NOISE under ties="tl", within TIE_BAND after the
    # re-time under ties="retime"). Under "retime", tl_ms and gluon_ms are the six readings'
    # medians.
    decided_by: str = "capped"
    # Where a capped pair within NOISE was timed again in bursts, the burst pair's means: the
    # times that decided (tl_ms and gluon_ms stay the capped pair's, the sweep's clock state, so
    # without these a row could show the side that did not run as the faster one)
    burst_tl_ms: float | None = None
    burst_gluon_ms: float | None = None


def choose(
    tl: Callable[[], object],
    gluon: Callable[[], object],
    sides: tuple[str, str],
    problem: tuple,
    device: torch.device,
    device_name: str,
    sources: tuple[str, ...],
    capped: bool = False,
    family: str = GEMM_FAMILY,
    ties: str = "burst",
) -> Choice:
    """Re-time the two tuned launches interleaved and return the faster. `sides` names each
    side's tuned choice (its tile and schedule): the stored decision is reused only for the same
    two choices, GPU, driver, toolchain and kernel sources. `capped`: time at the power cap.
    `family`: the op (GEMM_FAMILY, ATTENTION_FAMILY), which keeps their decisions apart.
    `ties` (TIES): who takes a capped pair within NOISE; each rule's decisions are kept
    apart."""
    if ties not in TIES:
        raise ValueError(f"unknown ties rule {ties!r}; expected one of {TIES}")
    if ties != "burst" and capped:  # the rules differ only at the cap; the burst rule's keys
        problem = (*problem, f"ties={ties}")  # stay as they were
    memo = repr((family, problem, sides, device_name))
    if memo in _DECIDED:
        return _DECIDED[memo]
    stored = tune_cache.make_key(
        family,
        device_name,
        problem,
        list(sides),
        toolchain=tune_cache.triton_toolchain(),
        sources=sources,
    )
    found = tune_cache.load(stored, list(sides))
    if found is not None:
        rec = found.record
        by = rec.get("decided_by", "capped" if capped else "burst")
        pair = _means(rec.get("burst_samples_ms"))
        choice = Choice(_KERNELS[found.index], rec["tl_ms"], rec["gluon_ms"], "cache", by, *pair)
    else:
        times = _interleaved(tl, gluon, bench_capped if capped else bench_cold, device)
        tl_ms, gluon_ms = fmean(times["tl"]), fmean(times["gluon-ws"])
        record: dict[str, Any] = dict(tl_ms=tl_ms, gluon_ms=gluon_ms, samples_ms=times)
        by, decide = "capped" if capped else "burst", (tl_ms, gluon_ms)
        burst_pair: tuple[Any, Any] = (None, None)
        if capped and max(tl_ms, gluon_ms) < NOISE * min(tl_ms, gluon_ms):
            if ties == "tl":
                by, decide = "tie", (0.0, 1.0)  # index 0: the `tl` side runs
            elif ties == "retime":
                for _ in range(RETIME_ROUNDS):
                    for side, ms in _interleaved(tl, gluon, bench_capped, device).items():
                        times[side] += ms
                tl_ms, gluon_ms = median(times["tl"]), median(times["gluon-ws"])
                record.update(tl_ms=tl_ms, gluon_ms=gluon_ms)  # samples_ms holds all six
                by, decide = "retime", (tl_ms, gluon_ms)
                if max(tl_ms, gluon_ms) < TIE_BAND * min(tl_ms, gluon_ms):
                    by, decide = "tie", (0.0, 1.0)
            else:
                burst = _interleaved(tl, gluon, bench_cold, device)
                decide = burst_pair = _means(burst)
                by, record["burst_samples_ms"] = "burst", burst
        record["decided_by"] = by
        index = 1 if decide[1] < decide[0] else 0
        choice = Choice(_KERNELS[index], tl_ms, gluon_ms, "timed", by, *burst_pair)
        # the running side's capped (or burst-timed) mean, not the faster side's
        tune_cache.save(stored, list(sides), index, (tl_ms, gluon_ms)[index], record)
    _DECIDED[memo] = choice
    return choice


def _means(samples: dict[str, list[float]] | None) -> tuple[Any, Any]:
    """Each side's mean of an interleaved pair's samples, (tl, Gluon); (None, None) for none."""
    if not samples:
        return None, None
    return fmean(samples["tl"]), fmean(samples["gluon-ws"])


def _interleaved(
    tl: Callable[[], object],
    gluon: Callable[[], object],
    bench: Callable[[Callable[[], object], torch.device], float],
    device: torch.device,
) -> dict[str, list[float]]:
    """Each side's times, taken tl, Gluon, Gluon, tl: a drift in clock cancels to first order."""
    times: dict[str, list[float]] = {"tl": [], "gluon-ws": []}
    for kernel in ("tl", "gluon-ws", "gluon-ws", "tl"):
        times[kernel].append(bench(tl if kernel == "tl" else gluon, device))
    return times


def clear_cache() -> None:
    """Forget this process's decisions (tests)."""
    _DECIDED.clear()
