"""The results dataset: one small parquet file per point, written by atomic rename.

Layout of a run:  <results_dir>/<run_id>/
    config.yaml        resolved Hydra config of the (last) invocation
    run.json           device and software provenance of the run
    rows/<point_key>.parquet
    rows/_unreadable/  row files a resume found unreadable (torn, truncated), moved, not deleted
    rows.parquet       `harness compact`: every row of rows/ in one file (harness/compact.py);
                       a row file in rows/ for the same point (measured after) takes precedence
    crosscheck.parquet, crosscheck.md   `harness crosscheck`'s table (a side table, not rows)
A killed sweep leaves only whole files: rows are written to a dot-prefixed temporary name in the
same folder, fsync'd, then renamed; readers skip dot- and underscore-prefixed files, and read
rows only from rows/ folders. A row file torn anyway (a full disk, a copy cut short) is set
aside by a resume and measured again; readers skip it with a warning.
Every row file has the columns of harness/schema.py (SCHEMA, re-exported here with COLUMNS and
SCHEMA_VERSION, since reading and writing rows against it is the store's job).
"""

from __future__ import annotations

import json
import os
import re
import sys
import tempfile
from collections.abc import Iterable
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.parquet as pq

from harness.schema import COLUMNS, SCHEMA, SCHEMA_VERSION

_RUN_ID = re.compile(r"[A-Za-z0-9_.-]{1,128}")


def check_run_id(run_id: str) -> str:
    """`run_id` if it is one folder name; raises ValueError in one line otherwise. A run is
    <results_dir>/<run_id>: '../x', '/abs', '..' or 'a/b' would put it (and its config.yaml)
    anywhere on the filesystem."""
    if not isinstance(run_id, str) or not _RUN_ID.fullmatch(run_id) or run_id in (".", ".."):
        raise ValueError(
            f"run_id: {run_id!r} is not a single folder name; allowed: 1-128 letters, digits, "
            "'-', '_', '.' (not '.' or '..'), e.g. run_id=study1"
        )
    return run_id


