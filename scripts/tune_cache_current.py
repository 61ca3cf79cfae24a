"""How many of a tune cache's entries today's kernels would read, by family (and by kernel for the
attention tuners), so a lent call is not spent tuning again where nobody expected it.

Session 105's call 14 carried 1,096 entries and still spent 254 s of its budget tuning the
batch-16 decode grid again: session 104 had changed a file that every attention tuner keys on
(then one set for all of them, attention_tune.TUNE_SOURCES; split per family since), so every
attention entry's source hash was stale. A key also holds the GPU name, the driver and the
machine's Triton, which only the machine knows; this checks what the CPU box can, the kernel
sources (each tuner's source set, as scripts/rekey_tune_cache.py lists them):

    python3 scripts/tune_cache_current.py tune_cache/tune-h100.tgz [...]

A line whose `current` is 0 tunes every point of it again on the next call (or
`scripts/rekey_tune_cache.py` moves its entries, where the change is one it may re-key).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness_kernels import tune_cache  # noqa: E402
from rekey_tune_cache import SOURCE_SETS  # noqa: E402
from take_back import _members  # noqa: E402

# the kernel an attention key names first in its problem tuple: "('attn_decode', 16, ...)"
_KERNEL = re.compile(r"^\('([A-Za-z0-9_]+)'")


def label(key: dict) -> str:
    """The family, and for a key whose problem names its kernel first, that kernel."""
    kernel = _KERNEL.match(str(key.get("problem", "")))
    return f"{key.get('family', '?')} {kernel.group(1)}" if kernel else str(key.get("family", "?"))


def counts(files: dict[str, bytes], today: set[str]) -> dict[str, tuple[int, int, set[str]]]:
    """label -> (entries, current ones, the Triton versions the current ones were tuned under)."""
    total: Counter[str] = Counter()
    current: Counter[str] = Counter()
    toolchains: dict[str, set[str]] = {}
    for data in files.values():
        key = json.loads(data).get("key", {})
        name = label(key)
        total[name] += 1
        if key.get("source_hash") in today:
            current[name] += 1
            toolchains.setdefault(name, set()).add(str(key.get("toolchain", "")))
    return {n: (total[n], current[n], toolchains.get(n, set())) for n in sorted(total)}


def main(args: list[str]) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("caches", nargs="+", help="tune-cache archives (tune_cache/tune-<gpu>.tgz)")
    a = ap.parse_args(args)
    today = {tune_cache.source_hash(s) for s in SOURCE_SETS}
    for arg in a.caches:
        print(f"{arg}:")
        print(f"  {'family / kernel':40} {'entries':>8} {'current':>8}  tuned under")
        for name, (n, ok, tools) in counts(_members(Path(arg)), today).items():
            print(f"  {name:40} {n:8d} {ok:8d}  {', '.join(sorted(tools)) or '-'}")


if __name__ == "__main__":
    main(sys.argv[1:])
