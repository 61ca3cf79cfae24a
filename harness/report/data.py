"""Rows in, tidy frames out: loading runs, point identity, latest row per point, axis keys,
and which rows are smoke rows (kept out of every headline figure and table).

A point's identity across runs ignores the run and the device instance: op, provider, problem
and the protocol fields that change what is measured. Where one point appears in several runs
(an A/A pair), tables, compositions and rooflines use the latest row.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd

from harness import store
from harness.workloads.derive import AXES

IDENTITY = ("op", "provider", "problem", "timer", "l2", "fill", "seed")
SPEED_OPS = ("gemm", "attention")  # ops a roofline, a table and a composition speak about
# Sweeps that exist to exercise code paths, not to measure (sweeps/smoke.yaml and the *_smoke
# presets): CPU-sized points whose microseconds are launch overhead, not kernel speed.
SMOKE_SWEEPS = ("smoke", "microbench_smoke", "collectives_smoke")
# Only for rows whose run names no sweep: a GEMM / attention problem moving under 1 MiB is
# smoke-sized (the smoke presets' largest moves 60 KB; the smallest measured point, 2 MB).
TINY_MIN_BYTES = 1 << 20
_INT_AXES = {
    "m",
    "n",
    "k",
    "batch",
    "q_heads",
    "kv_heads",
    "q_len",
    "kv_len",
    "head_dim",
    "page_size",
}


# A rung that became its provider's default leaves earlier runs' rows under the names of their
# tree. load() gives those rows today's names, per tree (a git_sha prefix: what each name meant
# at that commit, said in today's names), and keeps the name the row was written with in
# `provider_recorded`; rows of other trees keep theirs. Without it the latest rows of a point
# could put an earlier kernel under a provider's current name in a headline (session 62).
RENAMED_AT: dict[str, dict[str, str]] = {
    # FA3's tile shapes per problem became fa3's default in session 63; fa3 on 128x128 tiles
    # (these trees' fa3) is fa3-t128
    **{
        sha: {"own-cutlass-fa3": "own-cutlass-fa3-t128"}
        for sha in ("7cc8bf9", "7880d73", "dae4678")
    },
    # the atomic tile counter became fa3's default at 7cc8bf9
    "ce7e05b": {
        "own-cutlass-fa3": "own-cutlass-fa3-static",
        "own-cutlass-fa3-dynamic": "own-cutlass-fa3-t128",
    },
    # the 16-byte O store became fa3's default at ce7e05b (its counter not yet there); fa3 had
    # neither, a kernel no provider builds today
    "521b136": {
        "own-cutlass-fa3-st16": "own-cutlass-fa3-static",
        "own-cutlass-fa3": "own-cutlass-fa3-no-st16-static",
    },
}


def with_current_names(df: pd.DataFrame) -> pd.DataFrame:
    """`df` with RENAMED_AT applied to `provider`; the written name in `provider_recorded`."""
    provider = df["provider"].astype(object)
    sha = df["git_sha"].astype(object) if "git_sha" in df else pd.Series(None, index=df.index)
    for prefix, names in RENAMED_AT.items():
        at = sha.map(lambda v, prefix=prefix: isinstance(v, str) and v.startswith(prefix))
        provider = provider.where(~at, provider.map(lambda v, names=names: names.get(v, v)))
    return df.assign(provider_recorded=df["provider"], provider=provider)


class NoRows(ValueError):
    """The paths hold no rows (a ValueError: the CLI turns it into one line, exit 2)."""


def load(paths: list[str | Path]) -> pd.DataFrame:
    """Rows of every run under `paths`; raises ValueError for a missing path or no rows."""
    for p in paths:
        if not Path(p).exists():
            raise ValueError(f"path: '{p}' does not exist; allowed: run folders or their parents")
    df = store.read_rows(*paths)
    if df.empty:
        raise NoRows(f"path: no rows under {', '.join(map(str, paths))}; allowed: run folders")
    return with_current_names(with_sweep(df, store.read_run_records(*paths)))


def with_sweep(df: pd.DataFrame, records: list[dict]) -> pd.DataFrame:
    """`df` with a `sweep` column: the sweep name each row's run record gives (None where no
    record names one). A run_id shared by runs of several sweeps (the same name on two GPUs)
    is told apart by the record's device UUID."""
    by_run: dict[str, set[str]] = {}
    by_device: dict[tuple[str, str], str] = {}
    for rec in records:
        run, sweep = rec.get("run_id"), rec.get("sweep")
        if not isinstance(run, str) or not isinstance(sweep, str):
            continue
        by_run.setdefault(run, set()).add(sweep)
        uuid = (rec.get("device") or {}).get("device_uuid")
        if isinstance(uuid, str):
            by_device[(run, uuid)] = sweep
    sweeps = []
    for run, uuid in zip(df["run_id"], df["device_uuid"], strict=True):
        one = by_run.get(run, set())
        sweeps.append(by_device.get((run, uuid)) or (next(iter(one)) if len(one) == 1 else None))
    return df.assign(sweep=pd.Series(sweeps, index=df.index, dtype=object))


