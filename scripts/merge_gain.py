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
import re
from pathlib import Path

from harness_kernels.triton.attention_decode import merge_timings
from split_by_gain import cache_root

from harness.report.decode_serving import MERGES, merge_margins


def decisions(root: Path) -> list[dict]:
    rows = []
    for f in sorted(glob.glob(str(root / "tune" / "triton-attention" / "*.json"))):
        entry = json.loads(Path(f).read_text())
        problem = entry["key"]["problem"]
        if "attn_decode" not in problem or "'reduce'" not in problem:
            continue
        timings = merge_timings(entry["record"].get("tune_timings_ms"))
        if not timings or "kernel" not in timings:  # a caller's fixed merge: nothing to compare
            continue
        config = next(n for n in entry["record"]["tune_timings_ms"] if n.endswith("-kernel"))
        rung = re.search(r"True, '([\w-]+)'", problem)
        rows.append(
            dict(
                timings=timings,
                config=config.removesuffix("-kernel"),
                chosen=min(timings, key=timings.get),
                ragged="fill" in problem,
                rung=rung.group(1) if rung else "",
                axes=" ".join(re.findall(r"\b\d+\b", problem.replace("torch.bfloat16", ""))[:7]),
            )
        )
    return rows


def summary(rows: list[dict]) -> list[str]:
    out = []
    for ragged in (False, True):
        part = [r["timings"] for r in rows if r["ragged"] == ragged]
        if part:
            kind = "ragged" if ragged else "equal-length"
            table = merge_margins(part).to_string(index=False)
            out.append(f"{kind}, {len(part)} decisions:\n{table}")
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
        t = r["timings"]
        f, p = (f"{t['kernel'] / t[m]:.3f}" if m in t else "  -  " for m in MERGES)
        print(f"{f}  {p}  {r['chosen']:6s} {r['config']:24s} {r['rung']:17s} {r['axes']}")


if __name__ == "__main__":
    main()
