"""Why an own kernel is behind the vendor at one point: the rules `harness gaps` applies, in order.

The first rule that fits a point that is behind names its reason (harness.report.gaps builds the
frame and the tables around these):
- a tail: SM fill < TAIL_FILL, unless the reference's main kernel launches no more CTAs than the
  own units, in one wave (then it leaves as many SMs idle, and the fill is named beside the next
  rule);
- a state: for a row not power-capped, the tuner's own timing of the chosen kernel, taken in the
  row's process (provider_config; cold L2 and stream hold, as the sweep's), at par with the
  reference and >= STATE_GAP below the sweep's median (the kernel ran in another state when the
  sweep timed it: partial grids on Hopper are bimodal);
- a clock: a compute-bound point whose own row ran at a median SM clock >= CLOCK_GAP below the
  reference row's (both at the power cap, the own kernel drawing more per FLOP) and is within
  PER_CYCLE_PAR of it per cycle (reference ms x MHz / own ms x MHz);
- work per SM: the own kernel's busiest SM computes >= SHARE_GAP more of the output;
- else the regime with both kernels' fraction of its roof, with what else is known beside it
  (the clocks when they differ but explain less than the gap, the reference's CTA clusters, a
  shared fill, a cold read of the point's bytes, and for compute-bound attention on NVIDIA what
  share of the tensor time its exponentials alone need at the datasheet's SFU rate).
Pandas only: no torch.
"""

from __future__ import annotations

import math

import pandas as pd

from harness.report import read_once
from harness.report.ceilings import PEAK_OF_DTYPE
from harness.report.kernel_configs import (
    config_of,
    own_cluster_ctas,
    reference_cluster,
    reference_ctas,
    reference_split,
)
from harness.report.peaks import Peaks

PAR = 0.02  # |speedup - 1| below this is "on par": A/A runs of kernels > 50 us agree to 0.4%
TAIL_FILL = 0.8  # below this the last wave's idle SMs explain more than the main loop does
# An own row whose median SM clock is this much below the reference's ran slower clocks, not
# only slower code: H200 gemm_llama-r5, 16384x10240x8192, own CUTLASS 1350 MHz at 691 W against
# cuBLAS 1485 MHz at 647 W (0.895x; 0.98x per cycle). Telemetry samples clocks to 15 MHz steps.
CLOCK_GAP = 0.03
PER_CYCLE_PAR = 0.95  # per cycle at least this close: the clock is the reason, not the code
# The own kernel's busiest SM computes at least this much more of the output than the vendor's
# busiest: the tile shape is the reason (Qwen2.5-7B 512x4608x3584 on an H200, session 78: own
# Triton's 116 tiles of 128x160 against cuBLAS's 128 CTAs of 144x128, both one wave, 0.863x)
SHARE_GAP = 1.05
# The tuner timed the chosen kernel this much faster than the sweep did: H200 gemm_llama-settled,
# 1x28672x4096, own CUTLASS tuned 59.3 us (cuBLAS 58.9 in the sweep), timed 65.9 us with p90/p10
# 1.03; the partial-grid states of gemm_tune.py's decode comment.
STATE_GAP = 0.05
# NVIDIA SMs of compute capability 8.0-9.0 return 16 exp2 (MUFU.EX2) results per clock against
# 128 FP32 FMAs (CUDA C++ Programming Guide, arithmetic instruction throughput), and a datasheet's
# FP32 peak counts an FMA as 2 FLOP: exponentials per second = FP32 FLOP/s / 16.
EXP_PER_FP32_FLOP = 1 / 16


def pct(v) -> str:
    return "" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{100 * v:.0f}%"


