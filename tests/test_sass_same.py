"""scripts/sass_same.py: the FMHA libraries it compares (every kernel, each tile choice once),
and, where nvcc and the CUTLASS headers are here, one library compared against HEAD."""

from __future__ import annotations

import shutil
import subprocess

import pytest
from harness_kernels.cutlass import build, fmha
from kernel_checkout import committed_copy, run_script
from script_module import load_script


def test_every_fmha_kernel_and_tile_choice_is_compared_once():
    specs = load_script("sass_same").fmha_specs(["bf16"])
    keys = [(s.source, s.defines, s.archs) for s in specs]
    assert len(keys) == len(set(keys))
    # every kernel's library at every head dim, mask and tile (fa3-tiles' are fa3's own where
    # the tile rule gives FlashAttention-3's tile: compared once)
    for kernel in fmha.KERNELS:
        for head_dim in fmha.head_dims(kernel):
            for causal in (False, True):
                spec = fmha.fmha_spec("bf16", head_dim, kernel, causal=causal, q_len=1024)
                assert (spec.source, spec.defines, spec.archs) in keys, spec.label
    # fa3's tile rule: 128 keys at D 128 causal, FlashAttention-3's tile otherwise
    fa3_d128 = {
        dict(s.defines)["HK_BLOCK_N"] for s in specs if s.label.startswith("fmha-fa3-bf16-d128")
    }
    assert fa3_d128 == {128, fmha.FA3_TILES[128][1]}


@pytest.mark.skipif(
    build.toolchain_problem() is not None or shutil.which("git") is None,
    reason="needs nvcc, the CUTLASS headers and git",
)
def test_one_library_same_as_committed_then_changed_by_an_edit(tmp_path):
    # a checkout of kernels/cutlass alone: the script compiles from <repo>/kernels/cutlass
    repo = committed_copy(tmp_path / "repo", "kernels/cutlass")

    def compare() -> subprocess.CompletedProcess:
        return run_script("sass_same", "--repo", str(repo), "--only", "fmha-sm90-bf16-d64")

    same = compare()
    assert same.returncode == 0, same.stdout + same.stderr
    assert "1 of 1 identical against HEAD" in same.stdout
    # quad_max reducing over lanes ^1 and ^3 instead of ^1 and ^2: other SHFL operands
    header = repo / "kernels" / "cutlass" / "fmha_common.h"
    text = header.read_text()
    old = "return fmaxf(x, __shfl_xor_sync(0xffffffff, x, 2));"
    assert old in text
    header.write_text(text.replace(old, old.replace("x, 2)", "x, 3)")))
    changed = compare()
    assert changed.returncode == 1, changed.stdout + changed.stderr
    assert "DIFFERS  fmha-sm90-bf16-d64 sm_90a" in changed.stdout
