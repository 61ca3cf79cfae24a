"""Measure one point: check against the fp32 reference on fresh inputs, then time; always a row.

Statuses: ok (checked, then timed), wrong (failed the check; never timed, never a speed),
skipped (the provider does not support the point, with its reason), error (exception, OOM or
timeout inside prepare, run or timing, with the reason).

A provider whose Prepared carries `external` (a benchmark binary that makes its own inputs,
checks itself and times itself) is checked and timed by that program instead; its row names the
program's timer, and its speed is still derived from this problem's flops() and min_bytes().

A point is measured by one process (Peers, every op but collectives) or by the ranks of a process
group together (measure.lockstep.Lockstep, collectives): the same steps, check then time, with
the ranks agreeing on each step's outcome so none waits in a collective for a peer that gave up.
"""

from __future__ import annotations

import contextlib
import gc
import json
import signal
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import torch

from harness.device import DeviceInfo
from harness.measure import spread_guard
from harness.measure import timer as timers
from harness.measure.kernel_names import launched_kernels
from harness.measure.power_settle import settle_power
from harness.measure.protocol import Protocol
from harness.measure.spread_guard import p90_over_p10
from harness.measure.telemetry import Telemetry, TelemetrySummary
from harness.measure.timing_columns import timing_columns
from harness.problems import Check, Problem
from harness.problems.base import NON_FINITE, exact_fp32
from harness.provenance import now_iso, software
from harness.providers import Provider, Unsupported

REASON_CHARS = 500  # a row's reason: one line of at most this many characters


class PointTimeout(Exception):
    pass


class PointFailed(Exception):
    """The point's outcome, agreed on by every process measuring it: (status, reason)."""

    def __init__(self, status: str, reason: str) -> None:
        super().__init__(reason)
        self.status, self.reason = status, reason