class Roof:
    """One GPU's roof for one dtype: peak (TFLOP/s), HBM bandwidth (GB/s), the source."""

    def __init__(self, peaks: Peaks | None, dtype: str):
        self.source = peaks.best_source(dtype) if peaks else None
        self.peak: float | None = None
        self.bw: float | None = None
        if peaks and self.source:
            self.peak = peaks.compute(dtype, self.source)
            self.bw = peaks.bandwidth(self.source)

    @property
    def ridge(self) -> float | None:
        """FLOP per byte where the two roofs meet."""
        return self.peak * 1e3 / self.bw if self.peak and self.bw else None

    def of_peak(self, row: dict) -> float | None:
        return row["tflops"] / self.peak if self.peak and row.get("tflops") else None

    def of_hbm(self, row: dict) -> float | None:
        gbps = row.get("gbps")
        return gbps / self.bw if self.bw and gbps and not math.isnan(gbps) else None


def _num(v) -> float | None:
    return float(v) if isinstance(v, int | float) and math.isfinite(v) and v > 0 else None


def softmax_share(row: dict, peaks: Peaks | None) -> float | None:
    """What the exponentials of an attention row need, at the SFU rate, as a share of what its
    two matmuls need at the tensor peak, both from the GPU's datasheet: one exp per score
    against 4 x head_dim FLOP per score (Q K^T and P V), so (tensor peak / exp rate) / (4 D).
    On an H100 or H200 (bf16): 0.92 at head_dim 64, 0.46 at 128, 0.23 at 256. The SFU and the
    tensor cores run side by side, so near 1 the kernel hides one under the other or loses
    the difference; FA3's softmax overlap exists for this. None off NVIDIA (other SFU ratios)
    or for rows that are not attention."""
    head_dim = _num(row.get("head_dim"))
    if row.get("op") != "attention" or not head_dim or peaks is None or peaks.vendor != "nvidia":
        return None
    tensor = peaks.datasheet.get(PEAK_OF_DTYPE.get(row.get("dtype") or "", ""))
    fp32 = peaks.datasheet.get(PEAK_OF_DTYPE["fp32"])
    if not tensor or not fp32:
        return None
    return tensor / (fp32 * EXP_PER_FP32_FLOP) / (4 * head_dim)


def clock_gap(own: dict, ref: dict) -> tuple[float, str] | None:
    """(speedup per cycle, "own X MHz vs <ref> Y MHz at P W vs Q W") when both rows carry an
    SM clock and the own one is CLOCK_GAP or more below the reference's; None otherwise."""
    own_mhz, ref_mhz = _num(own.get("sm_clock_mhz")), _num(ref.get("sm_clock_mhz"))
    if not own_mhz or not ref_mhz or own_mhz > ref_mhz * (1 - CLOCK_GAP):
        return None
    own_w, ref_w = _num(own.get("power_w")), _num(ref.get("power_w"))
    watts = f" at {own_w:.0f} W vs {ref_w:.0f} W" if own_w and ref_w else ""
    per_cycle = ref["latency_ms_median"] * ref_mhz / (own["latency_ms_median"] * own_mhz)
    return per_cycle, f"own {own_mhz:.0f} MHz vs {ref['provider']} {ref_mhz:.0f} MHz{watts}"


def tuned_ms(cfg: dict) -> float | None:
    """The tuner's own time of the kernel that ran, from provider_config: the interleaved
    re-time where own Triton chose between its `tl` and Gluon kernels (the side that ran: the
    GEMM's `kernel`, the prefill's `choice`; the faster side where neither says, as a pair
    close enough for bursts to decide may run its slower capped side), else the tuner's time of
    its winner (own CUTLASS and own Triton's GEMM `tuned_ms`, the attention tuners' `tune_ms`)."""
    tl, gluon = _num(cfg.get("choice_tl_ms")), _num(cfg.get("choice_gluon_ms"))
    if tl and gluon:
        # the prefill's rows also carry `kernel` (its launch's name), so `choice` first; GEMM
        # configs have no bare `choice`
        ran = cfg.get("choice") or cfg.get("kernel")
        if ran in ("gluon-ws", "gluon"):
            return gluon
        return tl if ran == "tl" else min(tl, gluon)
    return _num(cfg.get("tuned_ms")) or _num(cfg.get("tune_ms"))


