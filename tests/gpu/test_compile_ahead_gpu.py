"""On a GPU: harness/compile_ahead.py with own Triton's real decode tuner. Two workers prepare two
ragged paged decode points with the timers stubbed: Triton's cache (a fresh TRITON_CACHE_DIR)
fills with their kernels, the tune cache stays empty, and the measuring process then tunes the
same points for real and agrees with the fp32 reference. (What it saves in time is measured by
the tune pass's own lines, never asserted here.)"""

import io
import time

import pytest
import torch

from harness import compile_ahead
from harness.device import get_device
from harness.measure.point import check_inputs
from harness.measure.protocol import Protocol
from harness.problems.attention import AttentionProblem
from harness.providers import load_all
from harness.sweep import Point

pytestmark = pytest.mark.gpu

needs_gpu = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


@needs_gpu
def test_workers_fill_the_triton_cache_and_nothing_else(monkeypatch, tmp_path):
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "triton"))
    monkeypatch.setenv("HARNESS_TUNE_CACHE", str(tmp_path / "tune"))
    device = get_device("cuda:0")
    axes = dict(batch=16, q_heads=32, kv_heads=8, kv_len=4096, causal=True, kv_layout="paged")
    chosen = [
        (f"k{q}", Point(AttentionProblem(q_len=q, page_size=16, ragged=True, **axes), "own-triton"))
        for q in (1, 4)
    ]
    out = io.StringIO()
    seed, fill = check_inputs(Protocol())
    began = time.time()
    results = compile_ahead.compile_ahead(
        chosen, device, seed, fill, out, workers=2, deadline=began + 400
    )
    assert results == {"k1": None, "k4": None}, out.getvalue()
    assert "compile ahead: 2 own Triton points on 2 workers" in out.getvalue()
    assert len(list((tmp_path / "triton").rglob("*.cubin"))) >= 10  # every candidate of both
    assert not (tmp_path / "tune").exists() or not any((tmp_path / "tune").rglob("*.json"))
    # here, tuned for real (timed, and stored), the same points are right
    provider = load_all().get("attention", "own-triton")
    for _, point in chosen:
        inputs = point.problem.make_inputs(seed, fill, device.torch_device)
        prepared = provider.prepare(point.problem, inputs, device)
        got = prepared.output(prepared.run())
        check = point.problem.check(got, point.problem.reference(inputs))
        assert check.ok, check.reason
    assert any((tmp_path / "tune").rglob("*"))