@contextlib.contextmanager
def deadline(seconds: float | None):
    """Raise PointTimeout in the main thread after `seconds` (a kernel already running on the
    GPU cannot be interrupted; the alarm fires when control returns to Python)."""
    if not seconds or threading.current_thread() is not threading.main_thread():
        yield
        return

    def on_alarm(signum, frame):
        raise PointTimeout(f"timeout: point exceeded {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _sync(device: DeviceInfo) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device.index)
    elif device.type == "xpu":
        torch.xpu.synchronize(device.index)


def _problem_columns(problem: Problem) -> dict:
    cols = dict(problem.axes())
    cols["phase"] = getattr(problem, "phase", None)
    cols["problem"] = problem.label()
    cols["flops"] = float(problem.flops())
    cols["min_bytes"] = float(problem.min_bytes())
    cols["intensity_flop_per_byte"] = problem.intensity()
    return cols


def clip(reason: str) -> str:
    """A reason cut to REASON_CHARS (rows, messages, a rank's error)."""
    return reason[:REASON_CHARS]


def first_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return clip(f"{type(e).__name__}: {text[0] if text else ''}")


def failure_of(e: Exception) -> tuple[str, str]:
    """An exception inside a point -> its row's (status, reason): skipped for Unsupported, error
    for anything else (OOM and timeouts named as such)."""
    if isinstance(e, Unsupported):
        return "skipped", clip(str(e))
    if isinstance(e, torch.OutOfMemoryError):
        return "error", clip("oom: " + first_line(e))
    if isinstance(e, PointTimeout):
        return "error", clip(str(e))
    return "error", first_line(e)


def base_row(
    problem: Problem, provider: Provider, device: DeviceInfo, protocol: Protocol, timer_name: str
) -> dict:
    """Columns every row of a point carries before it is measured: problem, provider, protocol,
    device and provenance (without run_id / point_key / status)."""
    return {
        "op": problem.op,
        "provider": provider.name,
        "family": provider.family,
        **_problem_columns(problem),
        "timer": timer_name,
        "l2": protocol.l2 if device.is_gpu else "n/a",
        "fill": protocol.fill,
        "l2_flush": protocol.l2_flush if device.is_gpu else "n/a",
        "max_spread": protocol.max_spread,
        "warmup_ms": protocol.warmup_ms,
        "rse_target": protocol.rse_target,
        "max_time_s": protocol.max_time_s,
        "min_time_s": protocol.min_time_s,
        "seed": protocol.seed,
        **device.as_row(),
        **software(),
        "timestamp": now_iso(),
    }


def unmeasured_row(
    problem: Problem,
    provider: Provider,
    device: DeviceInfo,
    protocol: Protocol,
    status: str,
    reason: str,
) -> dict:
    """The row of a point that a parent process writes for it without measuring (its rank or
    child died in it, or it is skipped before any rank starts): without run_id / point_key."""
    row = base_row(problem, provider, device, protocol, protocol.resolved_timer(device.type))
    return {**row, "status": status, "reason": clip(reason)}


class Peers:
    """The processes that measure one point. This class: this process alone, where a failure
    anywhere in the point is the point's row. measure.lockstep.Lockstep: the ranks of a process
    group (collectives), which must agree on each step's outcome to stay in step."""

    def agree(self, failure: tuple[str, str] | None) -> tuple[str, str] | None:
        """This process's (status, reason) or None -> the one every process acts on."""
        return failure

    @contextlib.contextmanager
    def step(self) -> Iterator[None]:
        """A step without communication (inputs, prepare, the check): alone, its exception
        simply ends the point; Lockstep turns every rank's outcome into one PointFailed."""
        yield

    def merge(self, check: Check) -> Check:
        """This process's check -> the point's (alone: itself)."""
        return check

    def stray(self, e: Exception) -> tuple[str, str]:
        """An exception outside a step -> the row's (status, reason). Lockstep raises instead:
        its peers may be waiting inside a collective, so the ranks must stop."""
        return failure_of(e)

    def make_inputs(self, problem: Problem, seed: int, fill: str, dev: torch.device) -> dict:
        return problem.make_inputs(seed, fill, dev)

    def time_once(
        self,
        closures: list,
        device: DeviceInfo,
        protocol: Protocol,
        timer_name: str,
        complete: bool,
        on_start: Callable[[], None],
        flusher: timers.L2Flusher | None,
    ) -> timers.Timing:
        """One timing of the point's closures with the protocol's timer."""
        return _time_once(closures, device, protocol, timer_name, complete, on_start, flusher)


ALONE = Peers()


def check_inputs(protocol: Protocol) -> tuple[int, str]:
    """(seed, fill) of the inputs a point's correctness check draws: never zeros, which hide
    output a kernel never wrote."""
    return protocol.seed * 1000 + 1, "randn" if protocol.fill == "zeros" else protocol.fill


def _tensors(value: Any) -> list[torch.Tensor]:
    """Every tensor in a run()'s return value or an inputs dict (nested lists, tuples, dicts)."""
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, list | tuple):
        return [t for v in value for t in _tensors(v)]
    return []


def _poison(outputs: Any, inputs: Any) -> bool:
    """Fill the floating-point output tensors with NaN before the checked call, so a kernel that
    leaves part of its output unwritten fails the check: outputs come from torch.empty, which
    can hand back the memory where the provider before it left the same correct answer (one
    check seed for all), and a region left at zero passes a relative Frobenius error (a 64x64
    tile of a bf16 4096x14336 output: 0.0083 < 0.01). Tensors sharing memory with an input
    (an in-place op's, a cache append's) are left alone. True when any was filled."""
    held = {t.untyped_storage().data_ptr() for t in _tensors(inputs)}
    filled = False
    for t in _tensors(outputs):
        if not t.is_floating_point() or not t.numel() or t.untyped_storage().data_ptr() in held:
            continue
        try:
            with torch.inference_mode():  # an inference tensor takes in-place writes only there
                t.fill_(float("nan"))
            filled = True
        except RuntimeError:  # an expanded or otherwise unwritable view: left as it is
            continue
    return filled


def release_memory(device: DeviceInfo) -> None:
    """Free what a point left behind (its inputs, its prepared launch) before the next one."""
    gc.collect()
    if device.type == "cuda":
        torch.cuda.empty_cache()
    elif device.type == "xpu":
        torch.xpu.empty_cache()


