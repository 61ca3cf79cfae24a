"""Two GPUs, one protocol: per point the speedup of GPU B over GPU A beside what the roofline
predicts from each GPU's own measured ceilings.

    speedup    = median latency on A / median latency on B (bootstrap 95% CI of the raw samples)
    ridge      = compute ceiling of the dtype / HBM read ceiling   (FLOP/B, per GPU, measured)
    roof(I)    = min(compute ceiling, I x HBM read ceiling)        (the attainable TFLOP/s)
    predicted  = roof_B(I) / roof_A(I) at the point's arithmetic intensity I
    regime     memory   I below both ridges: predicted = HBM read ratio
               compute  I at or above both ridges: predicted = the dtype's tensor-ceiling ratio
               between  I between the ridges: memory-bound on one GPU, compute-bound on the other,
                        predicted lies between the two ratios
measured / predicted = (fraction of its roofline on B) / (fraction on A): a point that keeps its
efficiency on both GPUs lands on 1.

    predicted_read = t_A / t_B, t = max(FLOPs / compute ceiling, one cold read of the point's
                     min_bytes), the read's time taken from the GPU's probes_read_once curve
                     at those bytes (NaN below its smallest size or without one)
A single pass over a few tens of MB cannot reach the HBM ceiling on either GPU (a fixed ~4.8 us
on both Hoppers before the bytes flow), so the HBM ratio overstates what a short memory-bound
point can gain: on the committed rows cuBLAS's memory-bound GEMMs ran 1.38x on the H200 against
1.49x by the HBM ratio.

Points pair on (op, provider, problem) and only where every protocol column matches: a timer
change (the stream hold) moves short kernels by 20%, more than the effect under study. The points
of a run holding op=ceiling rows are left out: they define the prediction. Pandas only.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from harness import store
from harness.measure.stats import bootstrap_median_ratio
from harness.report import read_once
from harness.report.data import SPEED_OPS, is_speed, settled_side
from harness.report.peaks import Peaks, device_peaks

POINT = ("op", "provider", "problem")
# What decides how a number was obtained (harness.measure.protocol.Protocol as stored in rows).
# warmup_calls and rotation_sets are derived per point and per L2 size, not chosen: left out.
PROTOCOL_COLUMNS = (
    "timer",
    "l2",
    "fill",
    "l2_flush",
    "stream_hold",
    "warmup_ms",
    "rse_target",
    "min_time_s",
    "max_time_s",
    "max_spread",
    "calls_per_sample",
    "seed",
)
WITHIN = 0.10  # "agrees with the prediction": |measured / predicted - 1| <= this
REGIMES = ("memory", "between", "compute")
N_BOOT = 200  # bootstrap resamples per speedup CI (a CI per point: 200 keeps a 600-point pair fast)
HBM = "hbm_read_gbps"
_SOURCE_COLUMNS = ("latency_ms_median", "samples_ms", "run_id", "tflops", "git_sha", "timestamp")


class NoCeilings(ValueError):
    """A GPU without measured ceilings: no prediction (a ValueError: one line, exit 2)."""


@dataclass(frozen=True)
class Gpu:
    """One side of the pair: its name and measured peaks."""

    name: str
    peaks: Peaks
    # GB/s of one cold read pass by bytes (read_once.curve), where the rows hold a read-once run
    read_curve: pd.Series | None = field(default=None, compare=False)

    def bandwidth(self) -> float | None:
        return self.peaks.measured.get(HBM)

    def compute(self, dtype: str | None) -> float | None:
        return self.peaks.compute(dtype, "measured") if dtype else None

    def ridge(self, dtype: str | None) -> float | None:
        """FLOP/B where the dtype's roofline turns from bandwidth to compute."""
        peak, bw = self.compute(dtype), self.bandwidth()
        return peak * 1e3 / bw if peak and bw else None  # TFLOP/s / GB/s x 1e3 = FLOP/B

    def roof(self, intensity: float | None, dtype: str | None) -> float | None:
        """Attainable TFLOP/s at `intensity` FLOP/B: min(peak, I x HBM read)."""
        peak, bw = self.compute(dtype), self.bandwidth()
        if not peak or not bw or intensity is None or not intensity > 0:
            return None
        return min(peak, intensity * bw / 1e3)

    def read_bound_ms(self, flops: float | None, nbytes: float | None, dtype: str | None) -> float:
        """max(FLOPs at the compute ceiling, one cold read of `nbytes`) in ms; NaN where the
        read curve does not reach down to `nbytes` or a ceiling is unknown."""
        peak = self.compute(dtype)
        if self.read_curve is None or not peak or not nbytes or not flops:
            return math.nan  # None or 0
        if math.isnan(nbytes) or math.isnan(flops):
            return math.nan
        gbps = read_once.gbps_at(self.read_curve, pd.Series([float(nbytes)])).iloc[0]
        if math.isnan(gbps):
            return math.nan
        return max(float(flops) / (peak * 1e12), float(nbytes) / (gbps * 1e9)) * 1e3

    @property
    def short(self) -> str:
        """'H100' from 'NVIDIA H100 80GB HBM3': a table header, not an identity."""
        words = self.name.replace("NVIDIA ", "").replace("AMD ", "").split()
        return words[0] if words else self.name