def _tuned_where(cfg: dict, row: dict) -> str | None:
    """Where the tuner's time was taken, if on the GPU that wrote the row: "" in the process that
    wrote it, " in an earlier process on this GPU" for a decision read from the disk cache that
    this GPU's UUID wrote (provider_config `tuned_on`, recorded since session 44: with the tune
    pass on, nearly every row reads its decision back); None where another machine of the same
    GPU name may have timed it, or nothing says which GPU did (a machine apart is no state)."""
    if (choice := cfg.get("choice_source")) is not None:
        # own Triton's tl / Gluon choice: its interleaved re-time is the tuner's time (tuned_ms).
        # Timed in this process, it counts; read from disk, `tuned_on` names the GPU of the tile
        # tuner's entry, not of the choice's, so nothing ties the re-time to this GPU
        return "" if choice == "timed" else None
    source = cfg.get("tune_source", "tuned")
    if source in ("tuned", "seeded"):  # seeded: timed here, fewer candidates (tune_seed.py)
        return ""
    uuid = row.get("device_uuid")
    if source == "cache" and uuid and cfg.get("tuned_on") == uuid:
        return " in an earlier process on this GPU"
    return None


def state_gap(own: dict, ref: dict) -> str | None:
    """ "state: ..." when the tuner timed the own kernel at par with the reference and STATE_GAP
    or more below the sweep's median, the sweep's row not power-capped (there the clock rules
    speak: the tuner's short windows run on a fresher power budget than the sweep's sustained
    one); None otherwise."""
    if "sw_power_cap" in str(own.get("throttle_reasons") or ""):
        return None
    cfg = config_of(own)
    if (where := _tuned_where(cfg, own)) is None:
        return None
    tuned = tuned_ms(cfg)
    timed = own["latency_ms_median"]
    if tuned is None or tuned > timed * (1 - STATE_GAP):
        return None
    if tuned > ref["latency_ms_median"] * (1 + PAR):
        return None
    return (
        f"state: tuned {tuned * 1e3:.1f} us{where} (vs {ref['provider']} "
        f"{ref['latency_ms_median'] * 1e3:.1f} us), timed {timed * 1e3:.1f} us: the kernel ran "
        "in another state when the sweep timed it"
    )