def measure_point(
    problem: Problem,
    provider: Provider,
    device: DeviceInfo,
    protocol: Protocol,
    *,
    telemetry: Telemetry | None = None,
    flusher: timers.L2Flusher | None = None,
    timeout_s: float | None = None,
    peers: Peers = ALONE,
) -> dict:
    """One row (without run_id / point_key) for `problem` run by `provider` on `device`, by
    this process or, with `peers`, by every rank of its process group in step."""
    t0 = time.perf_counter()
    timer_name = protocol.resolved_timer(device.type)
    row = base_row(problem, provider, device, protocol, timer_name)
    why = provider.why_not(problem, device)
    skip = peers.agree(("skipped", why) if why else None)
    if skip:
        return {**row, "status": skip[0], "reason": skip[1], "elapsed_s": time.perf_counter() - t0}
    try:
        with deadline(timeout_s):
            row.update(
                _check_then_time(
                    problem, provider, device, protocol, timer_name, telemetry, flusher, peers
                )
            )
    except PointFailed as e:  # agreed by every rank
        row.update(status=e.status, reason=e.reason)
    except Exception as e:  # any failure inside the point is a row, and the sweep goes on
        status, reason = peers.stray(e)
        row.update(status=status, reason=reason)
    finally:
        release_memory(device)
    row["elapsed_s"] = time.perf_counter() - t0
    return row


def _check_then_time(
    problem, provider, device, protocol, timer_name, telemetry, flusher, peers: Peers
) -> dict:
    dev = device.torch_device
    out: dict = {}
    # 1. correctness on inputs drawn only for the check (never zeros: they hide unwritten output)
    with peers.step():
        inputs = peers.make_inputs(problem, *check_inputs(protocol), dev)
        prepared = provider.prepare(problem, inputs, device)
    if prepared.external is not None:
        del inputs
        return _external_point(problem, prepared, protocol, telemetry)
    raw = prepared.run()  # a collective: every rank calls it
    poisoned = peers is ALONE and _poison([raw, prepared.output(raw)], inputs)
    if poisoned:
        _sync(device)
        raw = prepared.run()  # what a call leaves unwritten now reads NaN, and fails the check
    result = prepared.output(raw)
    _sync(device)
    with peers.step(), exact_fp32():  # a tf32 closure before must not make it TF32
        check = problem.check(result, problem.reference(inputs))
    check = peers.merge(check)
    config = dict(prepared.config)
    if check.ok and device.type == "cuda" and provider.family == "vendor" and peers is ALONE:
        config.update(_vendor_kernels(prepared.run))
    out.update(
        rel_err=check.rel_err,
        max_abs_err=check.max_abs_err,
        tolerance=check.tolerance,
        provider_config=json.dumps(config, sort_keys=True, default=str),
    )
    del inputs, prepared, result
    if not check.ok:
        why = check.reason
        if poisoned and why == NON_FINITE:
            why += (
                " after its output buffers were filled with NaN before the checked call: part "
                "of the output is not written by a call, or a call reads its own last output"
            )
        return {**out, "status": "wrong", "reason": why}

    # 2. timing on the protocol's inputs; every set prepared before the first timed call
    sets, complete = 1, True
    if timer_name == "cuda-graph" and protocol.l2 == "cold":
        free = torch.cuda.mem_get_info(device.index)[0]
        sets, complete = timers.rotation_sets(
            problem.min_bytes(), device.flush_bytes, protocol, free
        )
    closures = []
    with peers.step():
        for i in range(sets):
            data = peers.make_inputs(problem, protocol.seed * 1000 + 2 + i, protocol.fill, dev)
            closures.append(provider.prepare(problem, data, device).run)
    _sync(device)
    settle_s = None
    if peers is ALONE and timer_name == "cuda-events":
        flush = flusher if protocol.l2 == "cold" else None
        settle_s = settle_power(closures[0], flush, protocol, telemetry, lambda: _sync(device))
    timing, unstable, attempts, tel = _time_guarded(
        closures, device, protocol, timer_name, complete, telemetry, flusher, peers
    )
    out.update(timing_columns(problem, timing, tel, unstable, attempts))
    out["power_settle_s"] = settle_s
    out["l2_flush_bytes"] = flushed_bytes(flusher, protocol, timer_name)
    return out


