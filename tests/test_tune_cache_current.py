"""scripts/tune_cache_current.py: which entries of a tune cache today's kernel sources would read."""

from __future__ import annotations

import json
import sys
from dataclasses import asdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))

import tune_cache_current  # noqa: E402
from harness_kernels import tune_cache  # noqa: E402
from harness_kernels.triton import attention_tune  # noqa: E402
from take_back import _write_tgz  # noqa: E402


def _entry(source_hash: str, family: str, problem: str, toolchain: str) -> tuple[str, bytes]:
    key = tune_cache.TuneKey(
        family, "NVIDIA H100 80GB HBM3", "580", toolchain, source_hash, problem, "c"
    )
    entry = {"schema": tune_cache.SCHEMA, "key": asdict(key), "choice_index": 0}
    return f"tune/{family}/{key.digest}.json", json.dumps(entry).encode()


def test_entries_are_counted_current_by_todays_source_hash_and_split_by_kernel(tmp_path, capsys):
    today = tune_cache.source_hash(attention_tune.TUNE_SOURCES)
    decode = "('attn_decode', 16, 32, 8, 1, 128, torch.bfloat16, True)"
    prefill = "('attn_prefill_gluon', 1, 32, 8, 4096, 128, torch.float16, True)"
    files = dict(
        [
            _entry(today, "triton-attention", decode, "triton 3.6.0"),
            # session 104's case: an entry of the kernels before a change to a keyed file
            _entry("0123456789abcdef", "triton-attention", decode + " ", "triton 3.6.0"),
            _entry("0123456789abcdef", "triton-attention", prefill, "triton 3.6.0"),
            _entry(today, "cutlass-gemm", "(1, 2, 3)", "cutlass 4.2.0"),
        ]
    )
    got = tune_cache_current.counts(files, {today})
    assert got["triton-attention attn_decode"] == (2, 1, {"triton 3.6.0"})
    assert got["triton-attention attn_prefill_gluon"] == (1, 0, set())
    # a problem that names no kernel first is counted by its family alone
    assert got["cutlass-gemm"][:2] == (1, 1)
    path = tmp_path / "tune-h100.tgz"
    _write_tgz(path, files)
    tune_cache_current.main([str(path)])
    out = capsys.readouterr().out
    line = next(x for x in out.splitlines() if "attn_prefill_gluon" in x)
    assert line.split()[-3:] == ["1", "0", "-"]
