"""What the Gluon and `tl` decode's split merges are worth, in the tuner's own timings.

    python3 scripts/merge_gain.py TUNE_TGZ_OR_DIR

Reads the Triton attention tune cache (as scripts/decode_serving_call.sh returns it, or its
unpacked folder). For every split config the tuner chose, it timed each merge the target allows
("kernel": the reduction kernel; "fused": the last split's CTA merges; "pdl": the reduction
kernel as a programmatic dependent, sm_90) under the sweep's timer, and kept the fastest: its
'reduce' decision. Printed: the reduction kernel's time over each other merge's (> 1: that merge
won), geomean and count per raggedness, then every decision. One process timed all the ways of
a decision, so machines do not enter a ratio. A row's `provider_config.reduce` names only the
winner; this is where the margins are.
"""

from __future__ import annotations

import argparse
import glob
import json
import math
import re
from pathlib import Path

from split_by_gain import cache_root

MERGES = ("fused", "pdl")


def decisions(root: Path) -> list[dict]:
    rows = []
    for f in sorted(glob.glob(str(root / "tune" / "triton-attention" / "*.json"))):
        entry = json.loads(Path(f).read_text())
        problem = entry["key"]["problem"]
        if "attn_decode" not in problem or "'reduce'" not in problem:
            continue
        t = entry["record"].get("tune_timings_ms", {})
        kernel = {k[: -len("-kernel")]: v for k, v in t.items() if k.endswith("-kernel")}
        if len(kernel) != 1:  # a caller's fixed merge: nothing to set against
            continue
        (config, base), row = next(iter(kernel.items())), {}
        for m in MERGES:
            if f"{config}-{m}" in t:
                row[m] = base / t[f"{config}-{m}"]
        axes = re.findall(r"\b\d+\b", problem.replace("torch.bfloat16", ""))[:7]
        rung = re.search(r"True, '([\w-]+)'", problem)
        rows.append(
            dict(
                row,
                config=config,
                chosen=min(t, key=t.get).rsplit("-", 1)[1],
                ragged="fill" in problem,
                rung=rung.group(1) if rung else "",
                axes=" ".join(axes),
            )
        )
    return rows


def geomean(xs: list[float]) -> float:
    return math.exp(sum(map(math.log, xs)) / len(xs))


def summary(rows: list[dict]) -> list[str]:
    out = []
    for ragged in (False, True):
        part = [r for r in rows if r["ragged"] == ragged]
        if not part:
            continue
        cells = []
        for m in MERGES:
            xs = [r[m] for r in part if m in r]
            if xs:
                won = sum(x > 1 for x in xs)
                cells.append(
                    f"{m} {geomean(xs):.3f}x ({min(xs):.3f}-{max(xs):.3f}, won {won} of {len(xs)})"
                )
        kind = "ragged" if ragged else "equal-length"
        out.append(f"{kind}, {len(part)} decisions: " + "; ".join(cells))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("cache", type=Path)
    a = ap.parse_args()
    rows = decisions(cache_root(a.cache))
    if not rows:
        raise SystemExit(f"no decode merge decision in {a.cache}")
    print("the reduction kernel's time over each merge's (> 1: that merge won)")
    print("\n".join(summary(rows)))
    print(
        "fused  pdl    chosen config                   rung              (batch q_heads kv_heads q_len D page kv)"
    )
    for r in sorted(rows, key=lambda r: (r["ragged"], r["axes"], r["rung"])):
        f, p = (f"{r[m]:.3f}" if m in r else "  -  " for m in MERGES)
        print(f"{f}  {p}  {r['chosen']:6s} {r['config']:24s} {r['rung']:17s} {r['axes']}")


if __name__ == "__main__":
    main()
