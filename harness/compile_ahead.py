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
point already tuned compiles only its choice. The workers have all exited before the pass
begins, so no compile runs beside a timing. The pass then times the same candidates, which
Triton now loads from disk.

A worker that fails, or the whole step cut at its deadline, costs time and nothing else: the
points it did not compile compile in the pass, as before. Only own-triton providers are sent
(own CUTLASS is built by runner.prebuild), and only on a GPU.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import sys
import time
from collections import defaultdict
from typing import Any

from harness.device import DeviceInfo
from harness.sweep import Point

# Axes that change a point's sizes but rarely which kernels compile: points that differ only in
# these go to one worker, in turn, so the second finds the first's kernels in Triton's cache
# instead of a second worker compiling the same kernels beside it.
SIZE_AXES = ("batch", "kv_len", "m")
MAX_WORKERS = 16
# GPU memory one worker may need beyond its inputs: its CUDA context, Triton's and the
# tuners' buffers (the split partials of a decode are a fraction of its inputs)
WORKER_OVERHEAD_BYTES = 1 << 30
TIMER_NAMES = ("bench_cold", "bench_capped")


def compiles_ahead(provider_name: str, device: DeviceInfo) -> bool:
    """Whether this provider's points are sent: own Triton's, on a GPU."""
    return device.is_gpu and provider_name.startswith("own-triton")


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
    groups: list[list], cores: int, free_gpu_bytes: int | None, asked: int | None = None
) -> int:
    """How many workers: `asked` if given (0: none), else one per group up to the cores less
    two (the measuring process and the system) and MAX_WORKERS, and no more than the GPU's free
    memory holds at the largest point's least traffic three times over (a ragged batch's cache
    is allocated for its longest sequence; outputs; split partials)."""
    if asked is not None:
        return max(0, min(asked, len(groups)))
    n = min(len(groups), max(1, cores - 2), MAX_WORKERS)
    if free_gpu_bytes is not None and groups:
        need = max(3 * task[3].min_bytes() for group in groups for task in group)
        n = min(n, max(1, free_gpu_bytes // (need + WORKER_OVERHEAD_BYTES)))
    return int(n)


def stub_timers() -> None:
    """In a worker: the tuners' timers return at once and the disk tune cache is never written.
    The timers are replaced in harness_kernels.bench_cold before any tuner imports them, and
    again in every module already loaded that bound them by name."""
    import harness_kernels.bench_cold as bench
    import harness_kernels.tune_cache as tune_cache

    originals = {getattr(bench, name) for name in TIMER_NAMES}
    for name in TIMER_NAMES:
        setattr(bench, name, _no_time)
    for module in list(sys.modules.values()):
        if getattr(module, "__name__", "").startswith("harness_kernels"):
            for name in TIMER_NAMES:
                if getattr(module, name, None) in originals:
                    setattr(module, name, _no_time)
    tune_cache.save = _no_save


def _no_time(fn, device, *args, **kwargs) -> float:
    """A timer that times nothing (fn was already launched once by its tuner, which compiled it)."""
    return 1.0


def _no_save(*args, **kwargs) -> None:
    return None


# the worker's own registry and device, made once by _init
_WORKER: dict[str, Any] = {}


def _init(device_spec: str, seed: int, fill: str) -> None:
    stub_timers()  # before the providers import the tuners
    from harness.device import get_device
    from harness.providers import load_all
    from harness.runner import bind_device

    device = get_device(device_spec)
    bind_device(device)
    stub_timers()  # and for any tuner module the providers' import loaded by name
    _WORKER.update(registry=load_all(), device=device, seed=seed, fill=fill)


def _compile_group(group: list[tuple[str, str, str, Any]]) -> list[tuple[str, str | None]]:
    """Prepare each task of one group in this worker: (key, None) or (key, why it failed)."""
    from harness.measure.point import release_memory

    registry, device = _WORKER["registry"], _WORKER["device"]
    done: list[tuple[str, str | None]] = []
    for key, op, provider, problem in group:
        inputs = None
        try:
            inputs = problem.make_inputs(_WORKER["seed"], _WORKER["fill"], device.torch_device)
            registry.get(op, provider).prepare(problem, inputs, device)
            done.append((key, None))
        except Exception as exc:  # noqa: BLE001 - the pass compiles it instead
            done.append((key, f"{type(exc).__name__}: {exc}"[:200]))
        finally:
            inputs = None
            release_memory(device)
    return done


def compile_ahead(
    chosen: list[tuple[str, Point]],
    device: DeviceInfo,
    seed: int,
    fill: str,
    out,
    workers: int | None = None,
    deadline: float | None = None,
) -> dict[str, str | None]:
    """Compile the chosen own-triton points' candidates in worker processes (module docstring);
    key -> None (compiled) or why not, for the points sent. Returns when all are done or at
    `deadline` (epoch seconds), whichever is first; the workers are gone either way."""
    chosen = [(k, p) for k, p in chosen if compiles_ahead(p.provider, device)]
    groups = groups_of(chosen)
    if not groups:
        return {}
    free = None
    if device.type == "cuda":
        import torch

        free = torch.cuda.mem_get_info(device.index)[0]
    n = worker_count(groups, os.cpu_count() or 2, free, workers)
    if n == 0:
        return {}
    started = time.perf_counter()
    spec = f"{device.type}:{device.index}" if device.is_gpu else "cpu"
    results = run_workers(groups, spec, seed, fill, n, deadline)
    failed = sum(why is not None for why in results.values())
    print(
        f"harness: compile ahead: {len(chosen)} own Triton points in {len(groups)} groups on "
        f"{n} workers, {time.perf_counter() - started:.0f} s"
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
    """Prepare every task of `groups` in `workers` spawned processes with the timers stubbed
    (one group per worker, in turn); key -> None or why not. The pool is ended on return."""
    results: dict[str, str | None] = {}
    pool = mp.get_context("spawn").Pool(
        workers, initializer=_init, initargs=(device_spec, seed, fill)
    )
    try:
        pending = [pool.apply_async(_compile_group, (g,)) for g in groups]
        for job, group in zip(pending, groups, strict=True):
            left = None if deadline is None else max(0.0, deadline - time.time())
            try:
                results.update(job.get(timeout=left))
            except mp.TimeoutError:
                results.update({t[0]: "not reached by the deadline" for t in group})
            except Exception as exc:  # noqa: BLE001 - a worker lost: its points compile later
                results.update({t[0]: f"worker failed: {type(exc).__name__}" for t in group})
    finally:
        pool.terminate()
        pool.join()
    return results
