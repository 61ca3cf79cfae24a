"""Write sweeps/<model>_<phase>.yaml for every workload in harness.workloads.WORKLOADS.

    python scripts/gen_workload_presets.py            # write the files
    python scripts/gen_workload_presets.py --check    # exit 1 if any file is stale

Each file's header carries the true point count (harness.sweep.expand over the registry).
"""

from __future__ import annotations

import argparse
import sys

from harness.config import SWEEPS_DIR
from harness.providers import load_all
from harness.sweep import expand
from harness.workloads.presets import WORKLOADS, render, sweep_groups


def rendered() -> dict[str, str]:
    """{file name: text} of every generated preset."""
    registry = load_all()
    out = {}
    for w in WORKLOADS:
        points = len(expand([g for _, g in sweep_groups(w)], registry))
        out[f"{w.name}.yaml"] = render(w, points)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only report stale files")
    args = parser.parse_args(argv)
    stale = []
    for name, text in rendered().items():
        path = SWEEPS_DIR / name
        if path.exists() and path.read_text() == text:
            continue
        stale.append(name)
        if not args.check:
            path.write_text(text)
    verb = "stale" if args.check else "written"
    print(f"{len(stale)} {verb}: {', '.join(stale) or '-'}")
    return 1 if args.check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
