"""Store: schema, required columns, atomic files, readers that ignore temporaries."""

import os
import subprocess
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from harness import compact, store

REQUIRED = (
    "run_id point_key op provider family status reason dtype m n k batch q_heads kv_heads q_len "
    "kv_len head_dim causal latency_ms_median latency_ms_p10 latency_ms_p90 n_samples samples_ms "
    "tflops gbps rel_err timer l2 fill sm_clock_mhz power_w temp_c device_name device_vendor "
    "device_uuid git_sha torch_version triton_version timestamp"
).split()


def test_schema_has_every_required_column():
    missing = [c for c in REQUIRED if c not in store.COLUMNS]
    assert not missing


def _row(key, **kw):
    return {
        "run_id": "r",
        "point_key": key,
        "op": "gemm",
        "provider": "p",
        "family": "own",
        "status": "ok",
        "m": 1,
        "samples_ms": [1.0, 2.0],
        "latency_ms_median": 1.5,
        **kw,
    }


def test_roundtrip_and_schema_version(tmp_path):
    store.write_row(tmp_path, _row("a"))
    store.write_row(tmp_path, _row("b", status="wrong", latency_ms_median=None, samples_ms=None))
    df = store.read_rows(tmp_path)
    assert sorted(df.point_key) == ["a", "b"]
    assert (df.schema_version == store.SCHEMA_VERSION).all()
    assert list(df.set_index("point_key").loc["a", "samples_ms"]) == [1.0, 2.0]
    assert store.widened(pq.read_schema(tmp_path / "rows" / "a.parquet")).equals(store.SCHEMA)


def test_unknown_column_rejected(tmp_path):
    with pytest.raises(KeyError, match="outside the schema"):
        store.write_row(tmp_path, _row("a", bogus=1))


def test_temporaries_are_invisible_and_cleaned(tmp_path):
    store.write_row(tmp_path, _row("a"))
    junk = tmp_path / "rows" / ".b.parquet.123.tmp"
    junk.write_bytes(b"half a parq")
    assert store.finished_keys(tmp_path) == {"a"}
    assert len(store.read_rows(tmp_path)) == 1
    assert store.remove_stale_temporaries(tmp_path) == 1 and not junk.exists()


def test_finished_keys_by_status(tmp_path):
    store.write_row(tmp_path, _row("a"))
    store.write_row(tmp_path, _row("b", status="error"))
    assert store.finished_keys(tmp_path, ("ok",)) == {"a"}


def test_read_many_runs(tmp_path):
    store.write_row(tmp_path / "r1", _row("a"))
    store.write_row(tmp_path / "r2", _row("b"))
    assert len(store.read_rows(tmp_path)) == 2
    assert store.read_rows(tmp_path / "none").empty


def test_rows_get_the_umask_mode_not_mkstemps_0600(tmp_path):
    import os

    old = os.umask(0o022)
    try:
        path = store.write_row(tmp_path, _row("a"))
    finally:
        os.umask(old)
    assert path.stat().st_mode & 0o777 == 0o644


