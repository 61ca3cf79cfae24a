"""Re-key committed tune-cache entries after the key's source hash changed its reading of the
same files (2026-12-05: raw bytes -> code without comments and docstrings, kernels/tune_cache.py),
so entries tuned on the current kernels are read again instead of tuned again on a GPU.

An entry is re-keyed only when its source hash is the OLD reading of a tuner's files as they
stand now: the kernels it was tuned on are byte for byte today's. Others (tuned on older kernels)
are left as they are; the tuners never read them. Entries whose candidates name other entries'
digests (the tl / Gluon decision, `triton-gemm-choice`) would miss after a re-key whatever is
done here, since their candidate hash covers both sides' text, so such an entry of today's kernels
is dropped rather than moved: the GPU decides it again, a short interleaved re-time each.

    python3 scripts/rekey_tune_cache.py tune_cache/tune-h100.tgz [...]   (rewritten in place)

--since COMMIT: re-key the entries tuned on the kernels as they stood at COMMIT to today's source
hash, for a change since then that only adds candidates (a new config, a new entry in a
candidate list) and changes no existing candidate's code or the way candidates are timed. That is
the caller's claim, checked by nobody here: say it in the commit. A point whose candidate list
changed still misses (its key hashes the list) and is tuned again; every other point reads its
decision as before (session 95: two K-deep decode tiles offered at M <= 32 only).

    python3 scripts/rekey_tune_cache.py --since f93a41a tune_cache/tune-h100.tgz

--split-attention COMMIT: session 105 split the attention tuners' one source set into prefill's
and decode's (attention_tune.PREFILL_SOURCES, DECODE_SOURCES) and changed no kernel; each
attention entry keyed on the one set as it stood at COMMIT moves to its family's key.

    python3 scripts/rekey_tune_cache.py --split-attention <the commit before the split> tune_cache/tune-h100.tgz
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import subprocess
import sys
import tarfile
import tempfile
from dataclasses import asdict
from pathlib import Path

from harness_kernels import tune_cache
from harness_kernels.cutlass import gemm_tune as cutlass_tune
from harness_kernels.triton import attention_choice, attention_tune, gemm_gluon
from harness_kernels.triton import gemm_tune as triton_tune

sys.path.insert(0, str(Path(__file__).resolve().parent))
from take_back import _members, _write_tgz  # noqa: E402

# Every tuple of sources a tuner keys on (kernels/triton/gemm.py's choice joins two of them)
SOURCE_SETS = (
    cutlass_tune.TUNE_SOURCES,
    triton_tune.TUNE_SOURCES,
    gemm_gluon.TUNE_SOURCES,
    triton_tune.TUNE_SOURCES + gemm_gluon.TUNE_SOURCES,
    attention_tune.PREFILL_SOURCES,
    attention_tune.DECODE_SOURCES,
    attention_choice.CHOICE_SOURCES,
)


# families whose candidates name other entries' digests (the tl / Gluon choices of
# kernels/triton/gemm.py and attention_choice.py): a re-key of those entries changes the names,
# so theirs can never match again
NAMES_OTHER_ENTRIES = {"triton-gemm-choice", "triton-attention-choice"}


def raw_source_hash(patterns: tuple[str, ...]) -> str:
    """The key's source hash as it was read before 2026-12-05: the files' raw bytes."""
    h = hashlib.sha256()
    root = tune_cache.KERNELS_DIR
    for path in sorted({p for pat in patterns for p in root.glob(pat) if p.is_file()}):
        h.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()[:16]


def hashes_at(commit: str, sets: tuple[tuple[str, ...], ...] = SOURCE_SETS) -> list[str]:
    """Each source set's key hash (today's reading) of the kernels as they stood at `commit`."""
    repo = Path(__file__).resolve().parent.parent
    with tempfile.TemporaryDirectory() as tmp:
        archive = subprocess.run(
            ["git", "-C", str(repo), "archive", commit, "kernels"],
            check=True,
            capture_output=True,
        ).stdout
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            tar.extractall(tmp, filter="data")
        return [tune_cache.source_hash(s, Path(tmp) / "kernels") for s in sets]


def split_attention(files: dict[str, bytes], commit: str) -> tuple[dict[str, bytes], int]:
    """Session 105 split the attention tuners' one source set (attention_tune.TUNE_SOURCES) into
    PREFILL_SOURCES and DECODE_SOURCES, changing no kernel: an attention entry keyed on the one
    set as it stood at `commit` takes its family's key, decode's where its problem names
    attn_decode first, prefill's otherwise. Other families are left as they are: a tl / Gluon
    choice (`triton-attention-choice`) keys on its own set, which now holds prefill's, so it
    misses and the GPU re-times it."""
    (old,) = hashes_at(commit, (attention_tune.TUNE_SOURCES,))
    decode = tune_cache.source_hash(attention_tune.DECODE_SOURCES)
    prefill = tune_cache.source_hash(attention_tune.PREFILL_SOURCES)
    out, moved = {}, 0
    for name, data in files.items():
        entry = json.loads(data)
        key = entry.get("key", {})
        if key.get("family") != "triton-attention" or key.get("source_hash") != old:
            out[name] = data
            continue
        new = decode if str(key.get("problem", "")).startswith("('attn_decode'") else prefill
        out.update(rekey({name: data}, {old: new})[0])
        moved += 1
    return out, moved


def hash_map(since: str | None = None) -> dict[str, str]:
    """Old source hash -> today's: the raw-bytes reading of today's files (the default), or
    today's reading of the files at `since`."""
    old = hashes_at(since) if since else [raw_source_hash(s) for s in SOURCE_SETS]
    return {o: tune_cache.source_hash(s) for o, s in zip(old, SOURCE_SETS, strict=True)}


def rekey(
    files: dict[str, bytes], new_hash: dict[str, str] | None = None
) -> tuple[dict[str, bytes], int]:
    """The entries with each entry `new_hash` maps (default: hash_map()) under its new key (a
    choice entry dropped); how many moved or were dropped."""
    new_hash = hash_map() if new_hash is None else new_hash
    out, moved = {}, 0
    for name, data in files.items():
        entry = json.loads(data)
        old = entry.get("key", {}).get("source_hash")
        if old not in new_hash or new_hash[old] == old:
            out[name] = data
            continue
        if entry["key"].get("family") in NAMES_OTHER_ENTRIES:
            moved += 1  # dropped: it could never be read again
            continue
        key = tune_cache.TuneKey(**{**entry["key"], "source_hash": new_hash[old]})
        entry["key"] = asdict(key)
        family = name.rsplit("/", 2)[-2]
        out[f"tune/{family}/{key.digest}.json"] = (
            json.dumps(entry, indent=1, sort_keys=True) + "\n"
        ).encode()
        moved += 1
    return out, moved


def main(args: list[str]) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("caches", nargs="+", help="tune-cache archives, rewritten in place")
    ap.add_argument("--since", metavar="COMMIT", help="re-key entries of COMMIT's kernels")
    ap.add_argument(
        "--split-attention",
        metavar="COMMIT",
        help="move attention entries keyed on the one set at COMMIT to their family's set",
    )
    a = ap.parse_args(args)
    mapping = {} if a.split_attention else hash_map(a.since)
    for arg in a.caches:
        path = Path(arg)
        files = _members(path)
        if a.split_attention:
            out, moved = split_attention(files, a.split_attention)
        else:
            out, moved = rekey(files, mapping)
        _write_tgz(path, out)
        print(f"{path}: {moved} of {len(files)} entries re-keyed or dropped, {len(out)} kept")


if __name__ == "__main__":
    main(sys.argv[1:])
