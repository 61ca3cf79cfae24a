"""scripts/seed_check.py: what seeded tuning would have cost, replayed from two GPUs' full tunes
(entries written by kernels/tune_cache.py, timings made up here)."""

from __future__ import annotations

import sys
import tarfile
from pathlib import Path

import pytest
from harness_kernels import tune_cache

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
import seed_check  # noqa: E402

CANDS = ["a", "b", "c", "d"]


def write(folder: Path, device: str, problem: str, ms: dict[str, float], monkeypatch) -> None:
    """A full tune of `problem` on `device` whose burst timings are `ms` (the fastest chosen)."""
    monkeypatch.setenv("HARNESS_TUNE_CACHE", str(folder))
    key = tune_cache.make_key(
        "cutlass-gemm",
        device,
        (problem, device),  # a problem naming its GPU, as own Triton's keys do
        CANDS,
        toolchain="t",
        sources=("bench_cold.py",),
    )
    best = min(ms, key=ms.__getitem__)
    tune_cache.save(key, CANDS, CANDS.index(best), ms[best], dict(timings_ms=ms))


@pytest.fixture
def caches(tmp_path, monkeypatch) -> tuple[Path, Path]:
    seed, target = tmp_path / "h100" / "tune", tmp_path / "h200" / "tune"
    # p1: the seed's order is the target's; p2: the target's best is the seed's third
    write(seed, "GPU A", "p1", dict(a=1.0, b=2.0, c=3.0, d=4.0), monkeypatch)
    write(target, "GPU B", "p1", dict(a=1.0, b=2.0, c=3.0, d=4.0), monkeypatch)
    write(seed, "GPU A", "p2", dict(a=1.0, b=2.0, c=3.0, d=4.0), monkeypatch)
    write(target, "GPU B", "p2", dict(a=1.2, b=1.1, c=1.0, d=4.0), monkeypatch)
    write(target, "GPU B", "p3", dict(a=1.0, b=2.0, c=3.0, d=4.0), monkeypatch)  # no seed
    return seed, target


def test_each_k_counts_hits_and_what_the_seeded_pick_loses(caches):
    rows = {r["top"]: r for r in seed_check.compare(*caches, [1, 3])}
    assert (rows[1]["points"], rows[1]["hits"]) == (2, 1)
    assert rows[1]["worst"] == pytest.approx(1.2) and "p2" in rows[1]["worst_at"]
    assert rows[1]["geomean"] == pytest.approx(1.2**0.5)
    assert (rows[3]["hits"], rows[3]["geomean"], rows[3]["timed"]) == (2, 1.0, 0.75)


def test_a_tgz_of_a_cache_reads_as_its_folder(caches, tmp_path):
    seed, target = caches
    archive = tmp_path / "tune-h100.tgz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(seed, arcname="tune")
    assert seed_check.compare(archive, target, [1]) == seed_check.compare(seed, target, [1])


def test_the_script_prints_a_table_and_says_when_nothing_is_shared(caches, tmp_path, capsys):
    assert seed_check.main([str(caches[0]), str(caches[1]), "--top", "2"]) == 0
    assert "| cutlass-gemm | 2 | 2 | 1 | 1.0488 | 1.1000 at" in capsys.readouterr().out
    (tmp_path / "empty").mkdir()
    assert seed_check.main([str(caches[0]), str(tmp_path / "empty")]) == 1


def test_one_gpu_on_both_sides_or_two_in_one_cache_is_refused(caches, tmp_path, monkeypatch):
    seed, target = caches
    with pytest.raises(SystemExit, match="one GPU on one driver"):
        seed_check.compare(target, target, [1])
    write(target, "GPU C", "p9", dict(a=1.0), monkeypatch)
    with pytest.raises(SystemExit, match="2 GPUs or drivers"):
        seed_check.compare(seed, target, [1])