def is_smoke(df: pd.DataFrame) -> pd.Series:
    """Rows that must never stand in a headline figure or table: CPU rows (device_type cpu),
    rows of a smoke sweep (SMOKE_SWEEPS, by the run's record), and, where the run names no
    sweep, GEMM / attention rows of a smoke-sized problem (min_bytes under TINY_MIN_BYTES)."""
    sweep = df["sweep"] if "sweep" in df else pd.Series(None, index=df.index, dtype=object)
    smoke = sweep.isin(SMOKE_SWEEPS) | (df["device_type"] == "cpu")
    tiny = df["op"].isin(SPEED_OPS) & (pd.to_numeric(df["min_bytes"]) < TINY_MIN_BYTES)
    return smoke | (sweep.isna() & tiny)


def smoke_reason(row: dict) -> str:
    """Why is_smoke set this row aside, in a few words (for the report's smoke section)."""
    if row.get("device_type") == "cpu":
        return "CPU row"
    if row.get("sweep") in SMOKE_SWEEPS:
        return f"sweep {row['sweep']}"
    return f"no sweep recorded; problem under {TINY_MIN_BYTES >> 20} MiB"


# Own kernels of their own whose names extend an older provider's: the warp-specialized CuTe
# FMHA is not a variant of 'own-cutlass' (the SM80-style FMHA) that gives something up, it is
# a headline kernel with rungs of its own ('own-cutlass-fa3-no-pingpong'); the Gluon FMHA is to
# 'own-triton' what the FA3-class CuTe kernel is to 'own-cutlass'.
HEADLINE_OWN = frozenset({"own-cutlass-fa3", "own-triton-gluon"})


def ladder_rungs(providers) -> set[str]:
    """Own providers that are ladder rungs or fixed variants of another own provider in the
    rows ('own-triton-no-tma' of 'own-triton'): each gives up something on purpose. Names in
    HEADLINE_OWN never are."""
    names = {p for p in providers if isinstance(p, str)}
    return {p for p in names - HEADLINE_OWN if any(p.startswith(q + "-") for q in names if q != p)}


def is_speed(df: pd.DataFrame) -> pd.Series:
    """Rows that may be plotted or tabled as speed: status ok with a median."""
    return (df["status"] == "ok") & df["latency_ms_median"].notna()


def settled(row: dict) -> bool:
    """Whether the row's point ran until the power limiter settled before its warm-up
    (power_settle_s, schema 4; null in older rows and where telemetry could not tell)."""
    v = row.get("power_settle_s")
    return v is not None and not (isinstance(v, float) and math.isnan(v))


