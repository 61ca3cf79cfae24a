"""Print a GEMM run as one line per shape: the fastest vendor row's median and each own
provider's ratio to it (vendor time / own time: above 1 is faster), with the tile each own
provider chose, then the geomean per provider, M band and M, and the worst 10; where there are
several vendor rows (fp8), each one's geomean too; where several own providers, the best own row
per point. One table per dtype and layout. The last thing a lent-GPU GEMM call prints.

Where rows carry the SM clock (telemetry `sm_clock_mhz`), each band also gets the own / vendor
clock ratio and the ratio per cycle (time ratio over clock ratio): at the 700 W cap a kernel can
lose on clock alone. On an H200 own CUTLASS's mid band was 0.980x cuBLAS at a 0.979 clock ratio,
1.002x per cycle (results/h200/README.md, session 50). NVML samples the clock, so one short
point's reading is noisy; the band's geomean is the figure to read.
Where the own rows record their tuner's last time of the kernel that ran (`harness gaps`'s
reading: own Triton's interleaved tl / Gluon re-time where it ran, else `tuned_ms`, the burst or
the capped re-time, else `tune_ms`), each band gets the median of the sweep's time over it: well
above 1, the tuner ranked its candidates in a state the sweep does not run in (on that H200 own
CUTLASS's winners of 0.08-0.1 ms, never re-timed at the cap, ran 5% slower in the sweep). Until
session 61 this read `tuned_ms` alone: for own Triton that is the `tl` tuner's burst even where
the pair re-time at the cap came after it, and nothing where Gluon ran, so its M >= 2048 figure
(1.024 on an H100 in session 60, 1.060 on an H200 in session 61) measured the burst's clock, not
a misranking; read the pair re-time, the same runs give 1.003 and 0.972.

The reference of a point is its fastest ok vendor row, as `harness gaps` takes it: cuBLAS for
bf16 and tf32, the faster of cuBLASLt's two `_scaled_mm` rows (fast accumulation or not) for fp8.

python3 scripts/gemm_ratio_table.py results/_scratch/h200/<run_id> [more runs...]
python3 scripts/gemm_ratio_table.py <run>@1,2,4 <other run>@128,256   (a grid over runs)
"""

from __future__ import annotations

import json
import sys

import numpy as np
import pandas as pd

from harness.report.gap_reasons import tuned_ms
from harness.store import read_rows

BANDS = {"M1-64": (1, 64), "M128-1024": (128, 1024), "M>=2048": (2048, 1 << 40)}
SHAPE = ["m", "n", "k"]


def _tile(cfg: str) -> str:
    c = json.loads(cfg or "{}")
    if c.get("library") == "own-cutlass":  # the config by name, and its scheduler options
        return f"{c.get('variant', '?')}:{c.get('run_options', '?')}"
    tile = f"{c.get('block_m', '?')}x{c.get('block_n', '?')}"
    if c.get("num_stages"):  # the Gluon GEMM's deep twins differ from their tiles only here
        tile += f"s{c['num_stages']}"
    if c.get("split_k", 1) > 1:
        tile += f"/sk{c['split_k']}"
    if c.get("stream_k"):
        tile += "/streamK"
    if c.get("programs_per_sm", 1) > 1:
        tile += f"/p{c['programs_per_sm']}"
    if c.get("swap_ab"):  # C^T = W A^T: the weight's rows on block_m, the tokens on block_n
        tile += "/swap"
    if c.get("kernel") == "gluon-ws":  # own-triton ran its Gluon GEMM: which schedule
        tile += "/gl-pp" if c.get("schedule") == "ping-pong" else "/gl-coop"
    return tile


def _geomean(values) -> float:
    return float(np.exp(np.mean(np.log(np.asarray(values, dtype=float)))))


def ratio_table(ok: pd.DataFrame) -> list[str]:
    """The lines for one dtype and layout's ok rows (columns provider, family, m, n, k,
    latency_ms_median, provider_config)."""
    vendor = ok[ok.family == "vendor"]
    if vendor.empty:
        return ["no vendor row: nothing to compare with"]
    fastest = vendor.loc[vendor.groupby(SHAPE).latency_ms_median.idxmin()].set_index(SHAPE)
    own_rows = ok[ok.family == "own"].set_index(SHAPE)
    own = sorted(own_rows.provider.unique())
    lines = ["m n k | vendor_us (fastest row) | " + " | ".join(own)]
    ratios: dict[str, pd.Series] = {}
    for p in own:
        mine = own_rows[own_rows.provider == p]
        ratios[p] = (fastest.latency_ms_median / mine.latency_ms_median).dropna()
    for shape, ref in fastest.sort_index().iterrows():
        cells = []
        for p in own:
            if shape not in ratios[p].index:
                cells.append("-")
                continue
            cfg = own_rows[own_rows.provider == p].loc[[shape]].provider_config.iloc[0]
            cells.append(f"{ratios[p][shape]:.3f} {_tile(cfg)}")
        m, n, k = shape
        us = ref.latency_ms_median * 1e3
        lines.append(f"{m} {n} {k} | {us:.1f} ({ref.provider}) | " + " | ".join(cells))
    for p in own:
        r = ratios[p]
        if r.empty:
            continue
        ms = r.index.get_level_values("m")
        per_m = " ".join(f"M{m}:{_geomean(r[ms == m]):.3f}" for m in sorted(set(ms)))
        lines.append(f"{p}: geomean {_geomean(r):.3f} min {r.min():.3f} ({len(r)} pts) {per_m}")
        bands = {name: r[(ms >= lo) & (ms <= hi)] for name, (lo, hi) in BANDS.items()}
        lines.append(
            "  bands: " + " ".join(f"{b} {_geomean(v):.3f}" for b, v in bands.items() if len(v))
        )
        lines += _clock_line(fastest, own_rows[own_rows.provider == p], r)
        lines += _drift_line(own_rows[own_rows.provider == p])
        below = f"{int((r < 0.90).sum())} below 0.90, {int((r < 0.95).sum())} below 0.95"
        worst = " ".join(f"{m}x{n}x{k} {v:.3f}" for (m, n, k), v in r.sort_values()[:10].items())
        lines.append(f"  {below}; worst: {worst}")
        if vendor.provider.nunique() > 1:  # e.g. fp8: with and without fast accumulation
            mine = own_rows[own_rows.provider == p].latency_ms_median
            each = []
            for v, rows in vendor.groupby("provider"):
                rv = (rows.set_index(SHAPE).latency_ms_median / mine).dropna()
                if len(rv):
                    each.append(f"{v} {_geomean(rv):.3f}")
            lines.append("  against each vendor row: " + " ".join(each))
    if len(own) > 1:
        lines += _best_of(fastest, own_rows, own)
    return lines


