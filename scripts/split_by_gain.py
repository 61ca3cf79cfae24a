"""How much own Triton decode's split by the longest sequence wins, in the tuner's own timings.

    python3 scripts/split_by_gain.py TUNE_TGZ_OR_DIR

Reads the Triton attention tune cache (`tar czf ... -C $HARNESS_CACHE_DIR tune`, as
scripts/gpu_measure.sh returns it, or its unpacked folder) and, for every ragged decode
decision whose candidates were timed both ways (entries written from 1654926 on, when the two
got names apart), prints the fastest split-by-length time over the fastest split-by-longest
time (> 1: the longest's chunks won) and the largest same-config ratio. One process timed both
sides of each ratio, so machines do not enter it.
"""

from __future__ import annotations

import argparse
import glob
import json
import math
import re
import tarfile
import tempfile
from pathlib import Path


def cache_root(cache: Path) -> Path:
    """The tune cache's folder: CACHE itself, or where its .tgz was unpacked."""
    if not cache.is_file():
        return cache
    root = Path(tempfile.mkdtemp())
    with tarfile.open(cache) as tar:
        tar.extractall(root, filter="data")
    return root


def decisions(root: Path) -> list[tuple[float, float, str, str, str]]:
    rows = []
    for f in glob.glob(str(root / "tune" / "triton-attention" / "*.json")):
        entry = json.loads(Path(f).read_text())
        problem = entry["key"]["problem"]
        if "attn_decode" not in problem or "'joint'" not in problem or "fill" not in problem:
            continue
        t = entry["record"].get("tune_timings_ms", {})
        longest = {k: v for k, v in t.items() if "-longest" in k}
        # the balanced runs' timings (session 66) are neither cut
        length = {k: v for k, v in t.items() if "-longest" not in k and "-balanced" not in k}
        if not longest or not length:
            continue
        pairs = [
            t[k.replace("-longest", "")] / v
            for k, v in longest.items()
            if k.replace("-longest", "") in t
        ]
        rows.append(
            (
                min(length.values()) / min(longest.values()),
                max(pairs) if pairs else math.nan,
                min(length, key=length.get),
                min(longest, key=longest.get),
                problem,
            )
        )
    return sorted(rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("cache", type=Path)
    a = ap.parse_args()
    rows = decisions(cache_root(a.cache))
    if not rows:
        raise SystemExit(f"no ragged decode decision timed both ways in {a.cache}")
    ratios = [r[0] for r in rows]
    geo = math.exp(sum(map(math.log, ratios)) / len(ratios))
    print(
        f"{len(rows)} ragged decode decisions: best length / best longest geomean {geo:.4f}, "
        f"min {min(ratios):.4f}, max {max(ratios):.4f}; longest faster at {sum(r > 1 for r in ratios)}"
    )
    print("ratio  pair_max best_length best_longest  (batch q_heads kv_heads q_len D page pow2_kv)")
    for ratio, pair, best_len, best_long, problem in rows:
        axes = " ".join(re.findall(r"\b\d+\b", problem.replace("torch.bfloat16", ""))[:7])
        print(f"{ratio:.3f}  {pair:.3f}    {best_len:14s} {best_long:22s} {axes}")


if __name__ == "__main__":
    main()
