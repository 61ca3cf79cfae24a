"""kernels/exc_text.first_line, and the tuners rejecting a candidate whose failure has no
message instead of ending the tune pass on it (IndexError from `str(e).splitlines()[0]`)."""

from __future__ import annotations

import pytest
import torch
from harness_kernels import capped_retime
from harness_kernels.exc_text import first_line
from harness_kernels.triton import gemm_tune as triton_tune
from harness_kernels.triton.gemm_configs import GemmConfig


def test_first_line_names_the_type_and_the_message_s_first_line():
    assert first_line(ValueError("bad tile\nmore detail")) == "ValueError: bad tile"
    assert first_line(RuntimeError()) == "RuntimeError"
    assert first_line(AssertionError("  \n")) == "AssertionError"
    assert first_line(KeyError("x" * 500), limit=10) == "KeyError: 'xxxxxxxxx"


def test_triton_gemm_tuner_rejects_a_candidate_failing_without_a_message(monkeypatch):
    good, bad = (GemmConfig(block_m=128, block_n=n, block_k=64) for n in (128, 256))
    ref = torch.ones(2, 2)

    class FakeLaunch:
        def __init__(self, cfg):
            self.cfg, self.out = cfg, torch.empty(2, 2)

        def __call__(self) -> torch.Tensor:
            if self.cfg.block_n == 256:
                raise AssertionError()  # an `assert` with no message inside a launch
            return ref

    monkeypatch.setattr(triton_tune, "bench_cold", lambda fn, device: 0.5)
    monkeypatch.setattr(capped_retime, "bench_capped", lambda fn, device: 0.5)
    triton_tune.clear_cache()
    with pytest.warns(UserWarning, match="rejected 1 config"):
        result = triton_tune.tune_or_lookup(("bare",), [good, bad], FakeLaunch, lambda: ref, 1e-3)
    assert result.config == good
    assert list(result.rejected.values()) == ["AssertionError"]
