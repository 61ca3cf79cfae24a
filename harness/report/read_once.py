"""The rate of one cold read pass over N bytes, from a `probes_read_once` run's rows: the
practical roof of a memory-bound kernel that reads its operands once. A single pass over few
bytes cannot reach the HBM read ceiling (H200 `read_once-s57`: 2,834 GB/s at 34 MB, 4,628 at
4.3 GB), so a 4096x4096 decode GEMM's 0.61 of the ceiling is 0.87 of what its bytes allow.
Used by the serving-decode table and by `harness gaps`' room at the roof."""

from __future__ import annotations

import numpy as np
import pandas as pd


def one_pass_reads(rows: pd.DataFrame) -> pd.DataFrame:
    """The ok cold read rows that read their working set once (re-reading rows, and rows timed
    with the cache hot, left out).

    Hot rows are a different quantity: an H200 reads 16-48 MiB from a warm L2 at 4.1-4.8 TB/s
    against 2.0-3.2 cold (`readonce-hot-s77`, session 77), and the curve takes the fastest row
    per size, so one hot run in the tree would have raised every small point's roof. Cold rows
    of any flush size stay (1x-4x the L2 read alike within 2.6%; 8x slower, so never the max)."""
    need = {"op", "status", "metric", "traffic_bytes", "working_set_bytes", "gbps"}
    if not need <= set(rows.columns):
        return rows.iloc[0:0]
    ok = rows[(rows["op"] == "memory") & (rows["status"] == "ok") & (rows["metric"] == "read")]
    if "l2" in ok.columns:
        ok = ok[ok["l2"].isna() | (ok["l2"] == "cold")]
    return ok[ok["traffic_bytes"] == ok["working_set_bytes"]]


def curve(reads: pd.DataFrame) -> pd.Series:
    """GB/s by bytes read: the faster provider at each size."""
    return reads.groupby("traffic_bytes")["gbps"].max().sort_index()


def curves_by_device(rows: pd.DataFrame) -> dict[str, pd.Series]:
    """{device_name: curve} for every GPU model with one-pass read rows among `rows`."""
    reads = one_pass_reads(rows)
    if reads.empty or "device_name" not in reads:
        return {}
    return {str(d): curve(g) for d, g in reads.groupby("device_name")}


def gbps_at(read_curve: pd.Series, nbytes: pd.Series) -> pd.Series:
    """The curve at each byte count, linear in log bytes between sizes; past the largest size its
    last value (the plateau), below the smallest NaN: the rate still climbs steeply at the small
    end (H200: 2,064 GB/s at 16 MiB, 2,537 at 24), so a smaller read's roof is not measured and
    the smallest size's rate would overstate it."""
    x = np.log(np.asarray(nbytes, dtype=np.float64))
    xs = np.log(read_curve.index.to_numpy(np.float64))
    y = np.interp(x, xs, read_curve.to_numpy(np.float64))
    y[x < xs[0]] = np.nan
    return pd.Series(y, index=nbytes.index)