def reason(
    s: float,
    share: float | None,
    fill: float | None,
    units,
    sms,
    regime,
    own_frac,
    own: dict,
    ref: dict | None,
    ref_frac,
    roof,
    read_gbps: float | None = None,
) -> str:
    if ref is None:
        return "no ok vendor row at this point"
    if s >= 1 + PAR:
        return "faster than the vendor"
    if s > 1 - PAR:
        return f"on par (within {PAR:.0%})"
    # A vendor kernel that launches no more CTAs than the own kernel has units, all in one
    # wave, leaves as many SMs idle: the fill cannot be what it does better (H200 32x6144x4096:
    # own Triton's 96 units and cuBLAS's 96 CTAs, 0.88x). The rules below speak instead.
    ref_ctas = reference_ctas(ref)
    same_fill = units is not None and ref_ctas is not None and ref_ctas <= units <= (sms or 0)
    if fill is not None and fill < TAIL_FILL and not same_fill:
        busiest = math.ceil(units / sms)
        return (
            f"tail: {units} units on {sms} SMs, busiest SM runs {busiest}, the mean "
            f"{units / sms:.2f} ({fill:.0%} fill)"
        )
    if (state := state_gap(own, ref)) is not None:
        return state
    clocks = clock_gap(own, ref) if regime == "compute" else None
    if clocks and clocks[0] >= PER_CYCLE_PAR:
        return f"clock: {clocks[1]}; {clocks[0]:.2f}x per cycle"
    if (share_gap := _busiest_share(units, sms, ref_ctas, ref)) is not None:
        return share_gap
    if regime is None:
        return "behind; no ceiling known for this GPU and dtype"
    what = "HBM bandwidth" if regime == "memory" else "tensor peak"
    aside = f" ({clocks[1]}: {clocks[0]:.2f}x per cycle)" if clocks else ""
    # a vendor kernel in clusters can multicast one TMA load to every CTA of a cluster, which
    # an unclustered own kernel reads through L2 once per CTA (ncu, H200 256x2304x16384, session
    # 83: own Triton's split GEMM moved 27% more L2 bytes than cuBLAS's 1x2-cluster kernel)
    if (cluster := reference_cluster(ref)) is not None and own_cluster_ctas(own) == 1:
        aside += (
            f"; {ref['provider']}'s kernel runs {cluster} CTA clusters (a TMA load can feed each "
            "CTA of one), own none"
        )
    if same_fill and fill is not None and fill < TAIL_FILL:
        aside += f"; {ref['provider']} runs {ref_ctas} CTAs, so the {fill:.0%} fill is shared"
    if read_gbps and regime == "memory":
        aside += (
            f"; a cold read of these bytes runs {read_gbps:,.0f} GB/s: own "
            f"{pct(share_of(own, read_gbps))}, {ref['provider']} {pct(share_of(ref, read_gbps))} of it"
        )
    if share is not None and regime == "compute":
        aside += (
            f"; its exponentials alone need {share:.0%} of the tensor time at head_dim "
            f"{int(own['head_dim'])} (SFU rate, datasheet)"
        )
    return (
        f"{regime}-bound: own {pct(own_frac)} vs {ref['provider']} {pct(ref_frac)} of {what} "
        f"({roof.source}){aside}"
    )


def _busiest_share(units, sms, ref_ctas: int | None, ref: dict) -> str | None:
    """The reason when the own kernel's busiest SM computes SHARE_GAP more of the output than
    the vendor's: each kernel's busiest SM runs ceil(units / SMs) equal tiles of 1 / units of
    the output. None when either count is unknown, the vendor splits K (unequal shares) or its
    grid is whole waves of SMs (persistent)."""
    if not units or not sms or not ref_ctas or reference_split(ref):
        return None
    if ref_ctas % sms == 0:  # whole waves of SMs: read as a persistent grid, whose CTAs each
        return None  # run an unknown number of tiles (cuBLAS's 2x66 at 8192^3)
    own_rounds, ref_rounds = math.ceil(units / sms), math.ceil(ref_ctas / sms)
    ratio = (own_rounds / units) / (ref_rounds / ref_ctas)
    if ratio < SHARE_GAP:
        return None
    return (
        f"work per SM: own's busiest SM computes {ratio:.2f}x as much of the output as "
        f"{ref['provider']}'s ({units} units, {own_rounds} on the busiest of {sms} SMs; "
        f"{ref['provider']}: {ref_ctas} CTAs, {ref_rounds})"
    )


def share_of(row: dict, gbps: float) -> float | None:
    v = _num(row.get("gbps"))
    return v / gbps if v else None


def read_once_at(row: dict, curves: dict[str, pd.Series]) -> float | None:
    """One cold read pass's GB/s over the row's bytes on its GPU model, where a
    `probes_read_once` run is among the rows read and probed that few bytes (None otherwise)."""
    c = curves.get(str(row.get("device_name")))
    nbytes = _num(row.get("min_bytes"))
    if c is None or c.empty or not nbytes:
        return None
    gbps = float(read_once.gbps_at(c, pd.Series([nbytes])).iloc[0])
    return None if math.isnan(gbps) else gbps


def roof_name(regime: str | None, ref_of_read: float | None) -> str | None:
    """'peak' (compute-bound), 'cold read' (memory-bound, a read-once run given: one pass over
    the point's bytes) or 'ceiling' (memory-bound, the HBM read ceiling); None without a regime."""
    if regime is None:
        return None
    if regime == "compute":
        return "peak"
    return "cold read" if ref_of_read else "ceiling"