def flushed_bytes(flusher, protocol: Protocol, timer_name: str) -> int | None:
    """Bytes the flush streamed before each sample; None where no flush ran (L2 hot, CPU, or
    a graph replay, which rotates input sets instead)."""
    flushing = timer_name in ("cuda-events", "xpu-events") and protocol.l2 == "cold"
    return flusher.nbytes if flusher is not None and flushing else None


def _vendor_kernels(run) -> dict:
    """{"kernels": [...]} for a vendor row's provider_config: what its library launched
    (kernel_names.py); a profiler failure is recorded, never a failed point."""
    try:
        return {"kernels": launched_kernels(run)}
    except Exception as e:  # CUPTI busy or missing: the row is still measured
        return {"kernels_error": first_line(e)}


_DEVICE_TIMERS = ("cuda-events", "cuda-graph", "xpu-events")


def _time_guarded(
    closures, device, protocol, timer_name, complete, telemetry, flusher, peers: Peers = ALONE
):
    """Time the point; while its samples are too spread (spread_guard), time it again, up to
    protocol.max_attempts on a GPU. Returns (the timing reported, why it is unstable or None,
    attempts, the telemetry of the attempt reported). The first stable attempt is reported,
    else the least spread one, with the clocks, power and throttle reasons of its own window:
    an attempt re-timed for a throttle must not lend its reasons to a stable one.
    (Ranks in lockstep share their samples, so they judge alike.)"""

    def on_start() -> None:  # each attempt's window, after its warm-up
        if telemetry:
            telemetry.start()

    tries = protocol.max_attempts if timer_name in _DEVICE_TIMERS else 1
    attempts: list[tuple[timers.Timing, str | None, TelemetrySummary | None]] = []
    for _ in range(tries):
        t = peers.time_once(closures, device, protocol, timer_name, complete, on_start, flusher)
        tel = telemetry.stop() if telemetry else None
        why = spread_guard.judge(t.samples_ms, t.hold_expired, protocol)
        attempts.append((t, why, tel))
        if why is None:
            break
    timing, why, tel = min(
        attempts, key=lambda a: (a[1] is not None, p90_over_p10(a[0].samples_ms))
    )
    return timing, why, len(attempts), tel


def _time_once(closures, device, protocol, timer_name, complete, on_start, flusher):
    if timer_name == "host":
        return timers.time_host(closures[0], protocol, on_start)
    if timer_name == "cuda-events":
        flush = flusher if protocol.l2 == "cold" else None
        return timers.time_cuda_events(closures[0], protocol, flush, on_start)
    if timer_name == "cuda-graph":
        cold = protocol.l2 == "cold"
        return timers.time_cuda_graph(closures, protocol, cold, complete, on_start)
    if timer_name == "xpu-events" and device.type == "xpu":
        flush = flusher if protocol.l2 == "cold" else None
        return timers.time_xpu(closures[0], protocol, flush, on_start)
    raise ValueError(f"protocol.timer: '{timer_name}' cannot run on {device.type}")


def _external_point(problem: Problem, prepared, protocol: Protocol, telemetry) -> dict:
    """Check, then time, through the provider's own program (Prepared.external).

    Its verdict is the correctness check (rel_err stays null: the outputs never leave it);
    telemetry covers the whole timed invocation, process start-up included."""
    ext = prepared.external
    verdict = ext.check(protocol)
    config = {**prepared.config, **verdict.config}
    dump = lambda c: json.dumps(c, sort_keys=True, default=str)
    if not verdict.ok:
        return {"provider_config": dump(config), "status": "wrong", "reason": verdict.reason}
    if telemetry:
        telemetry.start()
    fields, extra = ext.time(protocol, timers.StopRule(protocol).reason)
    timing = timers.Timing(**fields)
    tel = telemetry.stop() if telemetry else None
    unstable = spread_guard.judge(timing.samples_ms, timing.hold_expired, protocol)
    cols = timing_columns(problem, timing, tel, unstable)
    return {"provider_config": dump({**config, **extra}), **cols}
