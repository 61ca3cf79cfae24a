"""Spread between processes: the same points measured by several runs (each run is a process of
its own), per point and provider the range of the runs' medians against the spread inside one
run; and, where a point has an own and a vendor row in every run, how far the own / vendor ratio
moves from run to run.

Why: one run's statistics cannot see what is set once per process. On an H200 (session 44) one
own CUTLASS config at 4x28672x4096 timed 58.7-66.4 us over eight fresh processes on one machine,
with p90/p10 <= 1.04 inside each, while cuBLAS held 57.8-58.9 us in seven of them
(results/h200/_process_spread). A ratio read from one run can sit anywhere in that range.

    harness spread results/h200/_process_spread/bimodal-*      (two runs or more)
"""

from __future__ import annotations

import pandas as pd

from harness.measure.stats import geomean
from harness.report.data import latest, with_device
from harness.report.reference import fastest

# A point's runs must share its measuring protocol to be compared (as `harness compare` meets
# points); `run_id` then tells the processes apart.
PROTOCOL = ("timer", "l2", "fill", "seed")  # shown only where the runs given differ in them
POINT = ("device", "op", "problem", *PROTOCOL)
WIDER = 1.02  # between-run max/min this much above the widest in-run p90/p10: "wider"


def _ok_rows(df: pd.DataFrame) -> pd.DataFrame:
    rows = with_device(df[(df["op"] != "ceiling") & (df["status"] == "ok")])
    # one row per (run, point, provider): the latest, as a resumed run keeps a re-measured point
    return latest(rows, ["run_id", *POINT, "provider"])


def _machines(uuids: pd.Series) -> int | None:
    """Distinct GPUs among a point's rows, or None where a row does not say (no UUID)."""
    return None if uuids.isna().any() else int(uuids.nunique())


def spread_frame(df: pd.DataFrame) -> pd.DataFrame:
    """One line per point and provider measured ok by two runs or more (the protocol keys of
    POINT kept apart): `runs`, `machines` (distinct GPU UUIDs among them; None where a row has
    none), the median, lowest and highest of the runs' medians (us), `between` (highest /
    lowest), `within` (the widest p90/p10 inside one run; NaN where no row says), `wider`
    (between exceeds within by more than WIDER) and `process` (wider, on one machine: what
    moves the number is set per process, not per sample; on several machines their difference
    is in it too, so it is not said)."""
    rows = _ok_rows(df)
    lines = []
    for key, g in rows.groupby([*POINT, "provider"], sort=True, dropna=False):
        if g["run_id"].nunique() < 2:
            continue
        us = g["latency_ms_median"].astype(float) * 1e3
        # rows written before the column carry p10 and p90 alone
        ratio = g["latency_p90_over_p10"].astype(float)
        within = float(ratio.fillna(g["latency_ms_p90"] / g["latency_ms_p10"]).max())
        between = float(us.max() / us.min())
        wider = bool(between > within * WIDER)  # False where within is NaN: not known
        machines = _machines(g["device_uuid"])
        point = dict(zip([*POINT, "provider"], key, strict=True))
        lines.append(
            {
                **{k: point[k] for k in ("device", "problem", "provider", *PROTOCOL)},
                "family": g["family"].iloc[0],
                "runs": int(g["run_id"].nunique()),
                "machines": machines,
                "median_us": float(us.median()),
                "min_us": float(us.min()),
                "max_us": float(us.max()),
                "between": between,
                "within": within,
                "wider": wider,
                "process": wider and machines == 1,
            }
        )
    return pd.DataFrame(lines)


def varying(frame: pd.DataFrame) -> list[str]:
    """The protocol columns of `frame` that take more than one value (the rest say nothing)."""
    return [c for c in PROTOCOL if c in frame and frame[c].astype(str).nunique() > 1]


def ratio_frame(df: pd.DataFrame) -> pd.DataFrame:
    """One line per point and own provider: the own / fastest-vendor speedup (vendor time over
    own time) in each run that has both, and its lowest, median and highest over the runs."""
    rows = _ok_rows(df)
    per_run = []
    for (run, *point), g in rows.groupby(["run_id", *POINT], sort=True, dropna=False):
        records = g.to_dict("records")
        ref = fastest(records)
        if ref is None:
            continue
        for own in (r for r in records if r.get("family") == "own"):
            per_run.append(
                {
                    **dict(zip(POINT, point, strict=True)),
                    "provider": own["provider"],
                    "run_id": run,
                    "speedup": ref["latency_ms_median"] / own["latency_ms_median"],
                }
            )
    if not per_run:
        return pd.DataFrame()
    keys = ["device", "problem", "provider", *PROTOCOL]
    grouped = pd.DataFrame(per_run).groupby(keys, sort=True, dropna=False)
    out = grouped.agg(
        runs=("run_id", "nunique"),
        lowest=("speedup", "min"),
        median=("speedup", "median"),
        highest=("speedup", "max"),
    ).reset_index()
    return out[out["runs"] >= 2].reset_index(drop=True)


def summary(spread: pd.DataFrame) -> pd.DataFrame:
    """Per device and provider: points, the geomean and largest between-run max/min, and how
    many points move more between runs than inside one (`wider`), on one machine (`process`)."""
    return (
        spread.groupby(["device", "provider"], sort=True)
        .agg(
            points=("between", "size"),
            between_geomean=("between", lambda s: geomean(list(s))),
            between_max=("between", "max"),
            within_max=("within", "max"),
            wider=("wider", "sum"),
            process=("process", "sum"),
        )
        .reset_index()
    )
