"""Own kernels against the vendor, point by point, and why the own kernel is behind where it is.

For every point an own provider measured ok on one GPU (latest row of each), against the
reference: the fastest ok vendor row of that point, named in the `reference` column
(harness.report.reference; a point without one says so and has no speedup):

    speedup  = reference median / own median                 (> 1: the own kernel is faster)
    regime   = memory when intensity < ridge = dtype peak / HBM bandwidth, else compute
               (measured ceilings of that GPU, else its datasheet; the source is named)
    % roof   = achieved / min(peak, intensity x HBM) for the own and the reference row
    SM fill  = (units / SMs) / ceil(units / SMs): the mean SM's share of the work over the
               busiest SM's, for kernels whose row records how many equal-cost work units they
               launched (GEMM tiles x splits, decode programs, non-causal prefill Q blocks);
               1.0 when every SM gets the same number of units
    reason   = the first rule that fits a point that is behind: a tail (fill < 0.8, unless the
               reference's main kernel launches no more CTAs than the own units, in one wave:
               then it leaves as many SMs idle and the fill is named beside the next rule); for a row
               not power-capped, the tuner's own timing of the chosen kernel, taken in the
               row's process (provider_config; cold L2 and stream hold, as the sweep's), at par
               with the reference and >= 5% below the sweep's median (the kernel ran in another
               state when the sweep timed it: partial grids on Hopper are bimodal); then, for
               a compute-bound point whose own row ran at a lower median SM clock than the
               reference row (>= 3% lower: both at the power cap, the own kernel drawing more
               per FLOP) and is within 5% of it per cycle (reference ms x MHz / own ms x MHz),
               the clocks and power;
               else the regime with both kernels' fraction of its roof (and the clocks, when
               they differ by that much but explain less than the gap); a compute-bound
               attention point on an NVIDIA GPU adds what share of the tensor time its
               exponentials alone need at the datasheet's SFU rate (softmax_share)

Summaries group the points by GPU, op, dtype, own provider and the own row's run, so one line is
"gemm_llama: geomean own/vendor", the figure the issues ask for. Pandas only: no torch.
"""

from __future__ import annotations

import math

import pandas as pd
from tabulate import tabulate

from harness.measure.stats import geomean
from harness.report import read_once
from harness.report.ceilings import PEAK_OF_DTYPE
from harness.report.data import fmt
from harness.report.data import ladder_rungs as rungs
from harness.report.kernel_configs import (
    config_of,
    own_cluster_ctas,
    own_config,
    reference_cluster,
    reference_ctas,
    reference_kernel,
    reference_split,
    sm_fill,
    to_int,
    work_units,
)
from harness.report.peaks import Peaks, device_peaks
from harness.report.reference import NO_VENDOR, fastest
from harness.report.rung_worth import rung_worth
from harness.report.tables import Table, speed_rows

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
WORST_SHOWN = 15  # points per GPU in the report body (the written table holds them all)
WORST_COLUMNS = [
    "device",
    "problem",
    "own",
    "reference",
    "speedup",
    "regime",
    "own_frac",
    "reference_frac",
    "units",
    "fill",
    "own_config",
    "reference_kernel",
    "reference_gpu",
    "reason",
]


def _pct(v) -> str:
    return "" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{100 * v:.0f}%"


class _Roof:
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


def _clock_gap(own: dict, ref: dict) -> tuple[float, str] | None:
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
    if source == "tuned":
        return ""
    uuid = row.get("device_uuid")
    if source == "cache" and uuid and cfg.get("tuned_on") == uuid:
        return " in an earlier process on this GPU"
    return None


def _state_gap(own: dict, ref: dict) -> str | None:
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


