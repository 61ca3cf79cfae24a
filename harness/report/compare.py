"""Run comparison: per point, the median latency ratio B/A with a bootstrap confidence interval
and a verdict; and the A/A noise floor.

    harness compare A B [--threshold 0.02] [--markdown FILE]   B against A, point by point
    harness compare A B --aa                                   the same, read as an A/A pair
    harness compare A                                          A/A within one run (even vs odd
                                                               samples of every point)
Points meet on op, provider, problem and protocol (timer, l2, fill, seed), not on run or device
identity, so two GPUs or two commits compare directly. When several GPUs took part (a sharded
run, devices=all), a "by GPU" table follows the summary: one line per (GPU of A, GPU of B).
ratio = median(B) / median(A) of latency:
    SAME     the CI lies inside [1 - t, 1 + t]
    FASTER   the CI lies below 1 - t (B is faster)
    SLOWER   the CI lies above 1 + t
    UNCLEAR  anything else (too noisy, or a difference smaller than it can resolve)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from tabulate import tabulate

from harness.measure.stats import bootstrap_median_ratio, geomean
from harness.report.data import IDENTITY, fmt, latest, settled_side, tuned_in_point

VERDICTS = ("SAME", "FASTER", "SLOWER", "UNCLEAR")
DEFAULT_THRESHOLD = 0.02
MIN_SAMPLES = 3


def verdict(lo: float, hi: float, threshold: float = DEFAULT_THRESHOLD) -> str:
    """Verdict of a ratio CI (lo, hi) of B/A latency against a noise threshold."""
    if lo >= 1 - threshold and hi <= 1 + threshold:
        return "SAME"
    if hi < 1 - threshold:
        return "FASTER"
    if lo > 1 + threshold:
        return "SLOWER"
    return "UNCLEAR"


def _points(df: pd.DataFrame) -> dict[tuple[str, ...], dict]:
    """{identity (as strings, so missing values match too): latest row}."""
    rows = latest(df[df["op"] != "ceiling"], IDENTITY)
    return {tuple(str(r[c]) for c in IDENTITY): r for r in rows.to_dict("records")}


def _device(row: dict | None) -> str:
    """Which GPU measured a row: its index, and the UUID's first block to tell hosts apart."""
    if row is None:
        return ""
    index, uuid = row.get("device_index"), str(row.get("device_uuid") or "")
    index = "" if index is None or (isinstance(index, float) and math.isnan(index)) else int(index)
    return f"{row.get('device_type', '')}:{index} {uuid[:12]}".strip()


def _unstable_note(ra: dict, rb: dict) -> str:
    """Which side's samples the spread guard flagged (timer.py, spread_guard.py), and why: a
    median of spread samples makes its ratio a weaker statement than the CI alone suggests."""
    parts = []
    for side, r in (("A", ra), ("B", rb)):
        if r.get("unstable") is True:
            parts.append(f"{side} unstable: {r.get('unstable_reason') or 'spread'}")
    return "; ".join(parts)


def _settle_note(ra: dict, rb: dict) -> str:
    """A power-capped point timed with the limiter settled on one side only (data.settled_side):
    the ratio mixes the other side's limiter state in."""
    side = settled_side(ra, rb)
    return f"power-capped; only {side} settled the limiter first" if side else ""


def _tune_note(ra: dict, rb: dict) -> str:
    """An own kernel tuned inside its point on one side only (data.tuned_in_point): that side
    was timed right after its tuner ran at full load, and read slower for it."""
    a, b = tuned_in_point(ra), tuned_in_point(rb)
    return f"only {'A' if a else 'B'} tuned inside the point" if a != b else ""


def _flush_note(ra: dict, rb: dict) -> str:
    """The two sides flushed different byte counts before each sample (protocol.l2_flush_factor,
    the rows' `l2_flush_bytes`; rows from before schema 6 carry none and are not flagged). The
    points still meet: on an H200 one-pass reads of 16-512 MB timed within 0-2.6% behind 1x-4x
    L2 flushes, and 1.2-9% slower at <= 192 MB behind 8x (results/h200/README.md, session 77),
    so a ratio across flush sizes carries that difference too."""
    sizes = [r.get("l2_flush_bytes") for r in (ra, rb)]
    known = [float(f) for f in sizes if f is not None and not math.isnan(float(f))]
    if len(known) < 2 or known[0] == known[1]:
        return ""
    return f"flush A {known[0] / 2**20:.0f} MiB, B {known[1] / 2**20:.0f} MiB"


def gpu_models(rows: pd.DataFrame) -> str:
    """The GPU models (device_name) a run's rows were measured on, e.g. 'NVIDIA H200'."""
    names = sorted({str(n) for n in rows.get("device_name", pd.Series(dtype=str)).dropna()})
    return ", ".join(names) or "unknown"