def regime(intensity: float | None, a: Gpu, b: Gpu, dtype: str | None) -> str | None:
    """memory, between or compute (None where a ridge is unknown)."""
    ra, rb = a.ridge(dtype), b.ridge(dtype)
    if ra is None or rb is None or intensity is None or not intensity > 0:
        return None
    if intensity < min(ra, rb):
        return "memory"
    return "compute" if intensity >= max(ra, rb) else "between"


def predicted(intensity: float | None, a: Gpu, b: Gpu, dtype: str | None) -> float:
    """roof_B / roof_A at `intensity` (NaN where a ceiling is unknown)."""
    ra, rb = a.roof(intensity, dtype), b.roof(intensity, dtype)
    return rb / ra if ra and rb else math.nan


@dataclass
class Pairing:
    """The points two GPUs share under one protocol, and what was left out and why."""

    a: Gpu
    b: Gpu
    points: pd.DataFrame  # one line per paired point (columns: see pair_rows)
    dropped: pd.DataFrame  # reason, rows on A, rows on B
    protocol: dict  # the protocol columns of the most common paired protocol
    git_a: list[str]
    git_b: list[str]
    # paired points timed power-capped with the limiter settled on one GPU's side only
    settled_one_side: int = 0

    @property
    def label(self) -> str:
        return f"{self.b.short}/{self.a.short}"


