"""`harness compact`: one parquet per run holding exactly the rows the row files held; readers,
resume and a later compaction use it."""

import shutil

import pandas as pd
import pyarrow.parquet as pq
import pytest

from harness import store
from harness.cli import main
from harness.compact import compact_run

FAST = ["run", "sweep=smoke", "device=cpu", "providers=[torch-cpu,sdpa-math]", "progress=false"]
KEY = ["point_key"]


@pytest.fixture(scope="module")
def measured(tmp_path_factory):
    """One small run, measured once for the module (a sweep costs seconds on CI's CPUs)."""
    results = tmp_path_factory.mktemp("measured")
    assert main([*FAST, f"results_dir={results}", "run_id=r"]) == 0
    return results / "r"


@pytest.fixture
def run(measured, tmp_path):
    """A fresh copy of that run for each test, which compacts or measures into it."""
    shutil.copytree(measured, tmp_path / "r")
    return tmp_path / "r"


def _sorted(df: pd.DataFrame) -> pd.DataFrame:
    return df.sort_values(KEY).reset_index(drop=True)


def test_compact_keeps_every_row_and_value(run, capsys):
    before = store.read_rows(run)
    files = len(list((run / "rows").glob("*.parquet")))
    assert main(["compact", str(run.parent)]) == 0
    assert f"{len(before)} rows, {files} row files" in capsys.readouterr().out
    assert not (run / "rows").exists()  # every row file folded in, then deleted
    assert store.widened(pq.read_schema(run / store.COMPACTED)).equals(store.SCHEMA)
    pd.testing.assert_frame_equal(_sorted(store.read_rows(run)), _sorted(before))
    assert store.finished_keys(run) == set(before.point_key)


def test_resume_of_a_compacted_run_measures_nothing(run, capsys):
    compact_run(run)
    capsys.readouterr()
    assert main([*FAST, f"results_dir={run.parent}", "run_id=r"]) == 0
    assert "already done, 0 measured now" in capsys.readouterr().out


def test_a_row_measured_after_compaction_wins_and_folds_in(run):
    compact_run(run)
    df = store.read_rows(run)
    again = store.read_table(run).slice(0, 1).to_pylist()[0]
    again.update(status="error", reason="measured again after compaction")
    store.write_row(run, again)
    read = store.read_rows(run)
    assert len(read) == len(df)  # the compacted row of that point is shadowed, not doubled
    assert read.set_index("point_key").loc[again["point_key"], "status"] == "error"
    compact_run(run)  # a second compaction folds the new row in
    assert not (run / "rows").exists()
    read = store.read_rows(run)
    assert len(read) == len(df)
    assert read.set_index("point_key").loc[again["point_key"], "status"] == "error"


def test_an_unreadable_row_file_is_set_aside_not_folded_or_deleted(run, capsys):
    torn = sorted((run / "rows").glob("*.parquet"))[0]
    torn.write_bytes(torn.read_bytes()[:100])
    n = len(store.read_rows(run))  # warns, skips the torn file
    compact_run(run)
    assert (run / "rows" / store.UNREADABLE / torn.name).exists()
    assert len(store.read_rows(run)) == n
    assert torn.stem not in store.finished_keys(run)  # so a resume measures it again


@pytest.mark.parametrize(
    "args, key",
    [
        (["level=0"], "level"),
        (["level=23"], "level"),
        (["level=x"], "level"),
        ([], "paths"),
    ],
)
def test_bad_input_exits_2_in_one_line(args, key, tmp_path, capsys):
    assert main(["compact", str(tmp_path), *args]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"harness: error: {key}"), err


def test_a_file_is_not_a_run(tmp_path, capsys):
    f = tmp_path / "x.txt"
    f.write_text("x")
    assert main(["compact", str(f)]) == 2
    assert "is not a folder" in capsys.readouterr().err


def test_a_run_being_written_is_not_compacted(run, capsys):
    from harness.lock import run_lock

    with run_lock(run):
        assert main(["compact", str(run)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "is being written by pid" in err[0], err
    assert (run / "rows").is_dir() and not (run / "rows.parquet").exists()


def test_a_compacted_run_with_nothing_loose_is_left_as_it_is(run):
    """A second compaction has nothing to fold in: the file keeps its bytes and its time
    (rewritten by another pyarrow, every committed run would show as changed)."""
    compact_run(run)
    target = run / store.COMPACTED
    before, stamp = target.read_bytes(), target.stat().st_mtime_ns
    again = compact_run(run, level=3)
    assert target.read_bytes() == before and target.stat().st_mtime_ns == stamp
    assert again.files_before == 0 and again.rows == len(store.read_rows(run))


def test_rewrite_writes_a_compacted_run_again_with_every_value_kept(run, capsys):
    """`rewrite=true` is how committed runs take a newer storage encoding: a file an older
    harness wrote (float64 samples, though every one is a float32 value, as CUDA event times
    are; a NaN in a float column) is written again though nothing is loose, now with float32
    samples, and reads back the rows it held."""
    import numpy as np
    import pyarrow as pa

    compact_run(run)
    target = run / store.COMPACTED
    old = store.read_table(run)
    i = old.schema.get_field_index("samples_ms")
    exact = pa.array(
        [[float(np.float32(x)) for x in xs] for xs in old.column(i).to_pylist()],
        pa.list_(pa.float64()),
    )
    old = old.set_column(i, "samples_ms", exact)
    j = old.schema.get_field_index("latency_rse")
    old = old.set_column(j, "latency_rse", pa.array([float("nan")] * old.num_rows))
    pq.write_table(old, target, compression="zstd")  # as an older harness wrote it
    assert pq.read_schema(target).field("samples_ms").type.value_type == pa.float64()
    before = store.read_rows(run)
    assert main(["compact", str(run), "rewrite=true"]) == 0
    assert "0 row files" in capsys.readouterr().out
    assert pq.read_schema(target).field("samples_ms").type.value_type == pa.float32()
    pd.testing.assert_frame_equal(_sorted(store.read_rows(run)), _sorted(before))
    assert store.widened(pq.read_schema(target)).equals(store.SCHEMA)


def test_rewrite_takes_true_or_false(run, capsys):
    assert main(["compact", str(run), "rewrite=maybe"]) == 2
    assert "rewrite: 'maybe'; allowed: true, false" in capsys.readouterr().err
