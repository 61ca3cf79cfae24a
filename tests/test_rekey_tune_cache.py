"""scripts/rekey_tune_cache.py: entries tuned on today's kernels move to the new hash's key."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import asdict
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))

import rekey_tune_cache  # noqa: E402
from harness_kernels import tune_cache  # noqa: E402
from take_back import _members, _write_tgz  # noqa: E402


def _entry(source_hash: str, family: str = "cutlass-gemm") -> tuple[str, bytes]:
    key = tune_cache.TuneKey(
        family, "NVIDIA H100 80GB HBM3", "580", "t", source_hash, "(1, 2, 3)", "c"
    )
    entry = {"schema": tune_cache.SCHEMA, "key": asdict(key), "choice_index": 0}
    return f"tune/{family}/{key.digest}.json", json.dumps(entry).encode()


def test_current_kernels_entries_take_the_new_key_and_older_ones_stay(tmp_path):
    sources = rekey_tune_cache.cutlass_tune.TUNE_SOURCES
    current = _entry(rekey_tune_cache.raw_source_hash(sources))
    older = _entry("0123456789abcdef")
    # a tl / Gluon choice (GEMM or attention) names other entries' digests in its candidates:
    # never read again
    choice = _entry(rekey_tune_cache.raw_source_hash(sources), "triton-gemm-choice")
    attn = _entry(rekey_tune_cache.raw_source_hash(sources), "triton-attention-choice")
    path = tmp_path / "tune-h100.tgz"
    _write_tgz(path, dict([current, older, choice, attn]))
    rekey_tune_cache.main([str(path)])
    files = _members(path)
    assert len(files) == 2 and not any("choice" in name for name in files)
    assert older[0] in files and files[older[0]] == older[1]
    (moved,) = (json.loads(v) for k, v in files.items() if k != older[0])
    new_key = tune_cache.TuneKey(**moved["key"])
    assert new_key.source_hash == tune_cache.source_hash(sources)
    assert f"tune/cutlass-gemm/{new_key.digest}.json" in files and current[0] not in files


def test_since_a_commit_moves_the_entries_tuned_on_its_kernels(tmp_path, monkeypatch):
    """--since COMMIT: an entry keyed on the kernels as they stood at COMMIT takes today's key
    (a change that only adds candidates); one keyed on other kernels stays."""
    sources = rekey_tune_cache.cutlass_tune.TUNE_SOURCES
    index = rekey_tune_cache.SOURCE_SETS.index(sources)
    at_commit = ["feedfacefeedface"] * len(rekey_tune_cache.SOURCE_SETS)
    at_commit[index] = "0000111122223333"
    monkeypatch.setattr(rekey_tune_cache, "hashes_at", lambda commit: at_commit)
    then, older = _entry("0000111122223333"), _entry("0123456789abcdef")
    path = tmp_path / "tune-h100.tgz"
    _write_tgz(path, dict([then, older]))
    rekey_tune_cache.main(["--since", "abc1234", str(path)])
    files = _members(path)
    assert older[0] in files and then[0] not in files and len(files) == 2
    (moved,) = (json.loads(v) for k, v in files.items() if k != older[0])
    assert moved["key"]["source_hash"] == tune_cache.source_hash(sources)


def test_hashes_at_reads_the_kernels_of_the_commit_not_the_working_tree():
    """At HEAD with kernels/ unchanged, each source set's hash is today's."""
    root = Path(__file__).resolve().parent.parent
    status = ["git", "-C", str(root), "status", "--porcelain", "--", "kernels"]
    if subprocess.run(status, capture_output=True, text=True, check=True).stdout.strip():
        pytest.skip("kernels/ differs from HEAD (changed or untracked files)")
    got = rekey_tune_cache.hashes_at("HEAD")
    assert got == [tune_cache.source_hash(s) for s in rekey_tune_cache.SOURCE_SETS]
    assert all(len(h) == 16 for h in got)


def test_split_attention_moves_each_entry_of_the_one_set_to_its_familys_key(tmp_path, monkeypatch):
    """--split-attention COMMIT: an attention entry keyed on the one source set as it stood at
    COMMIT takes decode's key where its problem names attn_decode, prefill's otherwise; an entry
    of other kernels, and other families, stay as they are."""
    monkeypatch.setattr(rekey_tune_cache, "hashes_at", lambda commit, sets: ["0000111122223333"])

    def attention(source_hash: str, problem: str) -> tuple[str, bytes]:
        name, data = _entry(source_hash, "triton-attention")
        entry = json.loads(data)
        key = tune_cache.TuneKey(**{**entry["key"], "problem": problem})
        entry["key"] = asdict(key)
        return f"tune/triton-attention/{key.digest}.json", json.dumps(entry).encode()

    decode = attention("0000111122223333", "('attn_decode', 16, 32, 8, 1, 128)")
    prefill = attention("0000111122223333", "('attn_prefill_gluon', 1, 32, 8, 4096, 128)")
    older = attention("0123456789abcdef", "('attn_decode', 64, 32, 8, 1, 128)")
    gemm = _entry("0000111122223333")
    path = tmp_path / "tune-h100.tgz"
    _write_tgz(path, dict([decode, prefill, older, gemm]))
    rekey_tune_cache.main(["--split-attention", "abc1234", str(path)])
    files = _members(path)
    assert len(files) == 4 and older[0] in files and gemm[0] in files
    moved = {
        json.loads(v)["key"]["problem"]: json.loads(v)["key"]["source_hash"]
        for k, v in files.items()
        if k not in (older[0], gemm[0])
    }
    attention_tune = rekey_tune_cache.attention_tune
    assert moved == {
        "('attn_decode', 16, 32, 8, 1, 128)": tune_cache.source_hash(attention_tune.DECODE_SOURCES),
        "('attn_prefill_gluon', 1, 32, 8, 4096, 128)": tune_cache.source_hash(
            attention_tune.PREFILL_SOURCES
        ),
    }
