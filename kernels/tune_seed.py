"""Seeded tuning: where this GPU has no decision for a point, time only the candidates that
another GPU's full tune of the same point ranked best, not all of them. Opt-in:
HARNESS_TUNE_SEED=<k> (tune_cache.seed_top) takes each seeding entry's best k.

Why: a GPU model or driver with no tune cache tunes every point again. A fresh H200 in session
111 spent 514 s of two calls' tune passes on the fp8 grid's 240 own points, 205 s of it own
CUTLASS's (12 candidates a point on average), the one tuner seeded so far. Whether another GPU's ranking
holds here is a measured question, answered offline from two GPUs' tuner timings by
scripts/seed_check.py (tune_cache/README.md has its figures); this module only narrows the search.

Which entries seed a point: those of the same tuner family, toolchain, kernel sources
(source_hash), problem and candidate list, tuned on another GPU name or driver, in full (a
seeded decision never seeds another). A problem that holds the GPU's name (own Triton's keys do)
is compared with that name read as the same. An entry ranks its candidates with its choice first
(what its capped re-time decided) and the rest by burst time; with several seeding entries, each
one's best k are timed, in the order of their GPU name and driver. A point no entry seeds is
tuned in full. Own CUTLASS adds the twins of its seeded candidates where its decode twin rule
applies (the rule reads the twin's burst: cutlass/decode_twin.py), and times every candidate
where no seeded one works on this GPU (widen).

The decision is stored under the point's usual key with `seeded_from` in its record (tune_cache),
and read back only while seeding is on: without HARNESS_TUNE_SEED the point is tuned in full and
the entry overwritten, so the default protocol never rests on a narrowed search. A row says so:
provider_config `tune_source` "seeded" where it was timed, and `tune_seeded_from` (the seeding
GPU, its driver, k and how many candidates were timed) wherever it was read.

This file is in no tuner's key (tune_cache.source_hash), so changing it re-tunes nothing.
"""

from __future__ import annotations

import functools
import json
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from . import tune_cache

GPU = "<gpu>"  # what the GPU's name (quoted, as repr writes it) inside a problem's text reads as


@dataclass(frozen=True)
class SeedEntry:
    """One full tune on another GPU that can seed this point."""

    device: str
    driver: str
    digest: str  # its entry's file name
    choice_index: int
    timings_ms: tuple[tuple[str, float], ...]  # candidate name -> burst ms, as its tuner named them


def burst_timings(record: dict[str, Any]) -> dict[str, float]:
    """A decision's burst time per candidate name, as its tuner recorded them (the GEMM tuners'
    `timings_ms`, the attention tuner's `tune_timings_ms`); NaN left out."""
    found = record.get("timings_ms") or record.get("tune_timings_ms") or {}
    return {str(n): float(ms) for n, ms in found.items() if ms == ms}


def seed_key(key: dict[str, Any]) -> tuple[str, ...]:
    """What a seeding entry must share with the point: everything in the key but the GPU and its
    driver (the GPU's name read as GPU inside the problem's text)."""
    problem = str(key["problem"]).replace(repr(str(key["device"])), repr(GPU))
    return (key["family"], key["toolchain"], key["source_hash"], problem, key["candidates"])


@functools.cache
def _index(folder: Path) -> dict[tuple[str, ...], tuple[SeedEntry, ...]]:
    """Every full-tune entry in one family's folder, by seed_key (read once a process: the entries
    a seed reads are other GPUs', which this process does not write)."""
    found: dict[tuple[str, ...], list[SeedEntry]] = {}
    for path in sorted(folder.glob("*.json")):
        try:
            entry = json.loads(path.read_text())
            record = entry.get("record") or {}
            if entry.get("schema") != tune_cache.SCHEMA or "seeded_from" in record:
                continue
            seed = SeedEntry(
                str(entry["key"]["device"]),
                str(entry["key"]["driver"]),
                path.stem,
                int(entry["choice_index"]),
                tuple(burst_timings(record).items()),
            )
            found.setdefault(seed_key(entry["key"]), []).append(seed)
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as e:
            warnings.warn(f"tune seed: skipping {path} ({e})", stacklevel=2)
    return {k: tuple(sorted(v, key=lambda s: (s.device, s.driver))) for k, v in found.items()}


def clear_index() -> None:
    """Forget the folders read (tests write seeding entries, then tune)."""
    _index.cache_clear()


def ranked(seed: SeedEntry, names: Sequence[str]) -> list[int]:
    """The seeding entry's candidates best first, as indices into this point's list (`names`,
    each candidate's name as the tuner records it): its choice, then by burst time. The lists
    are the same (the key hashes them), so the choice's index holds here."""
    order = [seed.choice_index] if 0 <= seed.choice_index < len(names) else []
    where: dict[str, list[int]] = {}
    for i, name in enumerate(names):
        where.setdefault(name, []).append(i)
    for name, _ in sorted(seed.timings_ms, key=lambda t: t[1]):
        order += [i for i in where.get(name, []) if i not in order]
    return order


def order(key: tune_cache.TuneKey | None, names: Sequence[str]) -> list[int]:
    """The candidates to time for `key`, as indices: every one, unless seeding is on and another
    GPU's full tune of the point seeds it (then their best k each, and tune_cache.save records the
    seed with the decision)."""
    every = list(range(len(names)))
    if key is None:
        return every
    tune_cache.note_seed(key, None)
    k = tune_cache.seed_top()
    if k <= 0 or tune_cache.mode() == "off":
        return every
    mine = seed_key(asdict(key))
    seeds = [
        s
        for s in _index(key.path.parent).get(mine, ())
        if (s.device, s.driver) != (key.device, key.driver)
    ]
    picked: list[int] = []
    for seed in seeds:
        picked += [i for i in ranked(seed, names)[:k] if i not in picked]
    if not picked or len(picked) == len(names):  # nothing narrowed: a full tune
        return every
    tune_cache.note_seed(
        key,
        dict(
            sources=[f"{s.device} (driver {s.driver})" for s in seeds],
            entries=[s.digest for s in seeds],
            top=k,
            tried=len(picked),
            of=len(names),
        ),
    )
    return picked


def widen(key: tune_cache.TuneKey | None, picked: list[int], more: Iterable[int]) -> list[int]:
    """`picked` with `more` added (candidates a rule reads the timings of, or every one where no
    seeded candidate worked); the noted seed counts them, and is dropped once all are timed."""
    out = picked + [i for i in more if i not in picked]
    seed = tune_cache.noted_seed(key)
    if key is not None and seed is not None:
        whole = len(out) >= seed["of"]
        tune_cache.note_seed(key, None if whole else dict(seed, tried=len(out)))
    return out
