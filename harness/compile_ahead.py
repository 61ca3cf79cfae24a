"""Compile ahead: own Triton's candidate kernels compiled in parallel processes before the tune
pass times them, one point at a time, in the measuring process.

Why. A tuner compiles each candidate just before it times it, one at a time, and most of a cold
tune pass is that compiling. On a cold H200 (session 68) own Triton's pass took 424 s for the
serving grid's 32 ragged batch-64 decode points (13 s a point, 45-73 candidates each), while
its item-order rung, whose `tl` candidates were compiled by then, took 4.8 s a point. A lent
machine has 16-128 cores; Triton compiles on one.

How. Each worker runs a point's prepare as the tune pass does, with every tuner timer
(bench_cold, bench_capped) replaced by a stub that returns at once and the disk tune cache's
save turned off. So each candidate is built and launched once, which compiles it into Triton's
on-disk cache (TRITON_CACHE_DIR, which every process shares), and nothing is timed. The stub
makes the first candidate "win", but no decision a worker makes is kept: the tune cache is not
written, and the in-process caches end with the worker. Stored decisions are still read, so a
point already tuned compiles only its choice (each worker launches the prepared point once).
The workers have all exited before the pass begins, so no compile runs beside a timing. The
pass then times the same candidates, which Triton now loads from disk.

A worker that fails, dies or is cut at the deadline costs time and nothing else: the points it
did not compile compile in the pass, as before. Each worker has its own pipe and its own share
of the points, so a worker that dies cannot hold a lock the others need, and every worker still
alive at the deadline is killed. Only providers registered with compiles_ahead are sent (own
Triton's and own Gluon's; own CUTLASS is built by runner.prebuild), only on a GPU, and by
default only where one process measures on the host (devices= runs one per GPU, and one's
compiling would run beside another's timing).
"""

from __future__ import annotations

import math
import multiprocessing as mp
import os
import sys
import time
from collections import defaultdict
from multiprocessing.connection import Connection, wait
from typing import Any, cast

from harness.device import DeviceInfo
from harness.sweep import Point

# Axes that change a point's sizes but rarely which kernels compile: points that differ only in
# these go to one worker, in turn, so the second finds the first's kernels in Triton's cache
# instead of a second worker compiling the same kernels beside it.
SIZE_AXES = ("batch", "kv_len", "m")
MAX_WORKERS = 16
WORKER_HOST_BYTES = 3 << 30  # host memory one worker takes: torch, Triton, a CUDA context
# No worker reporting a point for this long ends the step (a hung launch, a stuck start): one
# decode point's 45-73 candidates compile in well under a minute
STALL_S = 300.0
# GPU memory one worker may need beyond its inputs: its CUDA context, Triton's and the
# tuners' buffers (the split partials of a decode are a fraction of its inputs)
WORKER_OVERHEAD_BYTES = 1 << 30
TIMER_NAMES = ("bench_cold", "bench_capped")


def compiles_ahead(op: str, provider_name: str, device: DeviceInfo) -> bool:
    """Whether this provider's points are sent: on a GPU, those of providers registered with
    compiles_ahead (own Triton's and own Gluon's, whose prepare tunes through the stubbed
    timers)."""
    from harness.providers import REGISTRY, load_all

    load_all()
    return device.is_gpu and REGISTRY.get(op, provider_name).compiles_ahead


def groups_of(chosen: list[tuple[str, Point]]) -> list[list[tuple[str, str, str, Any]]]:
    """The points as tasks (key, op, provider, problem), grouped by everything but their sizes
    (SIZE_AXES) and provider: one group runs in one worker, in turn. Largest groups first."""
    groups: dict[str, list] = defaultdict(list)
    for key, point in chosen:
        axes = {k: v for k, v in point.problem.axes().items() if k not in SIZE_AXES}
        family = (point.problem.op, repr(sorted(axes.items())))
        groups[repr(family)].append((key, point.problem.op, point.provider, point.problem))
    return sorted(groups.values(), key=len, reverse=True)


