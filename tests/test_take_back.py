"""scripts/take_back.py: a call's returned tune cache merged per GPU into .cache, the CUTLASS
libraries replaced, and the returned rows unpacked into the tree."""

from __future__ import annotations

import gzip
import io
import json
import random
import tarfile
import time
from pathlib import Path

import pytest
from script_module import load_script

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "take_back.py"
take_back = load_script("take_back")


def _entry(device: str, choice: str) -> bytes:
    return json.dumps({"key": {"device": device}, "choice": choice}).encode()


def _tgz(path: Path, files: dict[str, bytes]) -> Path:
    with tarfile.open(path, "w:gz") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def _read(path: Path) -> dict[str, bytes]:
    with tarfile.open(path) as tar:
        return {m.name: tar.extractfile(m).read() for m in tar.getmembers() if m.isfile()}


def test_gpu_tag_names_caches_as_device_env_does():
    assert take_back.gpu_tag("NVIDIA H200") == "h200"
    assert take_back.gpu_tag("NVIDIA H100 80GB HBM3") == "h100"
    assert take_back.gpu_tag("AMD Instinct MI300X") == "mi300x"
    assert take_back.gpu_tag("cpu") is None


def test_tune_cache_merges_by_gpu_and_the_returned_entry_wins(tmp_path):
    root, back = tmp_path / "repo", tmp_path / "back"
    (root / ".cache").mkdir(parents=True)
    back.mkdir()
    _tgz(
        root / ".cache" / "tune-h200.tgz",
        {
            "tune/cutlass-gemm/a.json": _entry("NVIDIA H200", "old"),
            "tune/cutlass-gemm/b.json": _entry("NVIDIA H200", "kept"),
        },
    )
    _tgz(
        back / "tune-cache.tgz",
        {
            "tune/cutlass-gemm/a.json": _entry("NVIDIA H200", "new"),
            "tune/triton-gemm/c.json": _entry("NVIDIA H200", "added"),
            "tune/triton-gemm/d.json": _entry("NVIDIA H100 80GB HBM3", "other gpu"),
            "tune/triton-gemm/e.json": _entry("some card", "unknown"),
        },
    )
    lines = take_back.take_back(back, root)
    h200 = _read(root / ".cache" / "tune-h200.tgz")
    assert sorted(h200) == [
        "tune/cutlass-gemm/a.json",
        "tune/cutlass-gemm/b.json",
        "tune/triton-gemm/c.json",
    ]
    assert json.loads(h200["tune/cutlass-gemm/a.json"])["choice"] == "new"
    assert json.loads(h200["tune/cutlass-gemm/b.json"])["choice"] == "kept"
    assert list(_read(root / ".cache" / "tune-h100.tgz")) == ["tune/triton-gemm/d.json"]
    assert any("2 carried + 1 new = 3 entries" in line for line in lines)
    assert "1 entries of no known GPU left out" in lines
    # the merged caches are also copied into the tree to be committed, byte for byte
    for tag in ("h100", "h200"):
        kept = root / "tune_cache" / f"tune-{tag}.tgz"
        assert kept.read_bytes() == (root / ".cache" / f"tune-{tag}.tgz").read_bytes()


def _libraries(path: Path, names: list[str], size: int = 64) -> Path:
    """A CUTLASS cache archive as device_env.sh's machines pack it: `tar cJf - -C cache .`, a
    folder per library with its manifest and lib.so, and the `.from-<sum>` marker."""
    rng = random.Random(0)  # incompressible bytes, so that a cut falls inside a library
    with tarfile.open(path, "w:xz") as tar:
        tar.addfile(tarfile.TarInfo("./.from-123"), io.BytesIO(b""))
        scratch = tarfile.TarInfo("./.build-x1")  # an nvcc build's scratch folder
        scratch.type = tarfile.DIRTYPE
        tar.addfile(scratch)
        for name in names:
            folder = tarfile.TarInfo(f"./{name}")
            folder.type = tarfile.DIRTYPE
            tar.addfile(folder)
            for file, data in (("manifest.json", b"{}"), ("lib.so", rng.randbytes(size))):
                info = tarfile.TarInfo(f"./{name}/{file}")
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
    return path


