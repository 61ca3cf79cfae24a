"""Print a model preset run's non-GEMM ops (decode attention, the norms, rotary, the KV append,
SiLU-and-multiply) as tables by batch: median us per provider, and where the op has an own
Triton row and vendor rows, the fastest vendor's time over own Triton's (above 1: own faster;
same point, same run). Attention also in GB/s (the minimum bytes over the median). The GEMMs of
the same run are `scripts/gemm_ratio_table.py`'s.

    python3 scripts/preset_ops_table.py results/h200/qwen2_5_72b_decode-s79
"""

from __future__ import annotations

import sys

import pandas as pd

from harness.store import read_rows

OWN = "own-triton"
# the axis a preset sweeps per op: sequences for attention and the cache, tokens otherwise
BATCH_AXIS = {"attention": "batch", "kv_append": "batch"}
COLUMNS = ["op", "provider", "status", "batch", "m", "latency_ms_median", "min_bytes"]


def op_tables(rows: pd.DataFrame) -> list[tuple[str, pd.DataFrame]]:
    """[(title, table)] per op but the GEMMs, in the run's order of ops: us, then (attention)
    GB/s, then the fastest vendor over own Triton where both ran."""
    ok = rows[(rows["status"] == "ok") & (rows["op"] != "gemm")]
    out = []
    for op in dict.fromkeys(ok["op"]):
        axis = BATCH_AXIS.get(op, "m")
        one = ok[ok["op"] == op]
        us = one.pivot_table(index=axis, columns="provider", values="latency_ms_median") * 1e3
        us.index = us.index.astype(int)
        out.append((f"{op}, median us (by {axis})", us.round(2)))
        if op == "attention":
            ms = one.pivot_table(index=axis, columns="provider", values="latency_ms_median")
            nbytes = one.pivot_table(index=axis, columns="provider", values="min_bytes")
            gbps = (nbytes / ms / 1e6).round(0)
            gbps.index = gbps.index.astype(int)
            out.append((f"{op}, GB/s (minimum bytes / median)", gbps))
        vendors = [p for p in us.columns if not p.startswith("own-")]
        if OWN in us.columns and vendors:
            ratio = (us[vendors].min(axis=1) / us[OWN]).round(3)
            fastest = us[vendors].idxmin(axis=1)
            out.append(
                (
                    f"{op}, fastest vendor / {OWN} (above 1: own faster)",
                    pd.DataFrame({"ratio": ratio, "fastest vendor": fastest}),
                )
            )
    return out


def main(paths: list[str]) -> int:
    if not paths:
        print(__doc__)
        return 2
    rows = read_rows(*paths, columns=COLUMNS)
    tables = op_tables(rows)
    if not tables:
        print("no ok rows of a non-GEMM op")
        return 1
    for title, table in tables:
        print(title)
        print(table.to_string())
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