def worker_count(
    groups: list[list],
    cores: int,
    free_gpu_bytes: int | None,
    asked: int | None = None,
    free_host_bytes: int | None = None,
) -> int:
    """How many workers: `asked` if given (0: none), else one per task up to the cores less two
    (the measuring process and the system) and MAX_WORKERS, no more than the host's free memory
    holds (WORKER_HOST_BYTES each) and the GPU's at the largest point's least traffic three
    times over (a ragged batch's cache is allocated for its longest sequence; outputs; split
    partials). Fewer than two is none: one worker would only move the compiling, not share it."""
    tasks = sum(len(g) for g in groups)
    if asked is not None:
        return max(0, min(asked, tasks))
    n = min(tasks, max(1, cores - 2), MAX_WORKERS)
    if free_host_bytes is not None:
        n = min(n, free_host_bytes // WORKER_HOST_BYTES)
    if free_gpu_bytes is not None and groups:
        need = max(3 * task[3].min_bytes() for group in groups for task in group)
        n = min(n, free_gpu_bytes // (need + WORKER_OVERHEAD_BYTES))
    return int(n) if n >= 2 else 0


def shares(groups: list[list], workers: int) -> list[list]:
    """The tasks dealt to `workers` workers: a group stays whole in one worker unless it holds
    more than an even share (then it is cut into even shares: their kernels may differ, as a
    GEMM's candidates do with M), largest first to the least loaded worker."""
    even = math.ceil(sum(len(g) for g in groups) / workers)
    pieces = [g[i : i + even] for g in groups for i in range(0, len(g), even)]
    out: list[list] = [[] for _ in range(workers)]
    for piece in sorted(pieces, key=len, reverse=True):
        min(out, key=len).extend(piece)
    return [s for s in out if s]


def cores_here() -> int:
    """The cores this process may run on (its affinity, where the OS says)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 2


def host_free_bytes() -> int | None:
    """MemAvailable from /proc/meminfo, or None where there is none."""
    try:
        for line in open("/proc/meminfo"):
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


_ORIGINAL_TIMERS: set = set()  # the real timers, recorded by the first stub_timers call


def stub_timers() -> None:
    """In a worker: the tuners' timers return at once and the disk tune cache is never written.
    The timers are replaced in harness_kernels.bench_cold, so a tuner imported afterwards binds
    the stub, and in every harness_kernels module already loaded that bound a real one."""
    import harness_kernels.bench_cold as bench
    import harness_kernels.tune_cache as tune_cache

    for name in TIMER_NAMES:
        if getattr(bench, name) is not _no_time:
            _ORIGINAL_TIMERS.add(getattr(bench, name))
        setattr(bench, name, _no_time)
    for module in list(sys.modules.values()):
        if getattr(module, "__name__", "").startswith("harness_kernels"):
            for name in TIMER_NAMES:
                if getattr(module, name, None) in _ORIGINAL_TIMERS:
                    setattr(module, name, _no_time)
    tune_cache.save = _no_save


def _no_time(fn, device, *args, **kwargs) -> float:
    """A timer that times nothing (fn was already launched once by its tuner, which compiled
    it). 0 ms: below capped_retime.MIN_MS, so no tuner starts a re-time at the power cap."""
    return 0.0


def _no_save(*args, **kwargs) -> None:
    return None


def _worker(conn, device_spec: str, seed: int, fill: str, tasks: list) -> None:
    """One worker: prepare each task with the timers stubbed; send (key, None or why) per task
    down `conn`. A failure to start is sent for every task."""
    try:
        stub_timers()  # before the providers import the tuners
        import torch

        from harness.device import get_device
        from harness.measure.point import release_memory
        from harness.providers import load_all

        device = get_device(device_spec)
        if device.type == "cuda":  # launches go to the current device (runner.bind_device)
            torch.cuda.set_device(device.index)
        registry = load_all()
        stub_timers()  # any module the providers loaded that bound a timer some other way
    except BaseException as exc:  # noqa: BLE001 - said for every task; the pass compiles them
        for key, *_ in tasks:
            conn.send((key, f"worker did not start: {type(exc).__name__}: {exc}"[:200]))
        conn.close()
        return
    for key, op, provider, problem in tasks:
        inputs = None
        try:
            inputs = problem.make_inputs(seed, fill, device.torch_device)
            prepared = registry.get(op, provider).prepare(problem, inputs, device)
            if prepared.external is None:
                # the chosen launch once: where the tune cache held the point's decisions, the
                # tuner built nothing, and this compiles what the pass will run
                prepared.run()
                if device.type == "cuda":
                    torch.cuda.synchronize()
            conn.send((key, None))
        except Exception as exc:  # noqa: BLE001 - the pass compiles it instead
            conn.send((key, f"{type(exc).__name__}: {exc}"[:200]))
        finally:
            inputs = None
            release_memory(device)
    conn.close()


def compile_ahead(
    chosen: list[tuple[str, Point]],
    device: DeviceInfo,
    seed: int,
    fill: str,
    out,
    workers: int | None = None,
    deadline: float | None = None,
    processes_here: int = 1,
) -> dict[str, str | None]:
    """Compile the chosen own-triton points' candidates in worker processes (module docstring);
    key -> None (compiled) or why not, for the points sent. Returns when all are done or at
    `deadline` (epoch seconds), whichever is first; the workers are gone either way.
    `processes_here`: measuring processes on this host (devices=); more than one sends nothing
    unless `workers` is given."""
    chosen = [(k, p) for k, p in chosen if compiles_ahead(p.problem.op, p.provider, device)]
    groups = groups_of(chosen)
    if not groups or (workers is None and processes_here > 1):
        return {}
    free = None
    if device.type == "cuda":
        import torch

        free = torch.cuda.mem_get_info(device.index)[0]
    n = worker_count(groups, cores_here(), free, workers, host_free_bytes())
    if n == 0:
        return {}
    started = time.perf_counter()
    spec = f"{device.type}:{device.index}" if device.is_gpu else "cpu"
    results = run_workers(groups, spec, seed, fill, n, deadline)
    failed = sum(why is not None for why in results.values())
    print(
        f"harness: compile ahead: {len(chosen)} own Triton points on {n} workers, "
        f"{time.perf_counter() - started:.0f} s"
        + (f"; {failed} not compiled ahead (the tune pass compiles them)" if failed else ""),
        file=out,
    )
    return results


def run_workers(
    groups: list[list[tuple[str, str, str, Any]]],
    device_spec: str,
    seed: int,
    fill: str,
    workers: int,
    deadline: float | None = None,
) -> dict[str, str | None]:
    """Prepare every task of `groups` in `workers` spawned processes with the timers stubbed,
    each with its share (`shares`) and its own pipe; key -> None or why not. A worker that dies
    leaves its unfinished tasks saying so; at `deadline`, or after STALL_S without a report from
    any worker, every worker still running is killed."""
    ctx = mp.get_context("spawn")
    running: dict[Any, tuple[Any, list]] = {}
    for share in shares(groups, workers):
        receive, send = ctx.Pipe(duplex=False)
        proc = ctx.Process(target=_worker, args=(send, device_spec, seed, fill, share), daemon=True)
        proc.start()
        send.close()  # the worker's end: EOF here once the worker has gone
        running[receive] = (proc, share)
    results: dict[str, str | None] = {}
    heard = time.time()  # the last report from any worker
    try:
        while running:
            ends = [heard + STALL_S] + ([deadline] if deadline is not None else [])
            left = min(ends) - time.time()
            if left <= 0:
                break
            for conn in wait(list(running), timeout=left):
                try:
                    key, why = cast(Connection, conn).recv()  # a pipe's receiving end
                    results[key] = why
                    heard = time.time()
                except (EOFError, OSError):  # done, or died: the rest of its share says how
                    proc, share = running.pop(conn)
                    proc.join(timeout=5)
                    for key, *_ in share:
                        results.setdefault(key, f"its worker ended (exit code {proc.exitcode})")
    finally:
        for proc, share in running.values():
            proc.kill()
            proc.join(timeout=5)
            for key, *_ in share:
                results.setdefault(key, "not reached by the deadline (or all workers stalled)")
    return results
