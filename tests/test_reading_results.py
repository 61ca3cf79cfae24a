"""Reading results: every committed run reads whole, with the union of its column sets, through
store.read_rows and through each ```python snippet of README.md (pandas, duckdb, polars)."""

import importlib.util
import os
import re
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

from harness import schema_history, store

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "results"
ROW_FILES = schema_history.row_files(RESULTS)  # superseded runs (`_` folders) included
RUNS = sorted({f.parent.parent for f in ROW_FILES})
# store.read_rows skips folders whose name starts with "_" below the path it is given.
READ_ROWS_FILES = [
    f for f in ROW_FILES if not any(p.startswith("_") for p in f.relative_to(RESULTS).parts)
]


def python_blocks() -> list[str]:
    """The ```python blocks of README.md, as written."""
    return re.findall(r"^```python\n(.*?)^```$", (REPO / "README.md").read_text(), re.M | re.S)


def _reader(code: str) -> str:
    return next(name for name in ("read_rows", "duckdb", "polars", "pandas") if name in code)


def _same(a, b) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return a is not None and b is not None and np.array_equal(a, b)
    return (pd.isna(a) and pd.isna(b)) or a == b


def test_the_committed_tree_has_runs_of_several_column_sets():
    assert len(RUNS) >= 20 and len(ROW_FILES) > 1000
    sets = {len(pq.read_schema(sorted((r / "rows").glob("*.parquet"))[0])) for r in RUNS}
    assert {80, 98, 99, 103, len(store.COLUMNS)} <= sets


@pytest.mark.parametrize("run", RUNS, ids=lambda r: str(r.relative_to(RESULTS)))
def test_read_rows_reads_every_committed_run(run):
    files = sorted((run / "rows").glob("*.parquet"))
    df = store.read_rows(run)
    assert len(df) == len(files)
    assert sorted(df.point_key) == sorted(f.stem for f in files)
    assert list(df.columns) == store.COLUMNS
    own = pq.read_schema(files[0]).names
    assert df[[c for c in store.COLUMNS if c not in own]].isna().all().all()  # predated: null
    expect = pq.read_table(files[0]).to_pandas().iloc[0]  # the file as written, read alone
    got = df.set_index("point_key").loc[files[0].stem]
    differ = [c for c in own if c != "point_key" and not _same(expect[c], got[c])]
    assert not differ, f"{files[0]}: read_rows changed {differ}"


def test_readme_shows_each_reader():
    readers = sorted(map(_reader, python_blocks()))
    assert readers == ["duckdb", "pandas", "polars", "read_rows"]
    text = "\n".join(python_blocks())
    assert "union_by_name = true" in text and 'how="diagonal_relaxed"' in text


@pytest.mark.slow
@pytest.mark.parametrize("code", python_blocks(), ids=_reader)
def test_readme_snippet_reads_every_committed_run(code, monkeypatch):
    for module in ("duckdb", "polars"):
        if f"import {module}" in code and importlib.util.find_spec(module) is None:
            missing = pytest.fail if os.environ.get("CI") else pytest.skip
            missing(f"{module} is not installed: pip install -e '.[test]'")
    monkeypatch.chdir(REPO)  # the snippets name paths from the repository root
    namespace: dict = {}
    exec(code, namespace)
    rows = namespace["rows"]
    files = READ_ROWS_FILES if _reader(code) == "read_rows" else ROW_FILES
    assert len(rows) == len(files)
    assert sorted(rows.columns) == sorted(store.COLUMNS)  # the union, not one file's columns
    assert sorted(rows["point_key"].to_list()) == sorted(f.stem for f in files)
    versions = set(rows["schema_version"].to_list())
    assert versions == {1, store.SCHEMA_VERSION}


def test_plain_folder_readers_keep_one_files_columns(tmp_path):
    """Why the README points readers at rows/ and asks for the union of columns."""
    old = sorted(RESULTS.glob("h200/_superseded/warmup-30ms/*/rows/*.parquet"))[0]  # 80 columns
    new = sorted(RESULTS.glob("h200/timer_check/aa-a/rows/*.parquet"))[0]
    (tmp_path / "rows").mkdir()
    shutil.copy(old, tmp_path / "rows" / "a.parquet")
    shutil.copy(new, tmp_path / "rows" / "b.parquet")
    (tmp_path / "config.yaml").write_text("run_id: x\n")
    with pytest.raises(Exception, match="config.yaml"):
        pd.read_parquet(tmp_path)
    assert pd.read_parquet(tmp_path / "rows").shape == (2, 80)  # the first file's columns
    assert store.read_rows(tmp_path).shape == (2, len(store.COLUMNS))