def _clock_line(fastest: pd.DataFrame, mine: pd.DataFrame, r: pd.Series) -> list[str]:
    """Per band: the own / vendor SM clock ratio and the time ratio per cycle (none without
    clock readings)."""
    if "sm_clock_mhz" not in mine.columns or "sm_clock_mhz" not in fastest.columns:
        return []
    clock = (mine.sm_clock_mhz / fastest.sm_clock_mhz.reindex(mine.index)).reindex(r.index)
    clock = clock[clock > 0].dropna()
    if clock.empty:
        return []
    ms = clock.index.get_level_values("m")
    cells = []
    for name, (lo, hi) in BANDS.items():
        c = clock[(ms >= lo) & (ms <= hi)]
        if len(c):
            cells.append(f"{name} {_geomean(c):.3f} ({_geomean(r[c.index] / c):.3f})")
    return ["  clock own/vendor (per cycle): " + " ".join(cells)]


def _drift_line(mine: pd.DataFrame) -> list[str]:
    """Per band: the median of the sweep's time over the tuner's time of the same candidate
    (none where no row records a tuner time; gap_reasons.tuned_ms says which time is read)."""
    tuned = mine.provider_config.map(lambda cfg: tuned_ms(json.loads(cfg or "{}")))
    drift = (mine.latency_ms_median / pd.to_numeric(tuned, errors="coerce")).dropna()
    drift = drift[drift > 0]
    if drift.empty:
        return []
    ms = drift.index.get_level_values("m")
    cells = [
        f"{name} {float(np.median(d)):.3f}"
        for name, (lo, hi) in BANDS.items()
        if len(d := drift[(ms >= lo) & (ms <= hi)])
    ]
    return ["  sweep/tuner time (median): " + " ".join(cells)]


def _best_of(fastest: pd.DataFrame, own_rows: pd.DataFrame, own: list[str]) -> list[str]:
    """The fastest own row per point (points where every own provider has one) against the
    fastest vendor row: what the project's best kernel reaches."""
    times = own_rows.pivot_table(index=SHAPE, columns="provider", values="latency_ms_median")
    best = times[own].dropna().min(axis=1)
    r = (fastest.latency_ms_median.reindex(best.index) / best).dropna()
    if r.empty:
        return []
    ms = r.index.get_level_values("m")
    bands = {name: r[(ms >= lo) & (ms <= hi)] for name, (lo, hi) in BANDS.items()}
    return [
        f"best of {', '.join(own)}: geomean {_geomean(r):.3f} min {r.min():.3f} ({len(r)} pts)",
        "  bands: " + " ".join(f"{b} {_geomean(v):.3f}" for b, v in bands.items() if len(v)),
    ]


def read_runs(specs: list[str]) -> pd.DataFrame:
    """The rows of each run, `RUN@M,M,...` keeping only those M: so that a grid measured over
    several runs (each point's ratio within the run that measured it) reads as one. A point
    that two of them measured is refused: its vendor and own rows would mix runs."""
    cols = ["op", "provider", "family", *SHAPE, "dtype", "layout", "status", "latency_ms_median"]
    parts = []
    for spec in specs:
        path, _, ms = spec.partition("@")
        df = read_rows(path, columns=[*cols, "provider_config", "sm_clock_mhz"])
        # A model preset's run holds its other ops too (their m, n, k empty): the GEMMs only,
        # their shape as integers again
        df = df[df.op == "gemm"].astype({d: int for d in SHAPE})
        if ms:
            df = df[df.m.isin([int(m) for m in ms.split(",")])]
        parts.append(df.assign(_run=path))
    df = pd.concat(parts, ignore_index=True)
    ok = df[df.status == "ok"]  # skipped rows (another vendor's provider) hold no time
    runs = ok.groupby([*SHAPE, "dtype", "layout"])._run.nunique()
    if (runs > 1).any():
        twice = " ".join("x".join(map(str, key[:3])) for key in runs[runs > 1].index[:5])
        raise SystemExit(f"points in more than one run ({twice} ...): keep them apart with @M,...")
    return df.drop(columns="_run")


def main(paths: list[str]) -> int:
    df = read_runs(paths)
    ok = df[df.status == "ok"]
    for (dtype, layout), group in ok.groupby(["dtype", "layout"]):
        print(f"== {dtype} {layout}")
        print("\n".join(ratio_table(group)))
    bad = df[(df.status != "ok") & (df.status != "skipped")]
    for _, row in bad.iterrows():
        print(f"NOT OK {row.provider} {row.m}x{row.n}x{row.k}: {row.status}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