def settled_side(ra: dict, rb: dict) -> str | None:
    """ "A" or "B" when a power-capped point (sw_power_cap on either side) was timed with the
    limiter settled on that side only: the other side's speed then depends on what ran just
    before it (an H100's cuBLAS rows ran 4-9% faster after an idle spell than settled,
    results/h100/README.md, session 41). None otherwise."""
    if settled(ra) == settled(rb):
        return None
    if not any("sw_power_cap" in str(r.get("throttle_reasons") or "") for r in (ra, rb)):
        return None
    return "A" if settled(ra) else "B"


def tuned_in_point(row: dict) -> bool:
    """Whether the row's own kernel was tuned inside its point, just before its timing: tuned in
    this process (tune_source "tuned" or "seeded", not an in-process hit) and not by the tune pass
    (harness/tune_pass.py). Such a GEMM ran 2-3% slower at M >= 4096 on an H100 than one tuned
    before the first timed point (results/h100/README.md, session 43)."""
    try:
        config = json.loads(row.get("provider_config") or "{}")
    except (TypeError, ValueError):
        return False
    if not isinstance(config, dict) or config.get("tune_source") not in ("tuned", "seeded"):
        return False
    return not config.get("tune_pass") and not config.get("tune_cache_hit")


def latest(df: pd.DataFrame, keys: tuple[str, ...] | list[str]) -> pd.DataFrame:
    """The latest row (by timestamp) of each group of `keys`."""
    if df.empty:
        return df
    keys = list(keys)
    order = df.assign(_ts=df["timestamp"].fillna("")).sort_values("_ts", kind="stable")
    filled = order[keys].astype(str)  # None / NaN group together instead of being dropped
    keep = ~filled.duplicated(keep="last")
    return order[keep].drop(columns="_ts")


def latest_per_run(
    rows: pd.DataFrame, per_run: Callable[[pd.DataFrame], pd.DataFrame], keys: list[str]
) -> pd.DataFrame:
    """per_run(one run's rows) for every run in `rows`, each line (by `keys`) kept from the
    latest run that has it (runs ordered by their last row's timestamp), with its run id in
    `run`: a figure may mix runs, never rows of two runs in one ratio."""
    frames = []
    for run, run_rows in rows.groupby("run_id", sort=False):
        lines = per_run(run_rows)
        if lines.empty:
            continue
        lines = lines.assign(
            run=run, when=str(run_rows["timestamp"].max()) if "timestamp" in run_rows else ""
        )
        frames.append(lines)
    if not frames:
        return pd.DataFrame()
    every = pd.concat(frames, ignore_index=True).sort_values(["when", "run"], kind="stable")
    return every.drop_duplicates(keys, keep="last").drop(columns="when").reset_index(drop=True)


def device_of(row: Any) -> str:
    """'NVIDIA H200' for a GPU, 'cpu: <name> (not GPU numbers)' for the CPU path."""
    name = row.get("device_name") if isinstance(row, dict) else getattr(row, "device_name", None)
    kind = row.get("device_type") if isinstance(row, dict) else getattr(row, "device_type", None)
    name = name if isinstance(name, str) and name else "unknown device"
    return f"cpu: {name} (not GPU numbers)" if kind == "cpu" else name


def with_device(df: pd.DataFrame) -> pd.DataFrame:
    out = df.copy()
    out["device"] = [device_of(r) for r in df[["device_name", "device_type"]].to_dict("records")]
    return out


def _cast(axis: str, v: Any) -> Any:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return None
    if axis in _INT_AXES:
        return int(v)
    if axis == "causal":
        return bool(v)
    return str(v)


def axes_key(op: str, values: dict[str, Any]) -> tuple:
    """(op, axis values...) with numbers as ints: rows and WorkItems meet on this key."""
    return (op, *(_cast(a, values.get(a)) for a in AXES[op]))


def row_axes_keys(df: pd.DataFrame) -> list[tuple | None]:
    """axes_key of every row (None for ops without problem axes)."""
    out = []
    for r in df.to_dict("records"):
        out.append(axes_key(r["op"], r) if r.get("op") in AXES else None)
    return out


def fmt(v: Any, spec: str = ".4g") -> str:
    """A number for a table cell; blank for missing."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return ""
    return format(float(v), spec)