def model_warning(a: pd.DataFrame, b: pd.DataFrame, runs: list[str]) -> str:
    """A line when A and B ran on different GPU models: their ratios then measure the GPUs as
    much as the kernels, which `harness crossgpu` sets against the roofline's prediction."""
    ma, mb = gpu_models(a), gpu_models(b)
    if ma == mb:
        return ""
    return (
        f"warning: A and B ran on different GPU models ({ma} / {mb}): each B/A is a cross-GPU "
        f"ratio, not a change of the kernel; `harness crossgpu {' '.join(runs)}` predicts "
        "it from each GPU's measured roofline"
    )


def what_ran(rows: pd.DataFrame) -> str:
    """'gemm 477 points, attention 12' (ok or not): what a run holds, for a one-line error."""
    if rows.empty:
        return "no rows"
    counts = rows.groupby("op").size().sort_values(ascending=False)
    parts = [f"{op} {n}" for op, n in counts.items()]
    return f"{gpu_models(rows)}: " + ", ".join(parts) + " rows"


def compare_runs(
    a: pd.DataFrame,
    b: pd.DataFrame,
    threshold: float = DEFAULT_THRESHOLD,
    n_boot: int = 2000,
    seed: int = 0,
) -> pd.DataFrame:
    """One line per point of either run: medians, ratio B/A with its CI, verdict and a note."""
    pa, pb = _points(a), _points(b)
    lines = []
    for key in dict.fromkeys([*pa, *pb]):
        ra, rb = pa.get(key), pb.get(key)
        base = pa[key] if key in pa else pb[key]  # the key is in one run at least
        line = {
            "op": base["op"],
            "provider": base["provider"],
            "problem": base["problem"],
            "median_a_ms": math.nan,
            "median_b_ms": math.nan,
            "ratio": math.nan,
            "lo": math.nan,
            "hi": math.nan,
            "verdict": "n/a",
            "note": "",
            "status_a": ra and ra["status"],
            "status_b": rb and rb["status"],
            "device_a": _device(ra),
            "device_b": _device(rb),
            "spread_a": (ra or {}).get("latency_p90_over_p10", math.nan),
            "spread_b": (rb or {}).get("latency_p90_over_p10", math.nan),
            "unstable_rows": sum(r.get("unstable") is True for r in (ra, rb) if r),
        }
        if ra is None or rb is None:
            line["note"] = "only in A" if rb is None else "only in B"
        elif ra["status"] != "ok" or rb["status"] != "ok":
            line["note"] = f"A {ra['status']}, B {rb['status']}: not compared as speed"
        else:
            sa, sb = ra.get("samples_ms"), rb.get("samples_ms")
            line.update(median_a_ms=ra["latency_ms_median"], median_b_ms=rb["latency_ms_median"])
            if sa is None or sb is None or min(len(sa), len(sb)) < MIN_SAMPLES:
                line["ratio"] = rb["latency_ms_median"] / ra["latency_ms_median"]
                line.update(verdict="UNCLEAR", note=f"fewer than {MIN_SAMPLES} raw samples")
            else:
                lo, r, hi = bootstrap_median_ratio(list(sa), list(sb), n_boot=n_boot, seed=seed)
                line.update(ratio=r, lo=lo, hi=hi, verdict=verdict(lo, hi, threshold))
            notes = (
                _unstable_note(ra, rb),
                _settle_note(ra, rb),
                _tune_note(ra, rb),
                _flush_note(ra, rb),
            )
            line["note"] = "; ".join(n for n in notes if n)
        lines.append(line)
    return pd.DataFrame(lines)


