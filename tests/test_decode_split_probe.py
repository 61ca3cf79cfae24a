"""scripts/decode_split_probe.py without a GPU: the point strings it takes, checked before it
looks for a GPU."""

from __future__ import annotations

import sys

import pytest
from script_module import load_script

probe = load_script("decode_split_probe")


def test_point_strings_name_a_serving_grid_point():
    p = probe.problem_of("b16:kv4096:h4:q1:p256")
    assert (p.batch, p.kv_len, p.kv_heads, p.q_len, p.page_size) == (16, 4096, 4, 1, 256)
    assert (p.q_heads, p.head_dim, p.causal, p.kv_layout, p.ragged) == (
        32,
        128,
        True,
        "paged",
        False,
    )
    assert p.phase == "decode"
    assert probe.problem_of("q8:p16:h8:kv16384:b64").q_len == 8  # any order
    ragged = probe.problem_of("b16:kv4096:h4:q1:p16:ragged")
    assert ragged.ragged and ragged.page_size == 16 and "ragged" in ragged.label()
    assert (max(ragged.seq_lens()), min(ragged.seq_lens())) == (4096, 2048)  # down to half
    assert ragged.min_bytes() < probe.problem_of("b16:kv4096:h4:q1:p16").min_bytes()
    assert probe.problem_of("ragged:b16:kv4096:h4:q1:p16") == ragged  # any order
    bad_specs = ("b16:kv4096:p256", "b16:kv4096:h4:q1:p256:x1", "b16:kv4096:h4:q1:p256:b8")
    for bad in (*bad_specs, "b16:kv4096:h4:q1:p256:ragged:ragged"):
        with pytest.raises(ValueError, match="expected b<batch>"):
            probe.problem_of(bad)


def test_a_bad_point_fails_before_the_gpu_is_looked_for(monkeypatch):
    monkeypatch.setattr(sys, "argv", ["decode_split_probe.py", "b16:kv4096:h4:q1:p256", "b16"])
    with pytest.raises(SystemExit, match="expected b<batch>"):
        probe.main()


def test_the_cold_read_runs_on_many_programs_and_near_the_points_bytes():
    """read_blocks: within 0.5% of the bytes, a block count whose grid fills the programs (the
    probe's first run read these points' bytes as they are, on grids of 3 to 141 programs)."""
    from harness_kernels.triton import microbench

    points = ("b16:kv4096:h4:q1:p256", "b16:kv4096:h8:q1:p256", "b16:kv16384:h8:q1:p256")
    sizes = [probe.problem_of(p).min_bytes() for p in (*points, "b16:kv4096:h8:q4:p16")]
    assert sizes[0] == 134_480_896  # 16 x 4 heads x 4096 x 128 x 2 (K, V) x 2 B, and Q and O
    for nbytes in (*sizes, 16 << 20):
        blocks = probe.read_blocks(nbytes, 528)
        assert abs(blocks * microbench.BLOCK_BYTES / nbytes - 1) <= 0.0051
        assert microbench._read_grid(blocks, 1, 528) >= 500


def test_page_0_is_the_dense_twin_of_a_paged_point():
    """p0: the same sequences in a dense cache (no block table), so a probe sets the table's
    lookups apart; a dense cache has no ragged form."""
    dense = probe.problem_of("b16:kv4096:h4:q1:p0")
    paged = probe.problem_of("b16:kv4096:h4:q1:p256")
    assert (dense.kv_layout, dense.page_size) == ("dense", 0)
    # the same K, V, Q and O bytes; the paged point adds its block table (16 x 16 pages x 4 B)
    assert paged.min_bytes() - dense.min_bytes() == 16 * 16 * 4
    with pytest.raises(ValueError, match="ragged"):
        probe.problem_of("b16:kv4096:h4:q1:p0:ragged")


def test_the_probe_launches_a_dense_point_and_checks_it(monkeypatch):
    """launches() on a dense point (its inputs name k and v, not k_cache and v_cache): each
    launch runs and matches the fp32 reference, in the interpreter."""
    import torch

    monkeypatch.setenv("TRITON_INTERPRET", "1")
    p = probe.problem_of("b1:kv64:h2:q1:p0")
    p = type(p)(**{**p.__dict__, "q_heads": 4, "head_dim": 64, "dtype": "fp16"})
    inputs = p.make_inputs(0, "randn", torch.device("cpu"))
    out = probe.launches(inputs, [1])
    assert out and all(p.check(launch(), p.reference(inputs)).ok for launch in out.values())
