"""Two rungs of the decode tuner (attention_decode.py), set against each other from what the tuner
timed: for each problem both rungs were tuned on (the same key but the rung), every candidate
timed under both names is a pair, and its time under rung B over its time under rung A says what
the rung's change did to that config; the best candidate of each says what it did to the pick.

A rung that changes only how a kernel runs, not which configs it offers (own-triton-no-early-start
beside own-triton for the Gluon decode, session 107), is tuned under its own key over the same
candidates, so one tune pass over both rungs times every candidate twice on one card, a few
seconds apart. These are the tuner's timings (attention_tune.py: the capped re-time of its
candidates), not a sweep's protocol: for direction and for deciding what to run, not for citing
beside a sweep's rows. Entries are read as `harness_kernels.tune_cache` wrote them:

    python3 scripts/tune_rung_pairs.py tune_cache/tune-h100.tgz --a full --b no-early-start \
        [--since 2026-12-07T13]

Prints one line per problem (its slice, the pairs, their geomean B / A, each rung's best and B's
best over A's), the geomeans by slice, and the pairs' geomean by kernel (kernel_of): the pairs
of a kernel the rung leaves alone (the decode's `tl` candidates beside the Gluon ones) are a
control, their spread the tuner's noise. Below 1.00, rung B was faster.
"""

from __future__ import annotations

import argparse
import ast
import json
import math
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from take_back import _members  # noqa: E402

# the problem tuple holds torch dtypes (`torch.bfloat16`), which literal_eval cannot read
_DTYPE = re.compile(r"torch\.(\w+)")
# attention_decode.py's key: ('attn_decode', batch, h_q, h_kv, seq_q, head_dim, dtype, causal,
# rung, page_size, next_pow2(max_kv), num_splits, device, ...); other tuners' keys are laid out
# otherwise, so only decode's are read
KERNEL = "attn_decode"
_RUNG = 8


def geomean(values: list[float]) -> float:
    return math.exp(sum(map(math.log, values)) / len(values)) if values else float("nan")


def entries(path: Path, since: str) -> dict[tuple, dict[str, dict]]:
    """{problem without its rung: {rung: entry}} of the decode tuner's joint decisions."""
    out: dict[tuple, dict[str, dict]] = {}
    for name, data in _members(path).items():
        if not name.endswith(".json"):
            continue
        entry = json.loads(data)
        if str(entry.get("tuned_at", "")) < since:
            continue
        problem = list(ast.literal_eval(_DTYPE.sub(r"'\1'", entry["key"]["problem"])))
        if problem[0] != KERNEL or problem[-1] != "joint":
            continue
        rung = problem[_RUNG]
        problem[_RUNG] = None
        out.setdefault(tuple(problem), {})[rung] = entry
    return out


def kernel_of(candidate: str) -> str:
    """The kernel of a candidate as attention_tune.candidate_name names it: "gluon-..." for the
    Gluon decode, the bare tile shorthand for the `tl` kernel."""
    return "gluon" if candidate.startswith("gluon-") else "tl"


def slice_of(problem: tuple) -> str:
    """batch, KV heads, q_len, page, KV length bucket and raggedness, as the serving grid's."""
    ragged = any(isinstance(x, str) and x.startswith("fill") for x in problem)
    return (
        f"b{problem[1]} kvh{problem[3]} q{problem[4]} p{problem[9]} kv{problem[10]} "
        f"{'ragged' if ragged else 'equal'}"
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("cache", type=Path, help="a tune-cache tgz (tune/<family>/<digest>.json)")
    ap.add_argument("--a", default="full", help="the reference rung (default full)")
    ap.add_argument("--b", required=True, help="the rung set against it")
    ap.add_argument("--since", default="", help="only entries tuned at or after (ISO time)")
    args = ap.parse_args(argv)
    pairs_all: list[float] = []
    by_kernel: dict[str, list[float]] = {}
    by_ragged: dict[str, list[float]] = {}
    lines = []
    for problem, rungs in sorted(entries(args.cache, args.since).items(), key=str):
        if args.a not in rungs or args.b not in rungs:
            continue
        ea, eb = rungs[args.a], rungs[args.b]
        ta = ea["record"].get("tune_timings_ms", {})
        tb = eb["record"].get("tune_timings_ms", {})
        common = sorted(set(ta) & set(tb))
        if not common:
            continue
        ratios = [tb[c] / ta[c] for c in common]
        best = min(tb[c] for c in common) / min(ta[c] for c in common)
        pairs_all += ratios
        for c, r in zip(common, ratios, strict=True):
            by_kernel.setdefault(kernel_of(c), []).append(r)
        label = slice_of(problem)
        by_ragged.setdefault(label.rsplit(" ", 1)[1], []).append(best)
        cards = sorted({ea.get("gpu_uuid", "?")[:12], eb.get("gpu_uuid", "?")[:12]})
        lines.append(
            f"{label:36s} {len(common):3d} pairs {geomean(ratios):.4f}  best "
            f"{min(ta[c] for c in common) * 1e3:7.1f} / {min(tb[c] for c in common) * 1e3:7.1f}"
            f" us  {best:.4f}  {' '.join(cards)}"
        )
    if not lines:
        print(f"no problem tuned under both rungs {args.a!r} and {args.b!r}", file=sys.stderr)
        return 1
    print(f"# {args.b} over {args.a}: pairs' geomean (same config), best over best")
    print("\n".join(lines))
    for kind, bests in sorted(by_ragged.items()):
        print(f"{kind}: {len(bests)} problems, best over best {geomean(bests):.4f}")
    for kernel, ratios in sorted(by_kernel.items()):
        print(
            f"{kernel} candidates: {len(ratios)} pairs, geomean {geomean(ratios):.4f} "
            f"({min(ratios):.3f}-{max(ratios):.3f})"
        )
    print(
        f"all: {len(pairs_all)} pairs, geomean {geomean(pairs_all):.4f} "
        f"({min(pairs_all):.3f}-{max(pairs_all):.3f}); best over best "
        f"{geomean([b for v in by_ragged.values() for b in v]):.4f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