def _reason(
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
    if (state := _state_gap(own, ref)) is not None:
        return state
    clocks = _clock_gap(own, ref) if regime == "compute" else None
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
            f"{_pct(_of(own, read_gbps))}, {ref['provider']} {_pct(_of(ref, read_gbps))} of it"
        )
    if share is not None and regime == "compute":
        aside += (
            f"; its exponentials alone need {share:.0%} of the tensor time at head_dim "
            f"{int(own['head_dim'])} (SFU rate, datasheet)"
        )
    return (
        f"{regime}-bound: own {_pct(own_frac)} vs {ref['provider']} {_pct(ref_frac)} of {what} "
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


def _of(row: dict, gbps: float) -> float | None:
    v = _num(row.get("gbps"))
    return v / gbps if v else None


def _read_once_at(row: dict, curves: dict[str, pd.Series]) -> float | None:
    """One cold read pass's GB/s over the row's bytes on its GPU model, where a
    `probes_read_once` run is among the rows read."""
    c = curves.get(str(row.get("device_name")))
    nbytes = _num(row.get("min_bytes"))
    if c is None or c.empty or not nbytes:
        return None
    return float(read_once.gbps_at(c, pd.Series([nbytes])).iloc[0])


def _roof_name(regime: str | None, ref_of_read: float | None) -> str | None:
    """'peak' (compute-bound), 'cold read' (memory-bound, a read-once run given: one pass over
    the point's bytes) or 'ceiling' (memory-bound, the HBM read ceiling); None without a regime."""
    if regime is None:
        return None
    if regime == "compute":
        return "peak"
    return "cold read" if ref_of_read else "ceiling"


def gap_frame(df: pd.DataFrame) -> pd.DataFrame:
    """One line per (GPU, point, own provider) with the point's reference beside it (the
    fastest ok vendor row, NO_VENDOR and a NaN speedup where none): speedup, regime, both
    fractions of the bounding roof, SM fill and the reason; `rung` marks ladder rungs and fixed
    configs. Sorted worst first, points without a reference last."""
    ok = speed_rows(df)
    peaks = device_peaks(df)
    rung_names = rungs(ok.loc[ok["family"] == "own", "provider"])
    curves = read_once.curves_by_device(df)
    lines = []
    for (device, _, problem), g in ok.groupby(["device", "op", "problem"], sort=True):
        own = g[g["family"] == "own"]
        if own.empty:
            continue
        ref = fastest(g.to_dict("records"))
        # the vendors with an ok row here: what "fastest" chose among (harness.report.gap_change
        # compares two runs' speedups only where these agree)
        vendors = ",".join(sorted(set(g.loc[g["family"] == "vendor", "provider"])))
        for r in own.to_dict("records"):
            roof = _Roof(peaks.get(r["device_name"]), r["dtype"])
            share = softmax_share(r, peaks.get(r["device_name"]))
            intensity = r.get("intensity_flop_per_byte")
            regime = None
            if roof.ridge and intensity and not math.isnan(intensity):
                regime = "memory" if intensity < roof.ridge else "compute"
            frac = roof.of_hbm if regime == "memory" else roof.of_peak
            own_frac = frac(r) if regime else None
            ref_frac = frac(ref) if regime and ref else None
            s = ref["latency_ms_median"] / r["latency_ms_median"] if ref else math.nan
            read_gbps = _read_once_at(r, curves) if regime == "memory" else None
            ref_of_read = _of(ref, read_gbps) if ref and read_gbps else None
            units, sms = work_units(r), to_int(r.get("device_sm_count"))
            fill = sm_fill(units, sms)
            lines.append(
                {
                    "device": device,
                    "op": r["op"],
                    "dtype": r["dtype"],
                    "problem": problem,
                    "run": r["run_id"],
                    "own": r["provider"],
                    "rung": r["provider"] in rung_names,
                    "reference": ref["provider"] if ref else NO_VENDOR,
                    "vendors": vendors,
                    "speedup": s,
                    "own_ms": r["latency_ms_median"],
                    "reference_ms": ref["latency_ms_median"] if ref else math.nan,
                    "intensity": intensity,
                    "ridge": roof.ridge,
                    "regime": regime,
                    "own_frac": own_frac,
                    "reference_frac": ref_frac,
                    "read_once_gbps": read_gbps,
                    "reference_of_read_once": ref_of_read,
                    # the roof `roof_speedup` and `room_by_regime` count against
                    "roof": _roof_name(regime, ref_of_read),
                    "reference_of_roof": ref_of_read or ref_frac,
                    "units": units,
                    "sms": sms,
                    "fill": fill,
                    "own_config": own_config(r),
                    "reference_kernel": reference_kernel(ref),
                    "reference_gpu": same_gpu(r, ref),
                    "softmax_share": share,
                    "reason": _reason(
                        s,
                        share,
                        fill,
                        units,
                        sms,
                        regime,
                        own_frac,
                        r,
                        ref,
                        ref_frac,
                        roof,
                        read_gbps,
                    ),
                }
            )
    frame = pd.DataFrame(lines)
    return frame.sort_values("speedup", kind="stable").reset_index(drop=True) if lines else frame


def same_gpu(own: dict, ref: dict | None) -> str:
    """'same' when the reference row was timed on the own row's GPU (one device_uuid), 'other'
    when on another GPU of the same model (two runs, or a run resumed on another machine: two
    machines of one model differ by a few percent, so such a ratio is weaker evidence), '' when
    a row does not say."""
    mine, theirs = own.get("device_uuid"), (ref or {}).get("device_uuid")
    if not mine or not theirs:
        return ""
    return "same" if mine == theirs else "other"


def _counts(values: pd.Series) -> str:
    """'a 3, b 1': each value with how often it occurs, most frequent first, then by name."""
    items = sorted(values.value_counts().items(), key=lambda kv: (-kv[1], kv[0]))
    return ", ".join(f"{k} {v}" for k, v in items)


def gap_summary(frame: pd.DataFrame) -> pd.DataFrame:
    """Per (GPU, op, dtype, own provider, own run): points with a reference, geomean speedup,
    share on par or faster, the worst point, what the reasons of the points behind come down
    to, which vendor rows were the references (how often) and the points without one."""
    if frame.empty:
        return frame
    out = []
    keys = ["device", "op", "dtype", "own", "run"]
    for (rung, *key), g in frame.groupby(["rung", *keys], sort=True):  # headline ones first
        compared = g[g["speedup"].notna()]
        behind = compared[compared["speedup"] <= 1 - PAR]
        worst = compared.loc[compared["speedup"].idxmin()] if len(compared) else None
        out.append(
            {
                **dict(zip(keys, key, strict=True)),
                "rung": rung,
                "points": len(compared),
                "geomean": geomean(compared["speedup"]),
                "median": float(compared["speedup"].median()),
                "at_par_or_better": float((compared["speedup"] > 1 - PAR).mean())
                if len(compared)
                else math.nan,
                "worst": f"{worst['speedup']:.3f} {worst['problem']}" if worst is not None else "",
                "roof_speedup": roof_speedup(compared),
                "behind_by_reason": _counts(behind["reason"].str.split(":").str[0]),
                "references": _counts(compared["reference"]),
                "no_reference": len(g) - len(compared),
                "reference_on_other_gpu": int((compared["reference_gpu"] == "other").sum()),
            }
        )
    return pd.DataFrame(out)


def roof_speedup(frame: pd.DataFrame) -> float:
    """The geomean speedup over the reference of a kernel that ran at the roof at every point
    with a regime (1 / the reference's fraction of it): the most any own kernel could show, so
    the room a bar like issue 20.1's 1.03x has. A memory-bound point's roof is one cold read of
    its bytes where a `probes_read_once` run is among the rows, else the HBM read ceiling.
    H200 gemm_llama-s61 with `ceilings` and `read_once-s57`: cuBLAS at 0.91-0.94 of the bf16
    peak where compute-bound (room 1.07-1.10x) and 0.89 of a cold read of the bytes where
    memory-bound (room 1.12x; 1.39x against the ceiling alone, which a single pass over
    34-940 MB cannot reach). NaN without a roof. An upper bound: a roof raised by the fastest
    row is met by that row's shape, not by every shape."""
    if "reference_of_roof" not in frame:
        return math.nan
    fracs = pd.to_numeric(frame["reference_of_roof"], errors="coerce").dropna()
    fracs = fracs[fracs > 0]
    return geomean(1 / fracs) if len(fracs) else math.nan


def room_by_regime(frame: pd.DataFrame) -> pd.DataFrame:
    """Per (GPU, dtype, own provider, run, regime) of the headline kernels: points, the reference's
    and own's geomean fraction of the roof (a cold read of the point's bytes where known for a
    memory-bound point, else the ceiling) and the room (1 / the reference's): where a bar like
    1.03x can still be won. Empty without regimes."""
    if frame.empty or "regime" not in frame:
        return pd.DataFrame()
    f = frame[~frame["rung"] & frame["speedup"].notna() & frame["regime"].notna()].copy()
    if f.empty:
        return pd.DataFrame()
    ref = pd.to_numeric(f["reference_of_roof"], errors="coerce")
    f["ref_of_roof"] = ref
    f["own_of_roof"] = ref * f["speedup"]
    out = []
    keys = ["device", "dtype", "own", "run", "regime", "roof"]
    for key, g in f.groupby(keys, sort=True):
        g = g[g["ref_of_roof"] > 0]
        out.append(
            {
                **dict(zip(keys, key, strict=True)),
                "points": len(g),
                "speedup": geomean(g["speedup"]),
                "reference_of_roof": geomean(g["ref_of_roof"]),
                "own_of_roof": geomean(g["own_of_roof"]),
                "room": geomean(1 / g["ref_of_roof"]),
            }
        )
    return pd.DataFrame(out)


def _display(frame: pd.DataFrame) -> pd.DataFrame:
    shown = frame.copy()
    shown["speedup"] = shown["speedup"].map(lambda v: fmt(v, ".3f"))
    for col in ("own_ms", "reference_ms", "intensity", "ridge", "read_once_gbps"):
        shown[col] = shown[col].map(fmt)
    for col in (
        "own_frac",
        "reference_frac",
        "reference_of_read_once",
        "reference_of_roof",
        "fill",
    ):
        shown[col] = shown[col].map(_pct)
    shown["units"] = shown["units"].map(lambda v: "" if pd.isna(v) else str(int(v)))
    shown = shown.drop(columns=["sms"])
    return shown.astype(object).where(shown.notna(), "")


def worst_points(frame: pd.DataFrame, n: int = WORST_SHOWN) -> pd.DataFrame:
    """The n worst points per GPU of the headline own kernels (ladder rungs and points without
    a reference left out)."""
    frame = frame[~frame["rung"] & frame["speedup"].notna()] if not frame.empty else frame
    return frame.groupby("device", sort=True).head(n) if not frame.empty else frame


def gap_tables(df: pd.DataFrame) -> tuple[Table, Table, Table, Table, Table]:
    """(summary, the room at the roof by regime, worst points of the headline kernels, every
    point, what each ladder rung's feature was worth within its run) as report tables."""
    frame = gap_frame(df)
    summary = gap_summary(frame)
    if not summary.empty:
        summary = summary.copy()
        summary["geomean"] = summary["geomean"].map(lambda v: fmt(v, ".3f"))
        summary["median"] = summary["median"].map(lambda v: fmt(v, ".3f"))
        summary["at_par_or_better"] = summary["at_par_or_better"].map(_pct)
        summary["roof_speedup"] = summary["roof_speedup"].map(lambda v: fmt(v, ".3f"))
    caption = (
        f"Own kernel vs its reference: the fastest ok vendor row of the same point on "
        f"the same GPU, named per line (references: how often each was it; "
        f"'{NO_VENDOR}' / no_reference: points without one, no speedup); "
        f"speedup = reference median / own median; on par within {PAR:.0%}. Reasons for "
        f"points behind: 'tail' when the own kernel's equal-cost work units leave SMs "
        f"idle in the last wave (fill < {TAIL_FILL:.0%}), else the regime (intensity vs "
        f"the ridge of the measured ceilings, datasheet where none) and both kernels' "
        f"fraction of that roof. roof_speedup: the geomean speedup over the reference of a "
        f"kernel at that roof at every point (1 / the reference's fraction), the most any "
        f"own kernel could show; an upper bound, since a measured roof is the fastest row's "
        f"shape. rung: a ladder rung or fixed config. "
        f"reference_gpu / reference_on_other_gpu: whether the reference row was timed on "
        f"the own row's GPU (device_uuid) or on another GPU of the same model (weaker: "
        f"machines differ by a few percent)."
    )
    worst = worst_points(frame)
    room_cols = ("speedup", "reference_of_roof", "own_of_roof", "room")
    room = _three_places(room_by_regime(frame), room_cols)
    room_caption = (
        "Where a bar can still be won: per run and regime, the reference's and own's geomean "
        "fraction of the roof, and the room (1 / the reference's; what a kernel at the roof "
        "at every point would show). roof: 'peak' is the measured tensor peak; 'cold read' "
        "one cold read pass over the point's own bytes (a probes_read_once run among the "
        "rows read; a single pass over tens of MB cannot reach the read ceiling); 'ceiling' "
        "the HBM read ceiling where no such run was read."
    )
    return (
        Table("gaps_summary", "Own vs vendor: where and why", caption, summary),
        Table("gaps_room", "The room at the roof, by regime", room_caption, room),
        Table(
            "gaps_worst",
            f"Worst {WORST_SHOWN} points per GPU (headline kernels)",
            caption,
            _display(worst)[WORST_COLUMNS] if not worst.empty else worst,
        ),
        Table(
            "gaps",
            "Own vs vendor, every point (worst first)",
            caption,
            _display(frame) if not frame.empty else frame,
        ),
        worth_table(frame),
    )


def _three_places(frame: pd.DataFrame, cols: tuple[str, ...]) -> pd.DataFrame:
    """`frame` with `cols` as text to three decimals (an empty frame as it is)."""
    for col in cols if not frame.empty else ():
        frame[col] = frame[col].map(lambda v: fmt(v, ".3f"))
    return frame


def worth_table(frame: pd.DataFrame) -> Table:
    """rung_worth as a report table (the ladder section's)."""
    worth = _three_places(rung_worth(frame), ("rung_over_own", "min", "max"))
    caption = (
        "Per run and ladder rung: the rung's median time over its own kernel's (the provider "
        "its name extends) at every point both measured ok in that run, so on one card in one "
        "process; above 1 the feature the rung removes paid (paid_at: at how many points). "
        "Never taken across runs: two cards of one model drift by a few percent."
    )
    return Table(
        "ladder_worth", "What each rung's feature was worth, within its run", caption, worth
    )


def render_worst(frame: pd.DataFrame, n: int = WORST_SHOWN, tablefmt: str = "github") -> str:
    """worst_points as text for the terminal."""
    worst = worst_points(frame, n)
    if worst.empty:
        return "(no problem measured by both an own kernel and a vendor library)"
    return tabulate(
        _display(worst)[WORST_COLUMNS], headers="keys", tablefmt=tablefmt, showindex=False
    )
