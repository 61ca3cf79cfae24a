"""`harness compact <run path...> [level=19] [rewrite=false]`: fold each run's row files into
one zstd parquet (<run>/rows.parquet); readers and resume use it."""

from __future__ import annotations

from pathlib import Path

from harness import store
from harness.cliargs import Parser, true_or_false
from harness.compact import DEFAULT_LEVEL, compact_run, run_folders


def main(args: list[str]) -> int:
    parser = Parser(
        "compact",
        "Fold each run's row files (rows/*.parquet) into one zstd parquet, <run>/rows.parquet,\n"
        "after checking it reads back with every point. Reports, compare and resume read it.",
    )
    parser.add_argument("paths", nargs="+", metavar="PATH", help="run folders, or folders of runs")
    parser.add_key("level", DEFAULT_LEVEL, "zstd level, 1..22", type=int)
    parser.add_key(
        "rewrite",
        False,
        "write rows.parquet again though nothing is loose (the store's current encoding)",
        type=true_or_false("rewrite"),
    )
    ns = parser.parse_args(args)
    if not 1 <= ns.level <= 22:
        raise ValueError(f"level: {ns.level} outside 1..22; allowed: 1..22 (zstd levels)")
    runs = []
    for path in map(Path, ns.paths):
        if not path.is_dir():
            raise ValueError(
                f"paths: '{path}' is not a folder; allowed: run folders or their parents"
            )
        runs += run_folders(path)
    if not runs:
        raise ValueError(f"paths: no run folder (rows/ or {store.COMPACTED}) under {ns.paths}")
    total_before = total_after = 0
    for run in runs:
        c = compact_run(run, ns.level, ns.rewrite)
        total_before += c.bytes_before
        total_after += c.bytes_after
        print(
            f"{run}: {c.rows} rows, {c.files_before} row files, "
            f"{c.bytes_before / 1e6:.2f} MB -> {c.bytes_after / 1e6:.2f} MB"
        )
    print(f"{len(runs)} runs: {total_before / 1e6:.1f} MB -> {total_after / 1e6:.1f} MB")
    return 0
