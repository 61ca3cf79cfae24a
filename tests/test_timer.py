"""Timers and stop rule on the CPU (host timer); GPU timers are exercised in tests/gpu."""

import itertools
import time

from harness.measure.protocol import Protocol
from harness.measure.timer import rotation_sets, time_host


def test_host_timer_converges_on_a_steady_call():
    p = Protocol(min_samples=5, max_samples=500, rse_target=0.05, max_time_s=5, warmup_ms=1)
    t = time_host(lambda: sum(range(2000)), p)
    assert t.stop_reason in ("converged", "max_samples") and len(t.samples_ms) >= 5
    assert all(s > 0 for s in t.samples_ms) and t.warmup_calls >= 1


def test_host_timer_stops_at_time_cap_when_noisy():
    noise = itertools.cycle([0.0, 0.004, 0.0005, 0.002])
    p = Protocol(min_samples=5, max_samples=10_000, rse_target=1e-6, max_time_s=0.2, warmup_ms=0)
    t = time_host(lambda: time.sleep(next(noise)), p)
    assert t.stop_reason == "time_cap"


def test_host_timer_respects_max_samples():
    p = Protocol(min_samples=3, max_samples=7, rse_target=1e-9, max_time_s=60, warmup_ms=0)
    t = time_host(lambda: None, p)
    assert t.stop_reason == "max_samples" and len(t.samples_ms) == 7


def test_rotation_sets_cover_twice_the_cache():
    p = Protocol()
    l2 = 60 << 20
    sets, ok = rotation_sets(10 << 20, l2, p, free_bytes=100 << 30)
    assert sets == 12 and ok
    assert rotation_sets(500 << 20, l2, p, free_bytes=100 << 30) == (1, True)
    capped, ok = rotation_sets(1 << 10, l2, Protocol(max_rotation_sets=8), free_bytes=100 << 30)
    assert capped == 8 and not ok


def test_protocol_validation_names_key():
    import pytest

    with pytest.raises(ValueError, match="protocol.l2"):
        Protocol(l2="lukewarm").validate()
    with pytest.raises(ValueError, match="protocol.min_samples"):
        Protocol(min_samples=0).validate()


def test_the_flush_streams_its_factor_of_the_cache_and_keys_only_a_non_default():
    """protocol.l2_flush_factor sizes the flush (2x the cache by default, as every committed
    row was timed); a non-default factor enters the point key, the default does not, so the
    keys of earlier runs still match."""
    import pytest
    import torch

    from harness.measure.point import flushed_bytes
    from harness.measure.timer import L2Flusher

    cpu = torch.device("cpu")
    assert L2Flusher(cpu, 50 << 20).nbytes == 100 << 20
    assert L2Flusher(cpu, 50 << 20, factor=4.0).nbytes == 200 << 20
    assert L2Flusher(cpu, None, factor=1.5).nbytes == 192 << 20  # unknown cache: 128 MiB
    assert "l2_flush_factor" not in Protocol().key_fields()
    assert Protocol(l2_flush_factor=4.0).key_fields()["l2_flush_factor"] == 4.0
    with pytest.raises(ValueError, match="protocol.l2_flush_factor"):
        Protocol(l2_flush_factor=0.5).validate()
    flusher = L2Flusher(cpu, 1 << 20, factor=3.0)
    assert flushed_bytes(flusher, Protocol(), "cuda-events") == 3 << 20
    assert flushed_bytes(flusher, Protocol(l2="hot"), "cuda-events") is None
    assert flushed_bytes(flusher, Protocol(), "cuda-graph") is None  # rotation, no flush
    assert flushed_bytes(None, Protocol(), "host") is None
