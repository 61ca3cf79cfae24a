"""Reading results: every committed run reads whole through store.read_rows and through each
```python snippet of README.md (pandas, duckdb, polars), on the committed (compacted) tree plus
uncompacted row files of every older column set, so the snippets must take the union."""

import importlib.util
import os
import re
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from harness import schema_history, store

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "results"
# Committed runs only: results/_scratch (git-ignored: a lent call's working copy, partly
# compacted) is not one; results/<gpu>/_process_spread and the like are.
SCRATCH = RESULTS / "_scratch"
RUNS = sorted(f.parent for f in RESULTS.rglob(store.COMPACTED) if SCRATCH not in f.parents)


def python_blocks() -> list[str]:
    """The ```python blocks of README.md, as written."""
    return re.findall(r"^```python\n(.*?)^```$", (REPO / "README.md").read_text(), re.M | re.S)


def _reader(code: str) -> str:
    return next(name for name in ("read_rows", "duckdb", "polars", "pandas") if name in code)


def _hidden(path: Path, root: Path) -> bool:
    return any(p.startswith("_") for p in path.relative_to(root).parts)


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> Path:
    """results/: the committed runs (copied) and a run of loose row files, one per recorded
    column set, each holding only that set's columns (as an uncompacted older run does)."""
    root = tmp_path_factory.mktemp("tree")
    shutil.copytree(RESULTS, root / "results", ignore=shutil.ignore_patterns("*.md", "*.txt"))
    source = store.read_table(RESULTS / "h200" / "gemm_llama-s61").slice(0, 1).to_pylist()[0]
    rows = root / "results" / "older" / "mixed" / "rows"
    rows.mkdir(parents=True)
    for entry in schema_history.HISTORY:
        names = schema_history.columns(entry.label)
        row = {**source, "schema_version": entry.version, "point_key": f"set-{entry.label}"}
        schema = pa.schema([store.SCHEMA.field(n) for n in names])
        pq.write_table(
            pa.table({n: [row[n]] for n in names}, schema=schema),
            rows / f"set-{entry.label}.parquet",
        )
    return root


def _expected_keys(root: Path, skip_hidden: bool) -> list[str]:
    keys = []
    for f in schema_history.row_files(root / "results"):
        if skip_hidden and _hidden(f, root / "results"):
            continue
        if f.name == store.COMPACTED:
            keys += pq.read_table(f, columns=["point_key"]).column(0).to_pylist()
        else:
            keys.append(f.stem)
    return sorted(keys)


@pytest.mark.parametrize("run", RUNS, ids=lambda r: str(r.relative_to(RESULTS)))
def test_read_rows_reads_every_committed_run(run):
    table = pq.read_table(run / store.COMPACTED)
    df = store.read_rows(run)
    assert len(df) == table.num_rows == df.point_key.nunique()
    assert list(df.columns) == store.COLUMNS
    assert set(df.schema_version) <= set(range(1, store.SCHEMA_VERSION + 1))


def test_readme_shows_each_reader():
    readers = sorted(map(_reader, python_blocks()))
    assert readers == ["duckdb", "pandas", "polars", "read_rows"]
    text = "\n".join(python_blocks())
    assert "union_by_name=True" in text and 'how="diagonal_relaxed"' in text


@pytest.mark.slow
@pytest.mark.parametrize("code", python_blocks(), ids=_reader)
def test_readme_snippet_reads_every_run(code, tree, monkeypatch):
    for module in ("duckdb", "polars"):
        if f"import {module}" in code and importlib.util.find_spec(module) is None:
            missing = pytest.fail if os.environ.get("CI") else pytest.skip
            missing(f"{module} is not installed: pip install -e '.[test]'")
    monkeypatch.chdir(tree)  # the snippets name paths from the repository root
    namespace: dict = {}
    exec(code, namespace)
    rows = namespace["rows"]
    keys = _expected_keys(tree, skip_hidden=_reader(code) == "read_rows")
    assert len(rows) == len(keys)
    assert sorted(rows.columns) == sorted(store.COLUMNS)  # the union, not one file's columns
    assert sorted(rows["point_key"].to_list()) == keys
    # committed rows (versions 1 and 2) and one file of every recorded column set
    assert set(rows["schema_version"].to_list()) == {c.version for c in schema_history.HISTORY}
    _assert_same_samples(rows, tree)


def _samples(frame) -> dict:
    """(run_id, point_key) -> samples as a float64 array, or None."""
    if not isinstance(frame, pd.DataFrame):
        frame = frame.to_pandas()
    out = {}
    for run, key, samples in zip(frame.run_id, frame.point_key, frame.samples_ms, strict=True):
        whole = isinstance(samples, list | np.ndarray)  # a null list is None, NaN or pd.NA
        out[run, key] = np.asarray(samples, dtype=np.float64) if whole else None
    return out


def _assert_same_samples(rows, root: Path) -> None:
    """Every sample a plain reader gives is the harness's, bit for bit: the ticks of a file
    stored as whole 32 ns ticks came back as the store's milliseconds."""
    mine, theirs = _samples(store.read_rows(root / "results")), _samples(rows)
    assert mine.keys() <= theirs.keys()
    ticks = 0
    for key, want in mine.items():
        got = theirs[key]
        assert (got is None) == (want is None), key
        if want is not None:
            assert got.tobytes() == want.tobytes(), key
            ticks += len(want)
    assert ticks > 10**6


def test_plain_folder_readers_keep_one_files_columns(tmp_path):
    """Why the README points readers at row files and asks for the union of columns."""
    names = schema_history.columns("1.0")  # 80 columns
    (tmp_path / "rows").mkdir()
    old = pa.table(
        {n: [None] for n in names}, schema=pa.schema([store.SCHEMA.field(n) for n in names])
    )
    pq.write_table(old, tmp_path / "rows" / "a.parquet")
    store.write_row(tmp_path, {"run_id": "x", "point_key": "b", "op": "gemm"})
    (tmp_path / "config.yaml").write_text("run_id: x\n")
    with pytest.raises(Exception, match="config.yaml"):
        pd.read_parquet(tmp_path)
    assert pd.read_parquet(tmp_path / "rows").shape == (2, 80)  # the first file's columns
    assert store.read_rows(tmp_path).shape == (2, len(store.COLUMNS))


def _encoding_of_samples(path: Path) -> tuple[str, tuple[str, ...]]:
    """(the samples' column on disk and its value type, the encodings of its values)."""
    meta = pq.ParquetFile(path).metadata.row_group(0)
    for i in range(meta.num_columns):
        column = meta.column(i)
        if column.path_in_schema.split(".")[0] in (store.TICKS, "samples_ms"):
            return column.path_in_schema.split(".")[0], tuple(column.encodings)
    return "", ()


def test_committed_runs_keep_samples_the_smallest_way_the_store_knows():
    """Each committed run's samples are whole ticks, delta-encoded, wherever every one of them
    is (as CUDA events make them), so that results/ stays small enough to travel with a lent
    GPU call: a pyarrow that ignored the encoding, or a run compacted by an older harness,
    fails here rather than growing the tree unnoticed."""
    ticks = 0
    for run in RUNS:
        path = run / store.COMPACTED
        stored, encodings = _encoding_of_samples(path)
        could = store.TICKS in store.narrowed(store.read_table(run)).column_names
        assert (stored == store.TICKS) == could, run
        if could:
            assert "DELTA_BINARY_PACKED" in encodings, run
            ticks += 1
    assert ticks >= len(RUNS) - 5