def run_dir(results_dir: str | Path, run_id: str) -> Path:
    return Path(results_dir) / check_run_id(run_id)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _atomic_write_bytes(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    # The writer's pid in the name: a cleanup leaves a live writer's temporary alone.
    fd, tmp = tempfile.mkstemp(
        prefix=f".{path.name}.{os.getpid()}.", suffix=".tmp", dir=path.parent
    )
    try:
        # mkstemp makes the file 0600; results are shared datasets, so give them the mode an
        # ordinary open() would (0666 less the umask), or collaborators cannot read the rows.
        os.fchmod(fd, 0o666 & ~_umask())
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_bytes(path: Path, data: bytes) -> None:
    """Write a file whole, atomically (a temporary in the same folder, fsync'd, renamed)."""
    _atomic_write_bytes(path, data)


def write_text(path: Path, text: str) -> None:
    _atomic_write_bytes(path, text.encode())


# Samples on disk. CUDA events time in whole ticks of 32 ns, reported as float32 milliseconds
# (cudaEventElapsedTime), so samples_ms, float64 in memory, is stored the smallest way that gives
# back every bit:
# - as whole ticks, a list<int32> column named samples_32ns in samples_ms's place, encoded
#   DELTA_BINARY_PACKED (consecutive samples differ by few ticks), when every sample is one;
#   the committed runs shrink from 47.4 to 37.1 MB (results/ travels with every lent GPU call,
#   whose tree limit is 64 MiB). The column's name says its unit, so a reader that does not know
#   it (pandas.read_parquet) cannot take ticks for milliseconds;
# - else as float32, when every sample is float32-exact (the committed runs were 7% smaller than
#   float64);
# - else float64 (the CPU timer's samples, a NaN).
# Floats are written plain: a dictionary of ~10^5 distinct times costs more than it saves, and
# byte-stream-split made the files larger (929 -> 1,398 KB). Readers scan every file against
# SCHEMA (_scan, scan_bytes), which turns ticks and float32 back into float64 milliseconds: the
# values read are those measured.
NARROWED = "samples_ms"
TICKS = "samples_32ns"
TICK_MS = 32e-6
_TICKS_TYPE = pa.list_(pa.int32())
_SCAN_SCHEMA = SCHEMA.append(pa.field(TICKS, _TICKS_TYPE))


def _as_ms(ticks: pa.Array) -> pa.Array:
    """Whole 32 ns ticks as the float64 of the float32 milliseconds the CUDA event reported."""
    ms = pc.multiply(ticks.cast(pa.float64()), TICK_MS)
    return ms.cast(pa.float32(), safe=False).cast(pa.float64())


def _as_ticks(samples: pa.ListArray) -> pa.ListArray | None:
    """`samples` (list<double>) as whole ticks, or None when one is not a tick or outside int32."""
    values = samples.values.to_numpy(zero_copy_only=False)
    if np.signbit(values).any():  # a negative time is kept as timed, -0.0 too (ticks have no -0)
        return None
    with np.errstate(invalid="ignore"):
        whole = np.rint(values / TICK_MS)
    if not (np.isfinite(whole).all() and (np.abs(whole) < 2**31).all()):
        return None
    ticks = pa.array(whole.astype(np.int32))
    if pc.all(pc.equal(_as_ms(ticks), samples.values)).as_py() is False:
        return None
    return pa.ListArray.from_arrays(samples.offsets, ticks, mask=samples.is_null())


def narrowed(table: pa.Table) -> pa.Table:
    """`table` with samples_ms as whole ticks (samples_32ns) when every sample is one, else as
    list<float32> when every sample is float32-exact, else as is."""
    i = table.schema.get_field_index(NARROWED)
    if i < 0:
        return table
    wide = table.column(i).combine_chunks()
    if wide.offset == 0:  # a slice's offsets would not start at 0: leave it to float32
        ticks = _as_ticks(wide)
        if ticks is not None:
            return table.set_column(i, pa.field(TICKS, _TICKS_TYPE), ticks)
    narrow = wide.cast(pa.list_(pa.float32()))
    same = pc.equal(pc.list_flatten(narrow).cast(pa.float64()), pc.list_flatten(wide))
    if pc.all(same).as_py() is False:  # None: no sample at all, which narrows as well
        return table
    return table.set_column(i, pa.field(NARROWED, narrow.type), narrow)


def widened(schema: pa.Schema) -> pa.Schema:
    """A row file's schema as readers see it: samples_ms narrowed on disk is SCHEMA's again."""
    for name in (NARROWED, TICKS):
        i = schema.get_field_index(name)
        if i >= 0:
            return schema.set(i, SCHEMA.field(NARROWED))
    return schema


def _from_ticks(table: pa.Table) -> pa.Table:
    """A scan against _SCAN_SCHEMA as SCHEMA's: rows whose samples were ticks get them back as
    milliseconds in samples_ms; the ticks column goes."""
    if TICKS not in table.column_names:
        return table
    ticks = table.column(TICKS).combine_chunks()
    table = table.drop_columns([TICKS])
    if ticks.null_count == len(ticks) or NARROWED not in table.column_names:
        return table
    ms = pa.ListArray.from_arrays(ticks.offsets, _as_ms(ticks.values), mask=ticks.is_null())
    i = table.schema.get_field_index(NARROWED)
    merged = pc.if_else(pc.is_valid(ticks), ms, table.column(i).combine_chunks())
    return table.set_column(i, SCHEMA.field(NARROWED), merged)


def _scan_columns(columns: list[str] | None) -> list[str]:
    """The columns to scan for `columns` (None: all), each once: the ticks beside samples_ms."""
    wanted = list(dict.fromkeys(SCHEMA.names if columns is None else columns))
    return [*wanted, TICKS] if NARROWED in wanted else wanted


def parquet_bytes(table: pa.Table, level: int | None = None) -> bytes:
    """`table` as zstd parquet bytes (pyarrow's default level when None), samples narrowed."""
    table = narrowed(table)
    sink = pa.BufferOutputStream()
    ticks = TICKS in table.column_names
    pq.write_table(
        table,
        sink,
        compression="zstd",
        compression_level=level,
        use_dictionary=[c for c in table.column_names if c not in (NARROWED, TICKS)],
        # a nested column's encoding is keyed by its leaf's path: by TICKS alone it is ignored
        column_encoding={f"{TICKS}.list.element": "DELTA_BINARY_PACKED"} if ticks else None,
    )
    return sink.getvalue().to_pybytes()


def _values(column: pa.ChunkedArray) -> tuple:
    """A column as comparable parts: its nulls and offsets, and its values with NaN as NaN."""
    array = column.combine_chunks()
    parts: list = [np.asarray(array.is_null())]
    if pa.types.is_list(array.type):
        parts.append(np.asarray(array.offsets))
        array = array.values
    if pa.types.is_floating(array.type):
        return (*parts, array.to_numpy(zero_copy_only=False))
    return (*parts, array.to_pylist())


def same_values(a: pa.Table, b: pa.Table) -> bool:
    """Whether two tables hold the same columns and values, NaN equal to NaN (Table.equals
    counts a NaN different from itself, so a run with one could never be rewritten)."""
    if a.schema.names != b.schema.names or a.num_rows != b.num_rows:
        return False
    for name in a.schema.names:
        x, y = _values(a.column(name)), _values(b.column(name))
        for p, q in zip(x, y, strict=True):
            if isinstance(p, np.ndarray) and p.dtype.kind == "f":
                if p.shape != q.shape or not np.array_equal(p, q, equal_nan=True):
                    return False
            elif isinstance(p, np.ndarray):
                if not np.array_equal(p, q):
                    return False
            elif p != q:
                return False
    return True


def scan_bytes(data: bytes) -> pa.Table:
    """Parquet bytes read as readers read a file: against SCHEMA, samples as float64
    milliseconds, columns the bytes predate null."""
    table = pq.read_table(pa.BufferReader(data))
    return _from_ticks(
        pa.Table.from_arrays(
            [
                table.column(f.name).cast(f.type)
                if f.name in table.column_names
                else pa.nulls(table.num_rows, f.type)
                for f in _SCAN_SCHEMA
            ],
            schema=_SCAN_SCHEMA,
        )
    )


def write_row(run_path: Path, row: dict) -> Path:
    """Write one point's row as <run>/rows/<point_key>.parquet, atomically."""
    unknown = set(row) - set(COLUMNS)
    if unknown:
        raise KeyError(f"row has columns outside the schema: {sorted(unknown)}")
    full = {c: [row.get(c)] for c in COLUMNS}
    full["schema_version"] = [SCHEMA_VERSION]
    table = pa.table(full, schema=SCHEMA)
    path = run_path / "rows" / f"{row['point_key']}.parquet"
    _atomic_write_bytes(path, parquet_bytes(table))
    return path


def _temporary_pid(path: Path) -> int | None:
    """The writer's pid in a temporary's name (.<name>.<pid>.<random>.tmp), or None (older)."""
    parts = path.name.split(".")
    return int(parts[-3]) if len(parts) >= 5 and parts[-3].isdigit() else None


def remove_stale_temporaries(run_path: Path, keys: Iterable[str] | None = None) -> int:
    """Delete row temporaries a killed writer left behind (only of these point keys, when given:
    another shard's writer may be mid-write on its own); returns how many. The caller holds the
    run's lock; a temporary whose writer still runs here is kept all the same (a started run
    once deleted another writer's in-flight file, and that writer died on its rename)."""
    from harness.children import pid_alive

    wanted = None if keys is None else set(keys)
    n = 0
    for p in (run_path / "rows").glob(".*.tmp"):
        if wanted is not None and p.name[1:].split(".parquet.")[0] not in wanted:
            continue
        pid = _temporary_pid(p)
        if pid is not None and pid != os.getpid() and pid_alive(pid):
            continue
        p.unlink(missing_ok=True)
        n += 1
    return n


UNREADABLE = "_unreadable"  # rows/_unreadable/: row files a resume could not read, kept


def unreadable_reason(path: Path) -> str | None:
    """Why a row file cannot be read, or None. Reads the parquet footer only (~0.35 ms a file):
    a torn or truncated file has lost its footer, which parquet writes last."""
    try:
        meta = pq.read_metadata(path)
    except (OSError, pa.ArrowException) as e:
        return _one_line(e)
    return None if meta.num_rows >= 1 else "no row in the file"


def set_aside_unreadable(run_path: Path) -> list[tuple[str, str, Path]]:
    """Move row files whose footer cannot be read into rows/_unreadable/ (never deleted; readers
    skip '_' folders), so a resume measures their points again. (point_key, why, new path) each."""
    rows = run_path / "rows"
    moved = []
    for path in sorted(rows.glob("*.parquet")) if rows.is_dir() else []:
        why = None if path.name.startswith((".", "_")) else unreadable_reason(path)
        if why is None:
            continue
        dest, n = rows / UNREADABLE / path.name, 0
        while dest.exists():  # the same point unreadable again: keep every copy
            n += 1
            dest = rows / UNREADABLE / f"{path.stem}.{n}{path.suffix}"
        dest.parent.mkdir(exist_ok=True)
        try:
            os.replace(path, dest)
        except FileNotFoundError:  # another shard of the run moved it first
            continue
        moved.append((path.stem, why, dest))
    return moved


COMPACTED = "rows.parquet"  # <run>/rows.parquet: a compacted run's rows, one file


def loose_keys(run_path: Path) -> set[str]:
    """Point keys of the row files in <run>/rows/ (a file's name is its point key)."""
    rows = Path(run_path) / "rows"
    if not rows.is_dir():
        return set()
    return {p.stem for p in rows.glob("*.parquet") if not p.name.startswith((".", "_"))}


def finished_keys(run_path: Path, statuses: Iterable[str] | None = None) -> set[str]:
    """Point keys that already have a row (optionally only rows with one of `statuses`). Without
    statuses it trusts file names (rows are written whole): a resume first calls
    set_aside_unreadable, so a torn file from elsewhere does not count as finished. A compacted
    run's keys come from its rows.parquet."""
    keys = loose_keys(run_path)
    compacted = Path(run_path) / COMPACTED
    if compacted.is_file():
        keys |= set(pq.read_table(compacted, columns=["point_key"]).column(0).to_pylist())
    if statuses is None or not keys:
        return keys
    df = read_rows(run_path, columns=["point_key", "status"])
    return set(df.loc[df["status"].isin(list(statuses)), "point_key"])


def written_since(run_path: Path, since: float) -> set[str]:
    """Point keys whose row file was written at or after `since` (epoch seconds)."""
    rows = run_path / "rows"
    found = set()
    for p in rows.glob("*.parquet") if rows.is_dir() else []:
        try:
            if not p.name.startswith((".", "_")) and p.stat().st_mtime >= since:
                found.add(p.stem)
        except FileNotFoundError:  # set aside meanwhile
            pass
    return found


def _one_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return (text[0] if text else type(e).__name__)[:160]


def _empty(columns: list[str] | None) -> pd.DataFrame:
    return pd.DataFrame({c: pd.Series(dtype=object) for c in (columns or COLUMNS)})


def _row_files(paths: Iterable[str | Path]) -> tuple[list[str], list[Path]]:
    """(row files in rows/ folders, compacted rows.parquet files) under run folders or folders
    holding run folders; a .parquet path given directly counts as a row file."""
    files: list[str] = []
    compacted: list[Path] = []
    for path in paths:
        p = Path(path)
        if p.is_file() and p.name == COMPACTED:
            compacted.append(p)
            continue
        if p.is_file() and p.suffix == ".parquet":
            files.append(str(p))
            continue
        for f in sorted(p.rglob("*.parquet")):
            hidden = any(part.startswith((".", "_")) for part in f.relative_to(p).parts)
            if hidden:
                continue
            if f.parent.name == "rows":  # side tables (crosscheck.parquet) have their own schema
                files.append(str(f))
            elif f.name == COMPACTED:
                compacted.append(f)
    return files, compacted


def _scan(files: list[str], columns: list[str] | None) -> pa.Table:
    """Every file read against the current SCHEMA: columns a file predates come back null,
    samples stored as ticks come back as milliseconds."""
    dataset = ds.dataset(files, schema=_SCAN_SCHEMA, format="parquet")
    table = _from_ticks(dataset.to_table(columns=_scan_columns(columns)))
    return table if columns is None else table.select(columns)


def _read_compacted(path: Path, columns: list[str] | None) -> pa.Table | None:
    """A compacted run's rows, less the points measured again since (their row file in rows/
    wins); None, with a warning, when the file cannot be read."""
    newer = loose_keys(path.parent)
    wanted = None if columns is None else list(dict.fromkeys([*columns, "point_key"]))
    try:
        table = _scan([str(path)], wanted)
    except (OSError, pa.ArrowException) as e:
        print(f"harness: warning: skipped unreadable {path} ({_one_line(e)})", file=sys.stderr)
        return None
    if newer:
        keep = pc.invert(pc.is_in(table["point_key"], pa.array(sorted(newer))))
        table = table.filter(keep)
    return table if columns is None else table.select(columns)


def read_table(*paths: str | Path, columns: list[str] | None = None) -> pa.Table:
    """Rows of one or more runs (run folders, or folders holding run folders) as one arrow table
    with the current SCHEMA: columns a file predates are null. An unreadable row file is skipped
    with a warning on stderr naming it."""
    unknown = set(columns or ()) - set(COLUMNS)
    if unknown:  # found here, or the fallback below would blame every file for it
        raise KeyError(f"columns outside the schema: {sorted(unknown)}")
    files, compacted = _row_files(paths)
    tables = [t for t in (_read_compacted(c, columns) for c in compacted) if t is not None]
    try:  # one scan of every file; only when one cannot be read are they read one by one
        tables += [_scan(files, columns)] if files else []
    except (OSError, pa.ArrowException):
        for f in files:
            try:
                tables.append(_scan([f], columns))
            except (OSError, pa.ArrowException) as e:
                print(
                    f"harness: warning: skipped unreadable row file {f} ({_one_line(e)})",
                    file=sys.stderr,
                )
    if not tables:
        return SCHEMA.empty_table() if columns is None else SCHEMA.empty_table().select(columns)
    return pa.concat_tables(tables)


def read_rows(*paths: str | Path, columns: list[str] | None = None) -> pd.DataFrame:
    """read_table as a pandas frame (an empty frame of object columns when there are no rows).
    Files of every schema version read together: each is read as SCHEMA, columns it predates
    null (no column was ever removed or retyped, so none of a file's own columns is lost)."""
    table = read_table(*paths, columns=columns)
    return table.to_pandas() if table.num_rows else _empty(columns)


def write_run_meta(
    run_path: Path, config_yaml: str, meta: dict, meta_name: str = "run.json"
) -> None:
    write_text(run_path / "config.yaml", config_yaml)
    write_text(run_path / meta_name, json.dumps(meta, indent=2, sort_keys=True, default=str))


def read_run_records(*paths: str | Path) -> list[dict]:
    """The run records (run.json, run-shard-<i>.json, run-host-<i>.json) of every run under
    `paths` (run folders or folders holding them), those that parse; hidden and underscore
    folders skipped as read_rows skips them. Reports read a run's sweep name from them."""
    out = []
    for path in paths:
        p = Path(path)
        root = p.parent if p.is_file() else p
        for f in sorted(root.rglob("run*.json")):
            if any(part.startswith((".", "_")) for part in f.relative_to(root).parts):
                continue
            try:
                record = json.loads(f.read_text())
            except (OSError, ValueError):
                continue  # written atomically: only a hand-edited file can be torn
            if isinstance(record, dict):
                out.append(record)
    return out


CROSSCHECK = "crosscheck"


def write_crosscheck(run_path: Path, table: pd.DataFrame, markdown: str) -> Path:
    """`harness crosscheck`'s table of a run as crosscheck.parquet (one row per point, its own
    columns: not rows, so read_rows never sees it) and crosscheck.md, each atomically."""
    sink = pa.BufferOutputStream()
    pq.write_table(pa.Table.from_pandas(table, preserve_index=False), sink, compression="zstd")
    path = run_path / f"{CROSSCHECK}.parquet"
    _atomic_write_bytes(path, sink.getvalue().to_pybytes())
    write_text(run_path / f"{CROSSCHECK}.md", markdown)
    return path


def read_crosscheck(run_path: str | Path) -> pd.DataFrame:
    """The crosscheck table of a run (written by write_crosscheck)."""
    return pq.read_table(Path(run_path) / f"{CROSSCHECK}.parquet").to_pandas()
