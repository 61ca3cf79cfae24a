"""scripts/decode_probe.py without a GPU: the point strings it takes, and the grid it times
(within the tuner's shared-memory model, and beyond it on request)."""

from __future__ import annotations

import pytest
from harness_kernels.triton.attention_configs import keep_decode_config
from script_module import load_script

probe = load_script("decode_probe")


def test_point_strings_name_the_paged_decode_point():
    p = probe.problem_of("b16:kv4096:p256")
    assert (p.batch, p.kv_len, p.page_size, p.q_len) == (16, 4096, 256, 1)
    assert (p.q_heads, p.kv_heads, p.head_dim, p.kv_layout) == (32, 8, 128, "paged")
    assert probe.problem_of("p16:b1:kv1024").page_size == 16  # any order
    for bad in ("b16:kv4096", "k4096:b1:p16", "b16::kv4096:p16", "b16:kv4096:p16:x1"):
        with pytest.raises(SystemExit):
            probe.problem_of(bad)


def test_grid_keeps_to_the_model_unless_asked():
    admitted = probe.grid(256)
    every = probe.grid(256, beyond_model=True)
    assert admitted and all(c in every for c in admitted) and len(every) > len(admitted)
    for c in admitted:
        assert keep_decode_config(c | {"BLOCK_M": 16}, ("cuda", 90), 128, 2, 256)
    beyond = [c for c in every if c not in admitted]
    assert any(c["num_stages"] in probe.DEEP_STAGES for c in beyond)
    assert (64, 6) in {(c["BLOCK_N"], c["num_stages"]) for c in admitted}
