"""Schema history: store.SCHEMA cannot change without a version bump and a history entry, and every
committed row file's column set is a recorded one."""

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from harness import schema_history, store

RESULTS = Path(__file__).resolve().parents[1] / "results"


def test_store_schema_is_the_last_history_entry():
    assert schema_history.problem(store.SCHEMA, store.SCHEMA_VERSION) is None, (
        schema_history.problem(store.SCHEMA, store.SCHEMA_VERSION)
    )
    last = schema_history.HISTORY[-1]
    assert schema_history.label(store.SCHEMA) == last.label == str(store.SCHEMA_VERSION)
    assert sorted(schema_history.columns(last.label)) == sorted(store.COLUMNS)


def test_a_column_change_without_bump_or_entry_is_named():
    grown = store.SCHEMA.append(pa.field("new_column_ms", pa.float64()))
    v = store.SCHEMA_VERSION
    assert "without a version bump" in schema_history.problem(grown, v)
    assert f"set SCHEMA_VERSION = {v + 1}" in schema_history.problem(grown, v)
    assert "HISTORY has no entry" in schema_history.problem(grown, v + 1)
    retyped = store.SCHEMA.set(store.SCHEMA.get_field_index("m"), pa.field("m", pa.float64()))
    assert "without a version bump" in schema_history.problem(retyped, v)
    assert "says" in schema_history.problem(store.SCHEMA, v + 1)


def test_fingerprint_ignores_order_and_list_item_names():
    reordered = pa.schema(list(reversed(store.SCHEMA)))
    assert schema_history.fingerprint(reordered) == schema_history.fingerprint(store.SCHEMA)
    as_read = store.SCHEMA.set(  # parquet names a list's element "element", arrow "item"
        store.SCHEMA.get_field_index("samples_ms"),
        pa.field("samples_ms", pa.list_(pa.field("element", pa.float64()))),
    )
    assert schema_history.label(as_read) == str(store.SCHEMA_VERSION)
    assert schema_history.label(pa.schema([("m", pa.int64())])) is None


def test_history_is_well_formed():
    history = schema_history.HISTORY
    assert len({c.fingerprint for c in history}) == len({c.label for c in history}) == len(history)
    versions = [c.version for c in history]
    assert versions == sorted(versions)
    # From 2 on each version is one column set, labelled by its number.
    assert all(c.label == str(c.version) for c in history if c.version >= 2)
    assert len({v for v in versions if v >= 2}) == len([v for v in versions if v >= 2])
    for c in history:
        assert len(schema_history.columns(c.label)) == c.n_columns, c.label
        assert c.added and c.note
    with pytest.raises(KeyError, match="allowed"):
        schema_history.columns("9.9")


def test_every_written_row_has_the_current_label(tmp_path):
    path = store.write_row(tmp_path, {"run_id": "r", "point_key": "a", "op": "gemm"})
    schema = pq.read_schema(path)
    assert schema_history.label(schema) == schema_history.HISTORY[-1].label
    v = store.SCHEMA_VERSION
    assert schema_history.survey(tmp_path) == {(str(v), len(store.COLUMNS), v): 1}


def test_samples_stored_as_ticks_or_float32_keep_the_current_label(tmp_path):
    """The store's encodings of samples_ms (whole 32 ns ticks, float32) are one column set."""
    event = float(np.float32(0.064))  # 2,000 ticks as the CUDA event reports them
    ticks = store.write_row(tmp_path, {"run_id": "r", "point_key": "t", "samples_ms": [event]})
    narrow = store.write_row(tmp_path, {"run_id": "r", "point_key": "f", "samples_ms": [0.0625]})
    assert store.TICKS in pq.read_schema(ticks).names
    assert pq.read_schema(narrow).field("samples_ms").type.value_type == pa.float32()
    for path in (ticks, narrow):
        assert schema_history.label(pq.read_schema(path)) == schema_history.HISTORY[-1].label


def test_every_committed_row_file_has_a_recorded_column_set():
    """The committed runs are compacted: each file carries a recorded column set (the last) and
    its rows keep the version they were measured under (1 and 2 today: version 3 added a column
    only decoder_layer rows fill, none of them committed yet)."""
    survey = schema_history.survey(RESULTS)
    unrecorded = [key for key in survey if key[0].startswith("unrecorded")]
    assert not unrecorded, f"row files of a column set not in HISTORY: {unrecorded}"
    versions = {version for _, _, version in survey}
    assert 1 in versions and versions <= set(range(1, store.SCHEMA_VERSION + 1))
    assert sum(survey.values()) > 1000


@pytest.mark.parametrize("entry", schema_history.HISTORY, ids=lambda c: c.label)
def test_a_file_of_each_historical_set_is_recognised_and_read(entry, tmp_path):
    """A row file written with any recorded column set (as uncompacted runs elsewhere still
    are) gets its label back and reads whole through store.read_rows."""
    names = schema_history.columns(entry.label)
    schema = pa.schema([store.SCHEMA.field(n) for n in names])
    row = {"schema_version": entry.version, "run_id": "r", "point_key": "p", "op": "gemm"}
    path = tmp_path / "r" / "rows" / "p.parquet"
    path.parent.mkdir(parents=True)
    pq.write_table(pa.table({n: [row.get(n)] for n in names}, schema=schema), path)
    assert schema_history.label(pq.read_schema(path)) == entry.label
    df = store.read_rows(tmp_path / "r")
    assert list(df.columns) == store.COLUMNS and df.point_key.tolist() == ["p"]
    assert df.schema_version.tolist() == [entry.version]


def test_survey_command(capsys, tmp_path):
    store.write_row(tmp_path / "run", {"run_id": "run", "point_key": "a", "op": "gemm"})
    assert schema_history.main([str(tmp_path)]) == 0
    v, n = str(store.SCHEMA_VERSION), str(len(store.COLUMNS))
    assert capsys.readouterr().out.splitlines()[1].split() == [v, n, v, "1"]  # label, n, v, rows
    assert schema_history.main([str(tmp_path / "none")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("harness: error: paths: ")