def split_halves(df: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Two pseudo-runs from one: even- and odd-indexed samples of every ok point (samples were
    taken alternately in time, so slow drift lands in both halves alike)."""
    halves = []
    for part in (0, 1):
        h = df.copy()
        samples = [None if s is None else np.asarray(s)[part::2] for s in df["samples_ms"]]
        h["samples_ms"] = samples
        h["latency_ms_median"] = [
            float(np.median(s)) if s is not None and len(s) else math.nan for s in samples
        ]
        halves.append(h)
    return halves[0], halves[1]


@dataclass(frozen=True)
class NoiseFloor:
    """Distribution of |B/A - 1| over points compared as speed."""

    points: int
    median: float
    p90: float
    p95: float
    max: float
    worst: str
    within: float  # share of points with |ratio - 1| <= threshold
    alarms: int  # FASTER / SLOWER verdicts: false alarms when A and B measure the same thing
    # The timer's acceptance test (issue 16): points of >= 10 us within 2%, every point within
    # 5%, p90/p10 <= 1.10 on >= 95% of rows (both runs' rows), no unstable row.
    long_points: int = 0
    long_within_2: float = math.nan
    within_5: float = math.nan
    spread_ok: float = math.nan  # share of rows with p90/p10 <= 1.10
    unstable_rows: int = 0

    def acceptance(self) -> str:
        return (
            f"timer acceptance: >=10 us within 2%: {self.long_within_2:.1%} of "
            f"{self.long_points}; all within 5%: {self.within_5:.1%}; p90/p10 <= 1.10: "
            f"{self.spread_ok:.1%} of rows; unstable rows {self.unstable_rows}"
        )

    def text(self, threshold: float) -> str:
        if not self.points:
            return "noise floor: no point was compared as speed"
        return (
            f"noise floor over {self.points} points: |B/A-1| median {self.median:.2%}, "
            f"p90 {self.p90:.2%}, p95 {self.p95:.2%}, max {self.max:.2%} ({self.worst}); "
            f"within +-{threshold:.0%}: {self.within:.0%}; FASTER/SLOWER false alarms: "
            f"{self.alarms}\n{self.acceptance()}"
        )


def noise_floor(result: pd.DataFrame, threshold: float = DEFAULT_THRESHOLD) -> NoiseFloor:
    r = result[result["ratio"].notna()]
    if r.empty:
        return NoiseFloor(0, math.nan, math.nan, math.nan, math.nan, "", math.nan, 0)
    dev = (r["ratio"] - 1).abs()
    worst = r.loc[dev.idxmax()]
    long = dev[r["median_a_ms"] >= 0.010]
    spread = pd.concat([r["spread_a"], r["spread_b"]]).dropna()
    return NoiseFloor(
        points=len(r),
        median=float(dev.median()),
        p90=float(dev.quantile(0.9)),
        p95=float(dev.quantile(0.95)),
        max=float(dev.max()),
        worst=f"{worst['provider']} | {worst['problem']}",
        within=float((dev <= threshold).mean()),
        alarms=int(r["verdict"].isin(["FASTER", "SLOWER"]).sum()),
        long_points=len(long),
        long_within_2=float((long <= 0.02).mean()) if len(long) else math.nan,
        within_5=float((dev <= 0.05).mean()),
        spread_ok=float((spread <= 1.10).mean()) if len(spread) else math.nan,
        unstable_rows=int(r["unstable_rows"].sum()),
    )


def summary(result: pd.DataFrame) -> str:
    counts = result["verdict"].value_counts()
    parts = [f"{v}={int(counts.get(v, 0))}" for v in (*VERDICTS, "n/a")]
    speed = result[result["ratio"].notna()]["ratio"]
    gm = f"; geomean B/A {geomean(speed):.4f}" if len(speed) else ""
    flagged = int(result["note"].str.contains("unstable:", regex=False).sum())
    unstable = f"; {flagged} with unstable samples (see note)" if flagged else ""
    one_sided = int(result["note"].str.contains("settled the limiter", regex=False).sum())
    settle = (
        f"; {one_sided} power-capped with the limiter settled on one side only (see note)"
        if one_sided
        else ""
    )
    return f"{len(result)} points: " + ", ".join(parts) + gm + unstable + settle


def by_device(result: pd.DataFrame, threshold: float) -> pd.DataFrame:
    """Per (GPU of A, GPU of B) pair: points compared as speed, geomean B/A, median and max
    |B/A - 1|, and the share within the threshold. A sharded run (devices=all) compared with a
    one-GPU run answers "does every GPU agree with the reference?" line by line."""
    r = result[result["ratio"].notna()]
    lines = []
    for (da, db), g in r.groupby(["device_a", "device_b"], sort=True):
        dev = (g["ratio"] - 1).abs()
        lines.append(
            {
                "device_a": da,
                "device_b": db,
                "points": len(g),
                "geomean": geomean(g["ratio"]),
                "median_dev": float(dev.median()),
                "max_dev": float(dev.max()),
                "within": float((dev <= threshold).mean()),
            }
        )
    return pd.DataFrame(lines)


def render_by_device(table: pd.DataFrame, threshold: float, tablefmt: str = "simple") -> str:
    body = [
        [
            r["device_a"],
            r["device_b"],
            r["points"],
            f"{r['geomean']:.4f}",
            f"{r['median_dev']:.2%}",
            f"{r['max_dev']:.2%}",
            f"{r['within']:.0%}",
        ]
        for r in table.to_dict("records")
    ]
    head = [
        "GPU of A",
        "GPU of B",
        "points",
        "geomean B/A",
        "median |B/A-1|",
        "max",
        f"within +-{threshold:.0%}",
    ]
    return tabulate(body, headers=head, tablefmt=tablefmt)


def render(result: pd.DataFrame, tablefmt: str = "simple") -> str:
    """The per-point table (verdicts other than SAME first), B/A as latency ratios."""
    rank = {v: i for i, v in enumerate(("SLOWER", "FASTER", "UNCLEAR", "n/a", "SAME"))}
    order = result.assign(_r=result["verdict"].map(rank)).sort_values(["_r", "op", "problem"])
    body = [
        [
            r["op"],
            r["provider"],
            r["problem"],
            fmt(r["median_a_ms"]),
            fmt(r["median_b_ms"]),
            fmt(r["ratio"], ".4f"),
            f"[{r['lo']:.4f}, {r['hi']:.4f}]" if not math.isnan(r["lo"]) else "",
            r["verdict"],
            r["note"],
        ]
        for r in order.to_dict("records")
    ]
    head = ["op", "provider", "problem", "A ms", "B ms", "B/A", "95% CI", "verdict", "note"]
    return tabulate(body, headers=head, tablefmt=tablefmt)
