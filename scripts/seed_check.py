"""What seeded tuning (kernels/tune_seed.py) would have cost on points two GPUs both tuned in full,
read from their tuners' own measured timings: for each point of TARGET that SEED's cache holds
too (same family, toolchain, kernel sources, problem and candidate list), the target's burst
time of the best of the seed's top k against the target's best burst over every candidate.

    python3 scripts/seed_check.py tune_cache/tune-h100.tgz tune_cache/tune-h200.tgz [--top 1,2,3,5]

Each cache is a tune-cache folder or a `tar czf ... tune` archive of one (tune_cache/README.md).
Per family and k it prints: points, hits (the target's full-tune pick among the seed's top k),
the geomean and worst of seeded over full burst time, and the share of candidates timed.

A point's pick is read as the tuner made it where the record allows: the capped re-time's winner
where one ran (capped_retime.winner over `capped_ms` / `tune_capped_ms`), else the fastest
burst; the seeded pick on the target is its fastest burst among the k (a capped re-time there
is not simulated: it would choose among those k by times not in the record).
"""

from __future__ import annotations

import argparse
import io
import json
import math
import sys
import tarfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from harness_kernels import capped_retime, tune_cache
from harness_kernels.cutlass.gemm import RunOptions
from harness_kernels.tune_seed import burst_timings, seed_key


def entries(source: Path) -> Iterator[dict[str, Any]]:
    """Every entry of a tune-cache folder or of a .tgz holding one."""
    if source.is_dir():
        for path in sorted(source.rglob("*.json")):
            yield json.loads(path.read_text())
        return
    with tarfile.open(source) as tar:
        for member in tar.getmembers():
            if member.isfile() and member.name.endswith(".json"):
                data = tar.extractfile(member)
                if data is not None:
                    yield json.load(io.TextIOWrapper(data))


def timings(entry: dict[str, Any]) -> dict[str, float]:
    return burst_timings(entry.get("record") or {})


def pick(entry: dict[str, Any]) -> str | None:
    """The candidate name the tuner chose: own CUTLASS's read from the stored choice (the name its
    timings use); another tuner's as far as its record tells (capped winner, else fastest burst:
    an exact tie of bursts may then read another candidate than the tuner took)."""
    if (name := cutlass_name(entry.get("choice", ""))) is not None:
        return name
    burst = timings(entry)
    if not burst:
        return None
    fastest = min(burst, key=burst.__getitem__)
    record = entry.get("record") or {}
    capped = record.get("capped_ms") or record.get("tune_capped_ms") or {}
    capped = {n: float(ms) for n, ms in capped.items() if ms == ms}
    if fastest in capped:
        return capped_retime.winner(capped, fastest)
    return fastest


def cutlass_name(choice: str) -> str | None:
    """An own CUTLASS candidate's timing name (gemm_tune._name) from its stored description, or
    None for another tuner's."""
    try:
        config, options = json.loads(choice)
        return f"{config['name']}:{RunOptions(**options)}"
    except (ValueError, TypeError, KeyError):
        return None


def ranking(entry: dict[str, Any]) -> list[str]:
    """The seed's candidates best first: its pick, then by burst time (tune_seed.ranked)."""
    burst = timings(entry)
    first = pick(entry)
    rest = sorted((n for n in burst if n != first), key=burst.__getitem__)
    return ([first] if first else []) + rest


def full_tunes(source: Path) -> tuple[set[tuple[str, str]], dict[tuple[str, ...], dict[str, Any]]]:
    """The cache's (GPU, driver) pairs and its full tunes by seed_key (tune_seed.py); a cache of
    more than one pair is refused, since its entries would shadow each other."""
    found = [
        e
        for e in entries(source)
        if e.get("schema") == tune_cache.SCHEMA
        and "seeded_from" not in (e.get("record") or {})
        and timings(e)
    ]
    gpus = {(e["key"]["device"], e["key"]["driver"]) for e in found}
    if len(gpus) > 1:
        raise SystemExit(f"{source}: entries of {len(gpus)} GPUs or drivers; give one each")
    return gpus, {seed_key(e["key"]): e for e in found}


def compare(seed: Path, target: Path, tops: list[int]) -> list[dict[str, Any]]:
    """One row per family and k."""
    (seed_gpus, seeds), (target_gpus, targets) = full_tunes(seed), full_tunes(target)
    if seed_gpus and seed_gpus == target_gpus:
        raise SystemExit("the seed and the target are one GPU on one driver: nothing to replay")
    rows = []
    families = sorted({k[0] for k in targets if k in seeds})
    for family in families:
        shared = [k for k in targets if k in seeds and k[0] == family]
        for top in tops:
            losses, hits, timed, total, worst = [], 0, 0, 0, ("", 1.0)
            for key in shared:
                mine, theirs = timings(targets[key]), ranking(seeds[key])[:top]
                tried = [n for n in theirs if n in mine]
                if not tried:
                    continue
                best = min(mine.values())
                loss = min(mine[n] for n in tried) / best
                losses.append(loss)
                hits += pick(targets[key]) in tried
                timed += len(tried)
                total += len(mine)
                if loss > worst[1]:
                    worst = (key[3], loss)
            if not losses:
                continue
            geo = math.exp(sum(math.log(x) for x in losses) / len(losses))
            rows.append(
                dict(
                    family=family,
                    top=top,
                    points=len(losses),
                    hits=hits,
                    geomean=geo,
                    worst=worst[1],
                    worst_at=worst[0],
                    timed=timed / total,
                )
            )
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("seed", type=Path, help="the seeding GPU's tune cache (folder or .tgz)")
    ap.add_argument("target", type=Path, help="the GPU being tuned: its full-tune cache")
    ap.add_argument("--top", default="1,2,3,5", help="k values, comma-separated")
    args = ap.parse_args(argv)
    tops = [int(t) for t in args.top.split(",")]
    rows = compare(args.seed, args.target, tops)
    if not rows:
        print("no point tuned in full on both (same family, sources, problem, candidates)")
        return 1
    print(
        "| family | k | points | target's pick in top k | seeded / full (geomean) | worst | "
        "candidates timed |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        worst = f"{r['worst']:.4f} at {r['worst_at']}" if r["worst"] > 1 else "1 (none lost)"
        print(
            f"| {r['family']} | {r['top']} | {r['points']} | {r['hits']} | {r['geomean']:.4f} | "
            f"{worst} | {r['timed']:.0%} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