def _norm(v):
    """A protocol value that compares equal across parquet files (300 == 300.0, NaN == None)."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return None
    if isinstance(v, bool) or hasattr(v, "dtype") and v.dtype == bool:
        return bool(v)
    if isinstance(v, int | float) or hasattr(v, "item"):
        try:
            return float(v)
        except (TypeError, ValueError):
            return str(v)
    return str(v)


def _protocol(rows: pd.DataFrame) -> list[tuple]:
    cols = [c for c in PROTOCOL_COLUMNS if c in rows.columns]
    return [tuple(_norm(r[c]) for c in cols) for r in rows[cols].to_dict("records")]


def _one_gpu(rows: pd.DataFrame, side: str) -> str:
    names = sorted({n for n in rows.loc[rows["device_type"] != "cpu", "device_name"].dropna()})
    if len(names) != 1:
        what = f"rows of {len(names)} GPUs ({', '.join(names)})" if names else "no GPU rows"
        raise ValueError(f"{side}: {what}; allowed: a results folder or run of one GPU")
    return names[0]


def gpu_of(rows: pd.DataFrame, side: str) -> Gpu:
    """The one GPU of `rows` with its measured ceilings; ValueError in one line otherwise."""
    name = _one_gpu(rows, side)
    peaks = device_peaks(rows[rows["device_name"] == name])[name]
    if HBM not in peaks.measured:
        raise NoCeilings(
            f"{side}: no measured HBM read ceiling for {name}; allowed: results "
            "holding a `harness ceilings` run of that GPU"
        )
    return Gpu(name, peaks, read_once.curves_by_device(rows).get(name))


def with_ceilings(rows: pd.DataFrame, path: str | Path) -> tuple[pd.DataFrame, str | None]:
    """`rows` and, when they hold no ceiling rows (a run folder), the ceiling rows of the same
    GPU from the folder holding `path` (its results folder), with that folder's name; with
    them that folder's one-pass read rows of the GPU (probes_read_once), which the cold-read
    prediction takes, where `rows` hold none."""
    if (rows["op"] == "ceiling").any():
        return rows, None
    given = Path(path)
    parent = given.parent if given.name not in ("", ".", "..") else given.resolve().parent
    near = store.read_rows(parent, columns=["op", "device_name"])
    if not ((near["op"] == "ceiling") & near["device_name"].isin(rows["device_name"])).any():
        return rows, None
    near = store.read_rows(parent)
    near = near[near["device_name"].isin(rows["device_name"])]
    extra = [near[near["op"] == "ceiling"]]
    if read_once.one_pass_reads(rows).empty:
        reads = read_once.one_pass_reads(near)
        extra.append(reads[~reads["run_id"].isin(set(rows["run_id"]))])
    return pd.concat([rows, *extra], ignore_index=True), str(parent)


def _candidates(rows: pd.DataFrame, name: str) -> tuple[pd.DataFrame, dict[str, int]]:
    """ok GEMM / attention rows of GPU `name` (with their protocol as `_proto`), and the number
    of rows left out per reason."""
    drops: dict[str, int] = {}
    ceiling_runs = set(rows.loc[rows["op"] == "ceiling", "run_id"])
    mine = rows[(rows["device_name"] == name) & (rows["device_type"] != "cpu")]
    drops["not this GPU (CPU rows, another GPU)"] = len(rows) - len(mine)
    speed = mine[mine["op"].isin(SPEED_OPS)]
    drops["not a GEMM or attention point (ceilings, memory, latency, FMA probes)"] = len(
        mine
    ) - len(speed)
    ok = speed[is_speed(speed)]
    drops["status not ok (skipped, error, wrong)"] = len(speed) - len(ok)
    kept = ok[~ok["run_id"].isin(ceiling_runs)]
    drops["point of a ceilings run (it defines the prediction)"] = len(ok) - len(kept)
    return kept.assign(_proto=_protocol(kept), _ts=kept["timestamp"].fillna("")), drops


def _point(r: dict) -> tuple:
    return tuple(str(r[c]) for c in POINT)


def _compared_protocol(ca: pd.DataFrame, cb: pd.DataFrame) -> tuple | None:
    """The protocol most points were measured under on both GPUs (else A's most common one)."""
    on_b = {(_point(r), r["_proto"]) for r in cb.to_dict("records")}
    shared: dict[tuple, set] = {}
    for r in ca.to_dict("records"):
        if (_point(r), r["_proto"]) in on_b:
            shared.setdefault(r["_proto"], set()).add(_point(r))
    if shared:
        return max(shared, key=lambda q: len(shared[q]))
    counts = ca["_proto"].value_counts()
    return counts.index[0] if len(counts) else None


def _under(c: pd.DataFrame, protocol: tuple | None, drops: dict[str, int]) -> pd.DataFrame:
    """The rows of `c` under `protocol`, latest per point; the rest counted in `drops`."""
    for q, n in c.loc[c["_proto"] != protocol, "_proto"].value_counts().items():
        why = "measured under another protocol (differs in " + _differing(q, protocol) + ")"
        drops[why] = drops.get(why, 0) + int(n)
    same = c[c["_proto"] == protocol].sort_values("_ts", kind="stable")
    keys = pd.Series([_point(r) for r in same.to_dict("records")], index=same.index, dtype=object)
    latest = same[~keys.duplicated(keep="last")]
    drops["an earlier row of the same point and protocol (the latest is compared)"] = len(
        same
    ) - len(latest)
    return latest


def _differing(pa: tuple, pb: tuple | None) -> str:
    pb = pb or (None,) * len(pa)
    return ", ".join(c for c, x, y in zip(PROTOCOL_COLUMNS, pa, pb, strict=False) if x != y)


def pair_rows(rows_a: pd.DataFrame, rows_b: pd.DataFrame, n_boot: int = N_BOOT) -> Pairing:
    """Pair the ok points of the one GPU in `rows_a` with those of the one GPU in `rows_b`,
    under the one protocol most points share.

    Each frame holds its GPU's rows and its `harness ceilings` rows. n_boot 0: no CI."""
    a, b = gpu_of(rows_a, "A"), gpu_of(rows_b, "B")
    ca, drops_a = _candidates(rows_a, a.name)
    cb, drops_b = _candidates(rows_b, b.name)
    protocol = _compared_protocol(ca, cb)
    by_a = {_point(r): r for r in _under(ca, protocol, drops_a).to_dict("records")}
    by_b = {_point(r): r for r in _under(cb, protocol, drops_b).to_dict("records")}
    drops_a["only on A (no row of the point on B under this protocol)"] = len(
        by_a.keys() - by_b.keys()
    )
    drops_b["only on B (no row of the point on A under this protocol)"] = len(
        by_b.keys() - by_a.keys()
    )
    pairs = [(by_a[p], by_b[p]) for p in by_a if p in by_b]
    points = pd.DataFrame([_line(ra, rb, a, b, n_boot) for ra, rb in pairs], columns=COLUMNS)
    points = points.sort_values(["family", "provider", "intensity", "problem"], kind="stable")
    reasons = list(dict.fromkeys([*drops_a, *drops_b]))
    frame = pd.DataFrame(
        [(w, drops_a.get(w, 0), drops_b.get(w, 0)) for w in reasons],
        columns=["reason", "rows on A", "rows on B"],
    )
    frame = frame[(frame["rows on A"] > 0) | (frame["rows on B"] > 0)].reset_index(drop=True)
    shas = lambda rs: sorted({str(r.get("git_sha"))[:7] for r in rs if r.get("git_sha")})  # noqa: E731
    return Pairing(
        a,
        b,
        points.reset_index(drop=True),
        frame,
        dict(zip(PROTOCOL_COLUMNS, protocol or (), strict=False)),
        shas([x for x, _ in pairs]),
        shas([y for _, y in pairs]),
        sum(settled_side(x, y) is not None for x, y in pairs),
    )


COLUMNS = [
    "family",
    "op",
    "phase",
    "provider",
    "kind",
    "problem",
    "dtype",
    "intensity",
    "regime",
    "a_ms",
    "b_ms",
    "speedup",
    "ci_lo",
    "ci_hi",
    "predicted",
    "vs_predicted",
    "predicted_read",
    "vs_predicted_read",
    "roof_a",
    "roof_b",
    "run_a",
    "run_b",
]


def family_of(op: str, phase) -> str:
    """The kernel family a point is summarised under: GEMM, attention prefill / decode."""
    if op == "gemm":
        return "GEMM"
    return f"{op} {phase}" if isinstance(phase, str) and phase else str(op)


def _line(ra: dict, rb: dict, a: Gpu, b: Gpu, n_boot: int) -> dict:
    dtype, intensity = ra.get("dtype"), ra.get("intensity_flop_per_byte")
    intensity = None if intensity is None or pd.isna(intensity) else float(intensity)
    ma, mb = float(ra["latency_ms_median"]), float(rb["latency_ms_median"])
    lo, speedup, hi = math.nan, ma / mb, math.nan
    sa, sb = ra.get("samples_ms"), rb.get("samples_ms")
    if n_boot and sa is not None and sb is not None and len(sa) >= 3 and len(sb) >= 3:
        lo, speedup, hi = bootstrap_median_ratio(list(sb), list(sa), n_boot=n_boot)
    pred = predicted(intensity, a, b, dtype)
    flops, nbytes = ra.get("flops"), ra.get("min_bytes")
    pred_read = a.read_bound_ms(flops, nbytes, dtype) / b.read_bound_ms(flops, nbytes, dtype)
    roofs = [a.roof(intensity, dtype), b.roof(intensity, dtype)]
    fracs = [
        float(r["tflops"]) / roof if roof and r.get("tflops") else math.nan
        for r, roof in zip((ra, rb), roofs, strict=True)
    ]
    return {
        "family": family_of(ra["op"], ra.get("phase")),
        "op": ra["op"],
        "phase": ra.get("phase") if isinstance(ra.get("phase"), str) else None,
        "provider": ra["provider"],
        "kind": ra.get("family"),
        "problem": ra["problem"],
        "dtype": dtype,
        "intensity": intensity,
        "regime": regime(intensity, a, b, dtype),
        "a_ms": ma,
        "b_ms": mb,
        "speedup": speedup,
        "ci_lo": lo,
        "ci_hi": hi,
        "predicted": pred,
        "vs_predicted": speedup / pred if pred == pred else math.nan,
        "predicted_read": pred_read,
        "vs_predicted_read": speedup / pred_read if pred_read == pred_read else math.nan,
        "roof_a": fracs[0],
        "roof_b": fracs[1],
        "run_a": ra.get("run_id"),
        "run_b": rb.get("run_id"),
    }


def protocol_rows(rows: pd.DataFrame, protocol: dict) -> pd.DataFrame:
    """The rows measured under `protocol` (the pairing's), ceiling rows kept."""
    if not protocol:
        return rows
    cols = list(protocol)
    want = tuple(protocol.values())
    match = [tuple(_norm(r[c]) for c in cols) == want for r in rows[cols].to_dict("records")]
    return rows[pd.Series(match, index=rows.index) | (rows["op"] == "ceiling")]


def gpu_pairs(rows: pd.DataFrame) -> list[tuple[str, str]]:
    """(A, B) device names for the report: per vendor with two or more GPUs, A is the one with
    the lowest HBM read bandwidth (measured, else datasheet) and B each of the others."""
    gpus = rows[(rows["device_type"] != "cpu") & rows["device_name"].notna()]
    peaks = device_peaks(gpus) if len(gpus) else {}
    bw = lambda n: peaks[n].measured.get(HBM) or peaks[n].datasheet.get(HBM) or 0.0  # noqa: E731
    out = []
    for _, g in gpus.groupby(gpus["device_vendor"].fillna(""), sort=True):
        names = sorted(g["device_name"].unique(), key=lambda n: (bw(n), n))
        out += [(names[0], other) for other in names[1:]]
    return out