def _tear(tmp_path):
    """A run with a good row 'a', a truncated row 'b' (half its bytes), garbage 'c', empty 'd'."""
    store.write_row(tmp_path, _row("a"))
    b = store.write_row(tmp_path, _row("b", status="error"))
    b.write_bytes(b.read_bytes()[: b.stat().st_size // 2])
    (tmp_path / "rows" / "c.parquet").write_bytes(b"not a parquet file at all")
    (tmp_path / "rows" / "d.parquet").write_bytes(b"")


def test_read_rows_skips_unreadable_files_with_a_warning(tmp_path, capsys):
    _tear(tmp_path)
    df = store.read_rows(tmp_path)
    assert list(df.point_key) == ["a"] and len(df.columns) == len(store.COLUMNS)
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 3 and all(e.startswith("harness: warning: skipped unreadable") for e in err)
    assert {e.split("row file ")[1].split(" ")[0].rsplit("/", 1)[1] for e in err} == {
        "b.parquet",
        "c.parquet",
        "d.parquet",
    }
    assert list(store.read_rows(tmp_path, columns=["point_key"]).columns) == ["point_key"]
    assert store.finished_keys(tmp_path, ("ok", "error")) == {"a"}  # rerun_failed's question


def test_read_rows_all_unreadable_is_empty_and_bad_columns_raise(tmp_path):
    (tmp_path / "rows").mkdir()
    (tmp_path / "rows" / "x.parquet").write_bytes(b"PAR1")
    assert store.read_rows(tmp_path, columns=["point_key", "status"]).empty
    with pytest.raises(KeyError, match="outside the schema"):
        store.read_rows(tmp_path, columns=["bogus"])


def test_set_aside_moves_unreadable_files_never_deletes(tmp_path):
    _tear(tmp_path)
    torn = (tmp_path / "rows" / "b.parquet").read_bytes()
    moved = store.set_aside_unreadable(tmp_path)
    assert [k for k, _, _ in moved] == ["b", "c", "d"]
    assert all(why for _, why, _ in moved)
    aside = tmp_path / "rows" / store.UNREADABLE
    assert (aside / "b.parquet").read_bytes() == torn
    assert store.finished_keys(tmp_path) == {"a"} and len(store.read_rows(tmp_path)) == 1
    assert store.set_aside_unreadable(tmp_path) == []  # the good row stays
    (tmp_path / "rows" / "c.parquet").write_bytes(b"torn again")  # a second copy is kept too
    (key, _, path), *_ = store.set_aside_unreadable(tmp_path)
    assert key == "c" and path == aside / "c.1.parquet" and (aside / "c.parquet").exists()


def test_temporaries_name_their_writer(tmp_path, monkeypatch):
    seen = []
    real = os.replace
    monkeypatch.setattr(store.os, "replace", lambda a, b: (seen.append(a), real(a, b)))
    store.write_row(tmp_path, _row("a"))
    assert Path(seen[0]).name.startswith(f".a.parquet.{os.getpid()}.")


def test_cleanup_spares_live_writers_and_other_points(tmp_path):
    """A starting run deletes only dead writers' temporaries of its own points (it once deleted
    another writer's in-flight file, and that writer died on its rename)."""
    rows = tmp_path / "rows"
    rows.mkdir()
    gone = subprocess.Popen(["true"])
    gone.wait()
    live = subprocess.Popen(["sleep", "60"])
    try:
        names = [
            f".a.parquet.{gone.pid}.k3j2h1g0.tmp",  # a dead writer's: deleted
            ".a.parquet.k3j2h1g0.tmp",  # no pid (an older harness): deleted
            f".a.parquet.{live.pid}.x9y8z7w6.tmp",  # a live writer's: kept
            f".b.parquet.{gone.pid}.k3j2h1g0.tmp",  # another shard's point: kept
        ]
        for name in names:
            (rows / name).write_bytes(b"half")
        assert store.remove_stale_temporaries(tmp_path, keys=["a"]) == 2
        assert sorted(p.name for p in rows.iterdir()) == sorted(names[2:])
    finally:
        live.kill()
        live.wait()


def test_cuda_event_samples_are_whole_ticks_on_disk_and_float64_ms_to_readers(tmp_path):
    """CUDA events count whole 32 ns ticks and report them as float32 milliseconds: stored as
    int32 ticks under a name that says so (a reader that does not know the store cannot take
    them for milliseconds), read back as the float64 of the same float32, bit for bit."""
    import numpy as np

    exact = [float(np.float32(k * 32e-6)) for k in (894, 850, 356581, 2**20 + 1)]
    path = store.write_row(tmp_path, _row("a", samples_ms=exact))
    on_disk = pq.read_table(path)
    assert "samples_ms" not in on_disk.column_names
    assert on_disk.schema.field(store.TICKS).type == pa.list_(pa.int32())
    assert on_disk.column(store.TICKS).to_pylist() == [[894, 850, 356581, 2**20 + 1]]
    assert store.widened(on_disk.schema).equals(store.SCHEMA)
    meta = pq.ParquetFile(path).metadata.row_group(0)
    leaf = next(
        meta.column(i)
        for i in range(meta.num_columns)
        if meta.column(i).path_in_schema.startswith(store.TICKS)
    )
    assert "DELTA_BINARY_PACKED" in leaf.encodings  # a nested column's key is its leaf's path
    back = store.read_rows(tmp_path).set_index("point_key").loc["a", "samples_ms"]
    assert back.dtype == np.float64 and list(back) == exact


def test_float32_exact_samples_off_the_tick_are_float32_on_disk(tmp_path):
    """A float32 timer off the 32 ns grid (another vendor's events) stays float32, read wide."""
    import numpy as np

    exact = [float(np.float32(x)) for x in (0.10001, 0.0123457)]
    path = store.write_row(tmp_path, _row("a", samples_ms=exact))
    assert pq.read_schema(path).field("samples_ms").type.value_type == pa.float32()
    back = store.read_rows(tmp_path).set_index("point_key").loc["a", "samples_ms"]
    assert back.dtype == np.float64 and list(back) == exact


def test_ticks_beyond_int32_or_negative_zero_keep_float(tmp_path):
    """Samples int32 cannot count (past 2**31 ticks, about 69 s) stay float; so does -0.0,
    which ticks would turn into +0.0."""
    import numpy as np

    for key, samples in (("big", [100_000.0]), ("signed", [-0.0, 0.0625])):
        path = store.write_row(tmp_path, _row(key, samples_ms=samples))
        assert pq.read_schema(path).field("samples_ms").type.value_type == pa.float32()
        back = store.read_rows(path).loc[0, "samples_ms"]
        assert list(back) == samples and np.signbit(back[0]) == np.signbit(samples[0])


def test_files_of_each_encoding_read_together(tmp_path):
    """One scan over row files of ticks, float32, float64 and no samples, and a compacted
    file beside them: every row's samples come back as written, whichever columns are asked."""
    import numpy as np

    rows = {
        "ticks": [float(np.float32(k * 32e-6)) for k in (3, 5)],
        "f32": [float(np.float32(0.10001))],  # off the 32 ns grid: float32 on disk
        "f64": [0.1, 1 / 3],
        "none": None,
    }
    for key, samples in rows.items():
        store.write_row(tmp_path / "loose", _row(key, samples_ms=samples))
    for key, samples in rows.items():
        store.write_row(tmp_path / "packed", _row(key, samples_ms=samples))
    compact.compact_run(tmp_path / "packed")
    for run in ("loose", "packed"):
        df = store.read_rows(tmp_path / run).set_index("point_key")
        for key, samples in rows.items():
            got = df.loc[key, "samples_ms"]
            assert (got is None) if samples is None else list(got) == samples
        only = store.read_rows(tmp_path / run, columns=["point_key", "samples_ms"])
        assert list(only.columns) == ["point_key", "samples_ms"]
        assert list(only.set_index("point_key").loc["ticks", "samples_ms"]) == rows["ticks"]
        assert list(store.read_rows(tmp_path / run, columns=["m"]).columns) == ["m"]
        twice = store.read_rows(tmp_path / run, columns=["point_key", "samples_ms", "samples_ms"])
        assert len(twice) == len(rows) and list(twice.columns) == ["point_key", *["samples_ms"] * 2]


def test_samples_that_float32_would_round_stay_float64(tmp_path):
    """A timer whose samples are not float32 values (the CPU's perf_counter) loses nothing."""
    path = store.write_row(tmp_path, _row("a", samples_ms=[0.1, 1 / 3]))
    assert pq.read_schema(path).field("samples_ms").type.value_type == pa.float64()
    assert list(store.read_rows(tmp_path).loc[0, "samples_ms"]) == [0.1, 1 / 3]


def test_a_row_without_samples_is_written_and_read(tmp_path):
    path = store.write_row(tmp_path, _row("a", samples_ms=None))
    assert store.widened(pq.read_schema(path)).equals(store.SCHEMA)
    assert store.read_rows(tmp_path).loc[0, "samples_ms"] is None


def test_same_values_counts_nan_equal_to_nan_and_sees_any_other_difference():
    """The check a rewrite of a committed run must pass: NaN equals NaN (Table.equals says
    otherwise), while a changed sample, a null for a value or another list length differs."""
    nan = float("nan")

    def table(rse, samples):
        return pa.table({"latency_rse": rse, "samples_ms": samples})

    a = table([nan, 1.0], [[1.0, nan], None])
    assert not a.equals(table([nan, 1.0], [[1.0, nan], None]))
    assert store.same_values(a, table([nan, 1.0], [[1.0, nan], None]))
    assert not store.same_values(a, table([nan, 1.5], [[1.0, nan], None]))
    assert not store.same_values(a, table([nan, 1.0], [[1.0, 2.0], None]))
    assert not store.same_values(a, table([nan, 1.0], [[1.0, nan], []]))
    assert not store.same_values(a, table([nan, 1.0], [[1.0], [nan]]))
    assert not store.same_values(a, table([None, 1.0], [[1.0, nan], None]))


def test_samples_are_written_plain_not_as_a_dictionary(tmp_path):
    """A dictionary of distinct times costs more than it saves (store.parquet_bytes)."""
    import numpy as np

    exact = [float(np.float32(0.01 * i)) for i in range(1, 50)]
    path = store.write_row(tmp_path, _row("a", samples_ms=exact))
    meta = pq.read_metadata(path)
    paths = [meta.schema.column(j).path for j in range(meta.num_columns)]
    encodings = meta.row_group(0).column(paths.index("samples_ms.list.element")).encodings
    assert "PLAIN" in encodings and not any("DICTIONARY" in e for e in encodings)
