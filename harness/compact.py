"""`harness compact RUN...`: a finished run's row files folded into one parquet per run.

A sweep writes one small file per point (rows/<point_key>.parquet) because a file written whole
and renamed is what makes a killed sweep lose nothing. Finished, those files cost: 240 points of
gemm_llama are 240 files of ~25 KB, mostly repeated footers and schema, and every reader opens
each. Compaction writes <run>/rows.parquet (every row, current SCHEMA, zstd), checks that it
reads back with every point, and only then deletes the row files it holds. A run stays
resumable: new points land in rows/ again and win over the compacted row of the same point
(store.read_table), and a second compaction folds them in.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pyarrow.parquet as pq

from harness import store
from harness.lock import run_lock

DEFAULT_LEVEL = 19  # zstd: archives are written once and read often; 19 costs ~1 s a run


@dataclass
class Compacted:
    run_path: Path
    rows: int
    files_before: int
    bytes_before: int
    bytes_after: int


def run_folders(path: Path) -> list[Path]:
    """Run folders at or under `path`: folders holding rows/ or rows.parquet (not hidden)."""
    found = []
    for p in [path, *sorted(q for q in path.rglob("*") if q.is_dir())]:
        rel = p.relative_to(path).parts
        if any(part.startswith((".", "_")) for part in rel) or p.name == "rows":
            continue
        if (p / "rows").is_dir() or (p / store.COMPACTED).is_file():
            found.append(p)
    return found


def _size(paths: list[Path]) -> int:
    return sum(p.stat().st_size for p in paths if p.exists())


def compact_run(run_path: Path, level: int = DEFAULT_LEVEL, rewrite: bool = False) -> Compacted:
    """Fold <run>/rows/*.parquet (and an earlier rows.parquet) into <run>/rows.parquet, under
    the run's lock: a sweep writing the run meanwhile would lose the rows compaction deletes.
    `rewrite`: write rows.parquet again even with nothing loose, in the store's current encoding
    (store.parquet_bytes), after checking that every value reads back the same."""
    with run_lock(run_path):
        return _compact_locked(run_path, level, rewrite)


def _compact_locked(run_path: Path, level: int, rewrite: bool = False) -> Compacted:
    store.set_aside_unreadable(run_path)  # kept in rows/_unreadable/, never folded in or deleted
    loose = sorted(p for p in (run_path / "rows").glob("*.parquet") if not p.name.startswith("."))
    target = run_path / store.COMPACTED
    before = [*loose, target] if target.exists() else loose
    bytes_before = _size(before)
    if not loose and target.exists() and not rewrite:
        # Nothing to fold in: the file stays as it is. Written again it would differ in bytes
        # (another pyarrow), and `harness compact results/h200` rewrote every committed run.
        rows = pq.read_metadata(target).num_rows
        return Compacted(run_path, rows, 0, bytes_before, bytes_before)
    table = store.read_table(run_path)
    expected = store.finished_keys(run_path)
    table = table.sort_by("point_key")
    data = store.parquet_bytes(table, level)
    if rewrite and not loose:  # a committed run's only copy: the new bytes must read back equal
        again = store.scan_bytes(data)
        if not store.same_values(again, table):
            raise RuntimeError(f"{target}: rewritten bytes read back different values; kept")
    store.write_bytes(target, data)
    back = pq.read_table(target, columns=["point_key"]).column(0).to_pylist()
    if set(back) != expected or len(back) != len(expected):  # never delete what is not folded in
        raise RuntimeError(f"{target}: read back {len(back)} rows, expected {len(expected)} points")
    for p in loose:
        p.unlink()
    try:
        os.rmdir(run_path / "rows")  # stays when rows/_unreadable/ holds set-aside files
    except OSError:
        pass
    return Compacted(run_path, table.num_rows, len(loose), bytes_before, target.stat().st_size)
