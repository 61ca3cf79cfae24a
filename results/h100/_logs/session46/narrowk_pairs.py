"""Session 46, as run on the committed rows: own Triton's deep configs at 16-32 rows with a
64-wide K tile (cuBLAS's 128-byte rows; code of cb5c726, reverted after this) against their
128-wide twins, from the tuner's own timings in provider_config (one process per point)."""

import json
import re

import numpy as np

from harness.store import read_rows

rows = read_rows(
    "results/h100/gemm_llama-narrowk", columns=["provider", "m", "n", "k", "provider_config"]
)
rows = rows[(rows.provider == "own-triton") & (rows.m <= 32)]
ONE_PER_SM = "programs_per_sm=1"
pairs, won = [], []
for cfg in rows.provider_config:
    timed = json.loads(cfg).get("candidates") or {}
    if not isinstance(timed, dict):
        continue
    narrow = {
        c: t
        for c, t in timed.items()
        if re.match(r"block_m=(16|32)/.*block_k=64/.*num_stages=1\d/", c)
        or (re.match(r"block_m=(16|32)/.*block_k=64/", c) and ONE_PER_SM in c)
    }
    for c, t in narrow.items():
        head = c.split("/num_warps")[0].replace("block_k=64", "block_k=128")
        split = c.split("split_k=")[1].split("/")[0]
        twin = [
            t2
            for c2, t2 in timed.items()
            if c2.startswith(head) and f"split_k={split}/" in c2 and ONE_PER_SM in c2
        ]
        if twin:
            pairs.append(twin[0] / t)
    if narrow:
        won.append(min(narrow.values()) <= min(timed.values()))
print(
    f"{len(pairs)} pairs: 128-wide time / 64-wide time, geomean {np.exp(np.mean(np.log(pairs))):.3f}"
)
print(f"{len(won)} points offered the 64-wide twins; they won at {sum(won)}")
