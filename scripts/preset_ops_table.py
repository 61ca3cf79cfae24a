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
# Problem axes that may vary beside the sweep axis (layer_ops' two widths a op, a run's two
# head counts): each one that does becomes an index level, so no two points share a cell.
# Session 86's table of two SiLU widths printed their mean as one row before this.
OTHER_AXES = ["n", "q_len", "kv_len", "head_dim", "q_heads", "kv_heads", "page_size", "causal"]
COLUMNS = ["op", "provider", "status", "batch", "m", "latency_ms_median", "min_bytes", *OTHER_AXES]


class SamePointTwice(ValueError):
    """One point and provider with more than one ok row (two runs given): no cell to put it in."""


def op_tables(rows: pd.DataFrame) -> list[tuple[str, pd.DataFrame]]:
    """[(title, table)] per op but the GEMMs, in the run's order of ops: us, then (attention)
    GB/s, then the fastest vendor over own Triton where both ran."""
    ok = rows[(rows["status"] == "ok") & (rows["op"] != "gemm")]
    out = []
    for op in dict.fromkeys(ok["op"]):
        axis = BATCH_AXIS.get(op, "m")
        one = ok[ok["op"] == op].copy()
        index = [axis] + [
            c for c in OTHER_AXES if c in one and one[c].nunique(dropna=True) > 1 and c != axis
        ]
        for c in index:
            if pd.api.types.is_float_dtype(one[c]) and one[c].notna().all():
                one[c] = one[c].astype(int)
        if one.duplicated([*index, "provider"]).any():
            raise SamePointTwice(f"{op}: a point measured twice by one provider: give one run")
        ms = one.pivot_table(index=index, columns="provider", values="latency_ms_median")
        us = ms * 1e3
        by = " x ".join(index)
        out.append((f"{op}, median us (by {by})", us.round(2)))
        if op == "attention":
            nbytes = one.pivot_table(index=index, columns="provider", values="min_bytes")
            gbps = (nbytes / ms / 1e6).round(0)
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
    try:
        tables = op_tables(rows)
    except SamePointTwice as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
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