def _names(path: Path) -> set[str]:
    with tarfile.open(path) as tar:
        return {Path(m.name).parts[-2] for m in tar.getmembers() if m.name.endswith("lib.so")}


def test_libraries_replaced_and_rows_unpacked(tmp_path):
    root, back = tmp_path / "repo", tmp_path / "back"
    (root / ".cache").mkdir(parents=True)
    back.mkdir()
    old = _libraries(root / ".cache" / "cutlass.tar.xz", ["a"])
    old.chmod(0o444)  # copied from a read-only files_at folder last time
    newer = _libraries(back / "cutlass.tar.xz", ["a", "b"]).read_bytes()
    _tgz(back / "results.tgz", {"results/_scratch/gpu/run/rows/k.parquet": b"row"})
    lines = take_back.take_back(back, root)
    assert old.read_bytes() == newer
    assert (root / "results/_scratch/gpu/run/rows/k.parquet").read_bytes() == b"row"
    assert lines[-1] == "results: 1 files into results/_scratch/gpu"


def test_a_returned_run_extends_its_own_rows_and_sets_another_machines_aside(tmp_path):
    """A run whose local row files are all in the returned archive (the same machine, resumed)
    takes the new rows in place; one holding rows the archive lacks (another machine started the
    run again) is moved aside first, so two GPUs' rows never share a run folder."""
    root, back = tmp_path / "repo", tmp_path / "back"
    run = "results/_scratch/gpu/run"
    (root / run / "rows").mkdir(parents=True)
    (root / run / "rows" / "a.parquet").write_bytes(b"first call")
    (root / run / "run.json").write_text("{}")
    back.mkdir()
    same = {f"{run}/run.json": b"{}", f"{run}/rows/a.parquet": b"first call"}
    _tgz(back / "results.tgz", {**same, f"{run}/rows/b.parquet": b"second call"})
    lines = take_back.take_back(back, root)
    assert sorted(p.name for p in (root / run / "rows").iterdir()) == ["a.parquet", "b.parquet"]
    assert not list(root.glob(f"{run}.aside-*")) and len(lines) == 1

    _tgz(back / "results.tgz", {f"{run}/run.json": b"{}", f"{run}/rows/c.parquet": b"elsewhere"})
    lines = take_back.take_back(back, root)
    assert [p.name for p in (root / run / "rows").iterdir()] == ["c.parquet"]
    aside = root / f"{run}.aside-1"
    assert sorted(p.name for p in (aside / "rows").iterdir()) == ["a.parquet", "b.parquet"]
    assert lines[0] == (
        f"{run}: 2 local row files are not in the returned run (another machine's, or an "
        f"earlier start's): moved to {run}.aside-1"
    )


def test_cli_refuses_a_missing_folder(tmp_path, capsys):
    assert take_back.main([str(tmp_path / "absent")]) == 2
    assert "no such folder" in capsys.readouterr().err


