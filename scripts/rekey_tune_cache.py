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
"""

from __future__ import annotations

import hashlib
import json
import sys
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
    attention_tune.TUNE_SOURCES,
    attention_choice.CHOICE_SOURCES,
)


# families whose candidates name other entries' digests (kernels/triton/gemm.py's tl / Gluon
# choice): a re-key of those entries changes the names, so theirs can never match again
NAMES_OTHER_ENTRIES = {"triton-gemm-choice"}


def raw_source_hash(patterns: tuple[str, ...]) -> str:
    """The key's source hash as it was read before 2026-12-05: the files' raw bytes."""
    h = hashlib.sha256()
    root = tune_cache.KERNELS_DIR
    for path in sorted({p for pat in patterns for p in root.glob(pat) if p.is_file()}):
        h.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()[:16]


def rekey(files: dict[str, bytes]) -> tuple[dict[str, bytes], int]:
    """The entries with each current-kernel entry under its new key (a choice entry dropped);
    how many moved or were dropped."""
    new_hash = {raw_source_hash(s): tune_cache.source_hash(s) for s in SOURCE_SETS}
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


def main(paths: list[str]) -> None:
    for arg in paths:
        path = Path(arg)
        files = _members(path)
        out, moved = rekey(files)
        _write_tgz(path, out)
        print(f"{path}: {moved} of {len(files)} entries re-keyed or dropped, {len(out)} kept")


if __name__ == "__main__":
    main(sys.argv[1:])
