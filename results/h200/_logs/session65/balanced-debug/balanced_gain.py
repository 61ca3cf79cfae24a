"""What the Gluon decode's balanced runs (split_by "balanced") win, in the tuner's own timings.

    python3 scripts/balanced_gain.py TUNE_TGZ_OR_DIR

Reads the Triton attention tune cache (`tar czf ... -C $HARNESS_CACHE_DIR tune`, as
scripts/decode_serving_call.sh returns it, or its unpacked folder) and, for every decode
decision whose candidates include balanced runs, prints the fastest other candidate's time over
the fastest balanced one's (> 1: balanced won), and the same against the other Gluon candidates
only; by ragged (a `fill` key) or not. One process timed both sides of each ratio, so machines
do not enter it.
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


def decisions(root: Path) -> list[dict]:
    rows = []
    for f in glob.glob(str(root / "tune" / "triton-attention" / "*.json")):
        entry = json.loads(Path(f).read_text())
        problem = entry["key"]["problem"]
        if "attn_decode" not in problem or "'joint'" not in problem:
            continue
        t = entry["record"].get("tune_timings_ms", {})
        bal = {k: v for k, v in t.items() if k.endswith("-balanced")}
        other = {k: v for k, v in t.items() if not k.endswith("-balanced")}
        gluon = {k: v for k, v in other.items() if k.startswith("gluon-")}
        if not bal or not other:
            continue
        best_bal = min(bal.values())
        rows.append(
            dict(
                vs_all=min(other.values()) / best_bal,
                vs_gluon=min(gluon.values()) / best_bal if gluon else math.nan,
                ragged="fill" in problem,
                best_other=min(other, key=other.get),
                best_bal=min(bal, key=bal.get),
                axes=" ".join(re.findall(r"\b\d+\b", problem.replace("torch.bfloat16", ""))[:7]),
            )
        )
    return sorted(rows, key=lambda r: r["vs_all"])


def _geo(xs: list[float]) -> float:
    xs = [x for x in xs if x == x]
    return math.exp(sum(map(math.log, xs)) / len(xs)) if xs else math.nan


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("cache", type=Path)
    a = ap.parse_args()
    root = a.cache
    if root.is_file():
        root = Path(tempfile.mkdtemp())
        with tarfile.open(a.cache) as tar:
            tar.extractall(root, filter="data")
    rows = decisions(root)
    if not rows:
        raise SystemExit(f"no decode decision with balanced candidates in {a.cache}")
    for label, sel in (("ragged", True), ("one length", False)):
        part = [r for r in rows if r["ragged"] == sel]
        if part:
            vs_all = [r["vs_all"] for r in part]
            print(
                f"{label}: {len(part)} decisions; best other / best balanced geomean "
                f"{_geo(vs_all):.4f} (min {min(vs_all):.3f}, max {max(vs_all):.3f}, balanced "
                f"fastest at {sum(v > 1 for v in vs_all)}); against the other Gluon "
                f"candidates only {_geo([r['vs_gluon'] for r in part]):.4f}"
            )
    print(
        "vs_all vs_gluon ragged best_other            best_balanced         "
        "(batch q_heads kv_heads q_len D page pow2_kv)"
    )
    for r in rows:
        print(
            f"{r['vs_all']:.3f}  {r['vs_gluon']:.3f}    {str(r['ragged']):6s} "
            f"{r['best_other']:22s} {r['best_bal']:22s}{r['axes']}"
        )


if __name__ == "__main__":
    main()