def test_a_cut_short_library_archive_is_merged_not_put_in_place(tmp_path):
    """Session 52: a call ran out while packing 159 libraries, and the archive it returned ended
    mid-stream. The carried libraries stay; the returned ones read whole join them; the one the
    archive ended in is left out (it would load as a truncated lib.so)."""
    root, back = tmp_path / "repo", tmp_path / "back"
    (root / ".cache").mkdir(parents=True)
    back.mkdir()
    carried = _libraries(root / ".cache" / "cutlass.tar.xz", ["a", "b"])
    full = _libraries(tmp_path / "full.tar.xz", ["b", "c", "d", "e"], size=20000).read_bytes()
    (back / "cutlass.tar.xz").write_bytes(full[: len(full) * 3 // 5])  # ends inside "d"
    line = take_back.take_back(back, root)[0]
    assert "cut short" in line and "2 carried" in line
    got = _names(carried)
    assert got == {"a", "b", "c"}  # "d", where it ended, and "e", after it, left out
    folders, cut = take_back.library_folders(carried)
    assert cut is None and set(folders) == got  # whole, and no scratch folder kept
    for name in got:  # every library kept has its manifest and its whole lib.so
        files = {Path(m.name).name: data for m, data in folders[name] if m.isfile()}
        assert files["manifest.json"] == b"{}"
        assert len(files["lib.so"]) == (64 if name == "a" else 20000)


def test_a_whole_archive_lacking_carried_libraries_is_merged(tmp_path):
    """A call that never unpacked the carried cache (or ran no CUTLASS) returns an archive
    without the carried libraries: they stay, beside what it built."""
    root, back = tmp_path / "repo", tmp_path / "back"
    (root / ".cache").mkdir(parents=True)
    back.mkdir()
    carried = _libraries(root / ".cache" / "cutlass.tar.xz", ["a", "b"])
    _libraries(back / "cutlass.tar.xz", ["c"])
    line = take_back.take_back(back, root)[0]
    assert "lacks 2 of the 2 carried" in line and "3 libraries" in line
    assert _names(carried) == {"a", "b", "c"}
    _libraries(back / "cutlass.tar.xz", [])  # empty: nothing built, nothing unpacked
    take_back.take_back(back, root)
    assert _names(carried) == {"a", "b", "c"}


def _run_json(planned: int) -> bytes:
    return json.dumps(
        {"history": [{"points_planned": planned + 1}, {"points_planned": planned}]}
    ).encode()


def test_an_unfinished_run_is_listed_until_it_comes_back_whole(tmp_path):
    """A call stopped at its budget returns fewer rows than planned: the run is listed in
    .cache/unfinished (the machine then refuses to start it again without its folder), and a
    later call that returns it whole takes it off the list."""
    root, back = tmp_path / "repo", tmp_path / "back"
    run = "results/_scratch/h100/run"
    root.mkdir()
    back.mkdir()
    _tgz(back / "results.tgz", {f"{run}/run.json": _run_json(3), f"{run}/rows/a.parquet": b"1"})
    lines = take_back.take_back(back, root)
    pack = root / ".cache/resume/h100+run.tar.xz"
    assert lines[-1].startswith(
        f"{run}: 1 of 3 rows, unfinished: packed to resume (.cache/resume/h100+run.tar.xz, "
    )
    assert (root / ".cache" / "unfinished").read_text() == f"{run}\n"
    assert sorted(_read(pack)) == [f"{run}/rows/a.parquet", f"{run}/run.json"]

    elsewhere = tmp_path / "machine"
    elsewhere.mkdir()
    (elsewhere / ".cache").mkdir()
    (elsewhere / ".cache" / "unfinished").write_text(f"{run}\n")
    assert "left it unfinished" in take_back.check_resume(elsewhere, run)
    assert take_back.main(["--check-resume", run, "--root", str(elsewhere)]) == 3
    assert take_back.check_resume(root, run) is None  # its folder is here: it resumes
    assert take_back.check_resume(elsewhere, "results/_scratch/h100/other") is None

    rows = {f"{run}/rows/{k}.parquet": k.encode() for k in "abc"}
    _tgz(back / "results.tgz", {f"{run}/run.json": _run_json(3), **rows})
    take_back.take_back(back, root)
    assert (root / ".cache" / "unfinished").read_text() == ""
    assert not pack.exists()  # whole: nothing left to resume
    assert take_back.main(["--check-resume", run, "--root", str(root)]) == 0


def test_device_env_unpacks_a_resume_pack_and_keeps_the_files_a_machine_has(tmp_path):
    """On the machine device_env.sh unpacks every carried resume pack at the root, so that
    gpu_measure.sh's --check-resume finds the folder; a row file already there (a warm machine's,
    or a carried folder's) is not overwritten."""
    import subprocess

    script = (SCRIPT.parent / "device_env.sh").read_text()
    start = script.index("for pack in .cache/resume/")
    loop = script[start : script.index("done", start) + len("done")]
    root, back = tmp_path / "repo", tmp_path / "back"
    run = "results/_scratch/h200/run"
    root.mkdir()
    back.mkdir()
    rows = {f"{run}/rows/{k}.parquet": k.encode() for k in "ab"}
    _tgz(back / "results.tgz", {f"{run}/run.json": _run_json(3), **rows})
    take_back.take_back(back, root)
    machine = tmp_path / "machine"
    (machine / ".cache").mkdir(parents=True)
    (root / ".cache/resume").rename(machine / ".cache/resume")
    (machine / run / "rows").mkdir(parents=True)
    (machine / run / "rows/a.parquet").write_bytes(b"warm")
    done = subprocess.run(["bash", "-c", f"set -e; return() {{ exit $1; }}; {loop}"], cwd=machine,
                          capture_output=True, text=True)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "resumable run unpacked from .cache/resume/h200+run.tar.xz" in done.stdout
    assert (machine / run / "rows/b.parquet").read_bytes() == b"b"
    assert (machine / run / "rows/a.parquet").read_bytes() == b"warm"
    assert take_back.check_resume(machine, run) is None


def test_a_cache_that_tuned_nothing_merges_nothing(tmp_path):
    # the machine's `tar czf` of an empty tune folder returns gzip of no bytes, not a tar
    root, back = tmp_path / "repo", tmp_path / "back"
    root.mkdir()
    back.mkdir()
    (back / "tune-cache.tgz").write_bytes(gzip.compress(b""))
    assert not any("tune-" in line for line in take_back.take_back(back, root))
    assert not list((root / ".cache").glob("tune-*.tgz"))


def test_the_same_entries_give_the_same_committed_bytes(tmp_path):
    """tune_cache/ is committed: a call that returns no new entry must not change its bytes."""
    root, back = tmp_path / "repo", tmp_path / "back"
    (root / ".cache").mkdir(parents=True)
    back.mkdir()
    _tgz(back / "tune-cache.tgz", {"tune/triton-gemm/a.json": _entry("NVIDIA H100", "x")})
    take_back.take_back(back, root)
    first = (root / "tune_cache" / "tune-h100.tgz").read_bytes()
    time.sleep(1.1)  # gzip stamps whole seconds
    take_back.take_back(back, root)
    assert (root / "tune_cache" / "tune-h100.tgz").read_bytes() == first


def test_a_run_committed_unfinished_is_packed_to_resume_from_the_tree(tmp_path):
    """A fresh checkout has no .cache: the run an owed list resumes is packed from its committed
    folder (rows compacted) under results/_scratch/<gpu>/, listed unfinished; device_env.sh's
    unpacking then gives gpu_measure.sh its folder. A whole run is refused, as is a folder
    outside results/<gpu>/."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    run = tmp_path / "results/h100/run"
    run.mkdir(parents=True)
    (run / "run.json").write_bytes(_run_json(3))
    pq.write_table(pa.table({"point_key": ["a", "b"]}), run / "rows.parquet")
    line = take_back.resume_committed(tmp_path, "results/h100/run")
    scratch = "results/_scratch/h100/run"
    assert line.startswith(f"results/h100/run: 2 of 3 rows: packed to resume as {scratch} ")
    assert sorted(_read(tmp_path / ".cache/resume/h100+run.tar.xz")) == [
        f"{scratch}/rows.parquet",
        f"{scratch}/run.json",
    ]
    assert (tmp_path / ".cache/unfinished").read_text() == f"{scratch}\n"
    take_back.resume_committed(tmp_path, "results/h100/run")  # again: listed once
    assert (tmp_path / ".cache/unfinished").read_text() == f"{scratch}\n"
    assert take_back.check_resume(tmp_path, scratch) is not None  # its folder is not here

    pq.write_table(pa.table({"point_key": ["a", "b", "c"]}), run / "rows.parquet")
    with pytest.raises(ValueError, match="whole: nothing to resume"):
        take_back.resume_committed(tmp_path, "results/h100/run")
    assert take_back.main(["--resume-committed", "results/h100/run", "--root", str(tmp_path)]) == 2
    with pytest.raises(ValueError, match="not a committed run folder"):
        take_back.resume_committed(tmp_path, "results/_scratch/h100/run")
    with pytest.raises(ValueError, match="no run.json there"):
        take_back.resume_committed(tmp_path, "results/h100/missing")


def test_the_owed_lists_runs_committed_unfinished_are_packed_once(tmp_path, capsys):
    """A fresh checkout (session 111's next): device_carry.sh packs every run an owed list names
    that was committed unfinished, so the owed call resumes it rather than starting it again.
    A run .cache lists already keeps its call's pack; a whole one is named to take off the list;
    comments, blank lines and runs not committed are passed over."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    for gpu, rows in (("h200", ["a"]), ("h100", ["a", "b", "c"])):
        run = tmp_path / f"results/{gpu}/grid-s1"
        run.mkdir(parents=True)
        (run / "run.json").write_bytes(_run_json(3))
        pq.write_table(pa.table({"point_key": rows}), run / "rows.parquet")
    (tmp_path / "results/h200/owed.specs").write_text(
        "# grid-s0 sweep=x\n\n  grid-s1 sweep=gemm_llama 'a=[1,2]' # the grid\nnew-s1 sweep=y"
    )
    (tmp_path / "results/h100/owed.specs").write_text("grid-s1 sweep=z\n")
    assert take_back.owed_runs(tmp_path) == [
        "results/h100/grid-s1",
        "results/h200/grid-s1",
        "results/h200/new-s1",
    ]
    lines = take_back.resume_owed(tmp_path)
    assert lines[0].startswith("results/h100/grid-s1: 3 of 3 rows, whole")
    assert lines[0].endswith("take it off results/h100/owed.specs")
    assert lines[1].startswith("results/h200/grid-s1: 1 of 3 rows: packed to resume")
    assert len(lines) == 2
    assert (tmp_path / ".cache/unfinished").read_text() == "results/_scratch/h200/grid-s1\n"
    pack = tmp_path / ".cache/resume/h200+grid-s1.tar.xz"
    stamp = pack.stat().st_mtime_ns
    assert take_back.main(["--resume-owed", "--root", str(tmp_path)]) == 0
    assert "h200" not in capsys.readouterr().out  # listed: its pack is left as it was
    assert pack.stat().st_mtime_ns == stamp


def test_a_resumed_committed_run_returned_whole_counts_its_compacted_rows(tmp_path):
    """Session 104: gemm_llama-s102h, resumed from its 232 committed rows (compacted in
    rows.parquet), came back with the 8 new row files beside them, and was listed unfinished
    as '8 of 240 rows'. Both kinds of row count: it is whole, and taken off the list."""
    import io

    import pyarrow as pa
    import pyarrow.parquet as pq

    root, back = tmp_path / "repo", tmp_path / "back"
    run = "results/_scratch/h100/run"
    root.mkdir()
    back.mkdir()
    (root / ".cache").mkdir()
    (root / ".cache" / "unfinished").write_text(f"{run}\n")
    compacted = io.BytesIO()
    pq.write_table(pa.table({"point_key": ["a", "b"]}), compacted)
    files = {
        f"{run}/run.json": _run_json(3),
        f"{run}/rows.parquet": compacted.getvalue(),
        f"{run}/rows/c.parquet": b"c",
    }
    _tgz(back / "results.tgz", files)
    take_back.take_back(back, root)
    assert (root / ".cache" / "unfinished").read_text() == ""
    assert not (root / ".cache/resume/h100+run.tar.xz").exists()
