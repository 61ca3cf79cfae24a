"""The stream hold (kernels/stream_hold.py, imported as harness_kernels.stream_hold) and the order
in which the events timer uses it.

The hold kernel runs here under the Triton interpreter, synchronously: a flag set before the
launch releases it at once, an unset one spins until its bound and reports EXPIRED.
"""

import torch
from harness_kernels.stream_hold import StreamHold
from timing_fakes import LoggingHold

from harness.measure.protocol import Protocol
from harness.measure.timer import time_cuda_events


def test_hold_released_by_its_own_flag_reports_released():
    hold = StreamHold(torch.device("cpu"), capacity=4, max_spins=100)
    hold.release(2)  # the host queued sample 2 before the GPU reached its hold
    hold.arm(2, reset=False)
    assert hold.outcomes[2].item() == 1
    assert hold.expired(4) == 0


def test_hold_that_times_out_is_counted_expired():
    hold = StreamHold(torch.device("cpu"), capacity=4, max_spins=100)
    hold.arm(1)  # never released: the spin bound ends it
    hold.release(3)
    hold.arm(3, reset=False)
    assert hold.outcomes[1].item() == 2 and hold.outcomes[3].item() == 1
    assert hold.expired(4) == 1


class _Clock:
    """A stand-in for torch.cuda: events read the host clock, and every call is logged."""

    def __init__(self, log):
        self.log = log
        clock = self

        class Event:
            def __init__(self, enable_timing=True):
                self.t = None
                self.name = f"event{len(clock.log)}"

            def record(self):
                import time

                self.t = time.perf_counter()
                clock.log.append("record")

            def synchronize(self):
                pass

            def elapsed_time(self, other):
                return (other.t - self.t) * 1e3

        self.Event = Event

    def synchronize(self):
        pass


def test_events_timer_holds_before_start_and_releases_after_the_end_event():
    log = []
    p = Protocol(min_samples=3, max_samples=3, warmup_ms=0, max_time_s=5, min_time_s=0)
    t = time_cuda_events(
        lambda: log.append("call"),
        p,
        flush=lambda: log.append("flush"),
        api=_Clock(log),
        hold=LoggingHold(log),
    )

    def sample(i):  # flush, hold, start event, the call, end event, then release
        return ["flush", f"arm{i}", "record", "call", "record", f"release{i}"]

    warm_up = ["flush", "call"]
    assert log == warm_up + sample(0) + sample(0) + sample(1)  # batches of 1, then 2
    assert t.stream_hold == "flag" and len(t.samples_ms) == 3
    assert t.hold_expired == 1  # the fake hold reports one expiry per multi-sample batch


def test_events_timer_without_hold_says_so():
    log = []
    p = Protocol(min_samples=2, max_samples=2, warmup_ms=0, max_time_s=5, min_time_s=0)
    t = time_cuda_events(lambda: None, p, flush=None, api=_Clock(log), hold=None)
    assert t.stream_hold == "none" and t.hold_expired == 0


def test_sync_every_sample_keeps_batches_of_one():
    log = []
    p = Protocol(min_samples=3, max_samples=3, warmup_ms=0, max_time_s=5, min_time_s=0)
    p.sync_every_sample = True
    time_cuda_events(
        lambda: log.append("call"), p, flush=None, api=_Clock(log), hold=LoggingHold(log)
    )
    assert [x for x in log if x.startswith("arm")] == ["arm0", "arm0", "arm0"]


_AOT = r"""
import json
from harness_kernels.triton.aot import TARGETS, compile_for
from harness_kernels.stream_hold import _hold_kernel
out = {}
for name in ("sm_90", "gfx942"):
    target = TARGETS[name][0]
    sig = {"flags_ptr": "*i32", "outcomes_ptr": "*i32", "slot": "i32", "timeout_ns": "i32",
           "max_spins": "i32",
           "USE_CLOCK": "constexpr", "ON_AMD": "constexpr"}
    flags = {"USE_CLOCK": name == "sm_90", "ON_AMD": name == "gfx942"}
    info = compile_for(_hold_kernel, target, sig, flags,
                       options={"num_warps": 1})
    asm = info["asm"].get("ptx") or info["asm"].get("amdgcn")
    code = [l.split(";")[0].split("//")[0].strip() for l in asm.splitlines()]
    loads = [l for l in code if l.startswith(("ld.", "global_load", "s_load_dword "))]
    out[name] = {"globaltimer": "%globaltimer" in asm, "loads": loads,
                 "n_spills": info.get("n_spills")}
print(json.dumps(out))
"""


def test_hold_kernel_compiles_with_an_uncached_spin_on_nvidia_and_amd():
    """Compiled ahead of time (no GPU): on sm_90 the spin is a volatile load bounded by
    %globaltimer; on gfx942 it compiles without the clock (the spin bound alone)."""
    import json
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    done = subprocess.run(
        [sys.executable, "-c", _AOT], env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    got = json.loads(done.stdout.strip().splitlines()[-1])
    # the flag is read before the loop and again inside it, uncached, on both vendors
    nv = [x for x in got["sm_90"]["loads"] if x.startswith("ld.volatile.global")]
    amd = [x for x in got["gfx942"]["loads"] if x.startswith("global_load") and "sc0 sc1" in x]
    assert len(nv) == 2 and len(amd) == 2, got
    assert got["sm_90"]["globaltimer"] and not got["gfx942"]["globaltimer"]
    assert got["sm_90"]["n_spills"] == 0


def test_every_slot_launches_with_the_same_pointers_and_an_unspecialised_slot(monkeypatch):
    """Session 90's review: arming slot i with flags[i:] gave Triton a pointer that is 16-byte
    aligned only at i % 4 == 0, so a second variant compiled at the first multi-sample batch.
    Every slot now passes the arrays' bases, and the slot itself is never specialised (1 and
    multiples of 16 would otherwise compile variants of their own)."""
    import harness_kernels.stream_hold as sh

    launched = []

    class Recorder:
        def __getitem__(self, grid):
            return lambda *args, **kw: launched.append(args)

    hold = StreamHold(torch.device("cpu"), capacity=32, max_spins=10)
    monkeypatch.setattr(sh, "_hold_kernel", Recorder())
    for i in (0, 1, 2, 3, 16, 17):
        hold.arm(i)
    pointers = {(a[0].data_ptr(), a[1].data_ptr()) for a in launched}
    assert pointers == {(hold.flags.data_ptr(), hold.outcomes.data_ptr())}
    assert [a[2] for a in launched] == [0, 1, 2, 3, 16, 17]
    src = sh.__file__
    assert '@triton.jit(do_not_specialize=["slot"])' in open(src).read()


def test_expired_mask_names_the_samples_whose_hold_timed_out():
    hold = StreamHold(torch.device("cpu"), capacity=4, max_spins=10)
    hold.arm(1)  # never released
    for i in (0, 2, 3):
        hold.release(i)
        hold.arm(i, reset=False)
    assert hold.expired_mask(4).tolist() == [False, True, False, False]
