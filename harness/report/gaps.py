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
    reason   = the first rule that fits a point that is behind (harness.report.gap_reasons:
               a tail, a state, a clock, work per SM, else the regime and its roofs)

Summaries group the points by GPU, op, dtype, own provider and the own row's run, so one line is
"gemm_llama: geomean own/vendor", the figure the issues ask for. Pandas only: no torch.
"""

from __future__ import annotations

import math

import pandas as pd
from tabulate import tabulate

from harness.measure.stats import geomean
from harness.report import read_once
from harness.report.data import fmt
from harness.report.data import ladder_rungs as rungs
from harness.report.gap_reasons import (
    PAR,
    TAIL_FILL,
    Roof,
    pct,
    read_once_at,
    reason,
    roof_name,
    share_of,
    softmax_share,
)
from harness.report.kernel_configs import (
    own_config,
    reference_kernel,
    sm_fill,
    to_int,
    work_units,
)
from harness.report.peaks import device_peaks
from harness.report.reference import NO_VENDOR, fastest
from harness.report.rung_worth import rung_worth
from harness.report.tables import Table, speed_rows

WORST_SHOWN = 15  # points per GPU in the report body (the written table holds them all)
WORST_COLUMNS = [
    "device",
    "problem",
    "run",
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


def gap_frame(df: pd.DataFrame) -> pd.DataFrame:
    """One line per (GPU, point, own provider) with the point's reference beside it (the
    fastest ok vendor row, NO_VENDOR and a NaN speedup where none): speedup, regime, both
    fractions of the bounding roof, SM fill and the reason; `rung` marks ladder rungs and fixed
    configs. Sorted worst first, points without a reference last.

    A ceilings run among the rows is a roof, not a run to judge: its few GEMMs (4096^3 ...
    tf32 included) would otherwise join the worst points of a grid they are not part of, or
    stand in as a grid point's latest row. Its rows are judged only where no other run is."""
    peaks = device_peaks(df)
    roof_runs = set(df.loc[df["op"] == "ceiling", "run_id"].dropna())
    judged = df[~df["run_id"].isin(roof_runs)]
    ok = speed_rows(judged if (judged["family"] == "own").any() else df)
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
            roof = Roof(peaks.get(r["device_name"]), r["dtype"])
            share = softmax_share(r, peaks.get(r["device_name"]))
            intensity = r.get("intensity_flop_per_byte")
            regime = None
            if roof.ridge and intensity and not math.isnan(intensity):
                regime = "memory" if intensity < roof.ridge else "compute"
            frac = roof.of_hbm if regime == "memory" else roof.of_peak
            own_frac = frac(r) if regime else None
            ref_frac = frac(ref) if regime and ref else None
            s = ref["latency_ms_median"] / r["latency_ms_median"] if ref else math.nan
            read_gbps = read_once_at(r, curves) if regime == "memory" else None
            ref_of_read = share_of(ref, read_gbps) if ref and read_gbps else None
            # Just past the ridge a point's bytes may take longer to read in one cold pass than
            # its FLOPs at the peak: its roof is the slower of the two (H200 256x4096x4096:
            # cuBLAS at 62% of the peak, 69% of that roof).
            bytes_roof = (
                read_once_at(r, curves) if regime == "compute" and ref and ref_frac else None
            )
            ref_of_bytes = share_of(ref, bytes_roof) if ref and bytes_roof else None
            roof_label: str | None
            ref_of_roof: float | None
            if ref_of_bytes and ref_frac and ref_of_bytes > ref_frac:
                roof_label, ref_of_roof = "cold read", ref_of_bytes
            else:
                roof_label, ref_of_roof = roof_name(regime, ref_of_read), ref_of_read or ref_frac
            if roof_label in ("peak", "ceiling") and roof.source == "datasheet":
                roof_label += " (datasheet)"  # no ceilings run among the rows: no measured roof
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
                    "roof": roof_label,
                    "reference_of_roof": ref_of_roof,
                    "units": units,
                    "sms": sms,
                    "fill": fill,
                    "own_config": own_config(r),
                    "reference_kernel": reference_kernel(ref),
                    "reference_gpu": same_gpu(r, ref),
                    "softmax_share": share,
                    "reason": reason(
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
    if not isinstance(mine, str) or not isinstance(theirs, str) or not mine or not theirs:
        return ""  # None or NaN (a CPU row has no UUID): the rows do not say
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
    34-940 MB cannot reach). NaN without a roof. A point above its roof (a row faster than the
    ceilings run) has room under 1 there."""
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
        shown[col] = shown[col].map(pct)
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
        summary["at_par_or_better"] = summary["at_par_or_better"].map(pct)
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
        f"kernel at the roof at every point (1 / the reference's fraction of the roof: the "
        f"peak, or one cold read of the point's bytes where a read-once run is among the rows "
        f"and that read is the slower, as for every memory-bound point), the most any "
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
        "rows read; a single pass over tens of MB cannot reach the read ceiling), for a "
        "memory-bound point and for a compute-bound one whose bytes take longer to read once "
        "than its FLOPs at the peak; 'ceiling' the HBM read ceiling where no such run was "
        "read; '(datasheet)' marks a peak or ceiling taken from the datasheet, no ceilings run "
        "being among the rows (a datasheet peak is not reached: the room it gives is larger "
        "than any kernel can win)."
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
        "process; above 1 the feature the rung removes paid, or, for a rung that pins one "
        "alternative (-persistent, -tiles, -exp-emu), the own kernel's choice beat it "
        "(paid_at: at how many points). "
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
