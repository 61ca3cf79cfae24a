"""On a GPU: the stream hold compiles one variant of its kernel for every slot of a batch, and
releases every hold of a batch whose call had run once before (session 93, H100: a call that
loaded its module lazily behind a spinning hold blocked the host until the hold's 2 s timeout)."""

import pytest
import torch
from harness_kernels import stream_hold

pytestmark = pytest.mark.gpu


def _batch(hold: stream_hold.StreamHold, n: int) -> list[int]:
    for i in range(n):
        hold.arm(i)
        torch.cuda._sleep(1000)  # a little GPU work behind each hold, as a sample's call
        hold.release(i)
    torch.cuda.synchronize()
    return hold.expired_mask(n).nonzero()[0].tolist()


def test_every_slot_runs_one_variant_and_a_warmed_call_is_never_held_past_release():
    torch.cuda._sleep(1000)  # the call's module loaded before any hold spins
    torch.cuda.synchronize()
    hold = stream_hold.StreamHold(torch.device("cuda"), capacity=64)
    assert _batch(hold, 64) == []
    assert _batch(hold, 64) == []
    caches = getattr(stream_hold._hold_kernel, "device_caches", None)
    here = caches.get(torch.cuda.current_device()) if caches else None
    if here:  # Triton's JIT cache layout: read defensively, it changes between releases
        assert len(here[0]) == 1  # this device's variants (another GPU's would be its own)
