"""The tune pass: before the first timed point, prepare every pending own point once, so the own
tuners (which time their candidates at full load for seconds, and re-time the best at the cap)
all run before any point is timed, never just before their own point's timing.

Why (session 43, one H100, gemm_llama's eight M 4096 shapes, cuBLAS and own CUTLASS, power settle
on): own CUTLASS timed right after its own tuning ran at a median 1,485 MHz, timed with its
tuning read from disk at 1,515 MHz, both at the 700 W cap. Own / cuBLAS was 0.961x and 0.964x in
the two runs that tuned, 0.978x, 0.979x and 0.980x in the three that did not (cuBLAS at 1,530 -
1,560 MHz in all five). The settle (power_settle.settle_power) did not see it: after tuning the board is
already at its power limit, so the settle ended after one slice, but the clock the limiter
allows there is lower. With this pass every timed point follows the same history: its inputs,
its check, the settle, the warm-up.

The pass runs in the measuring process, after the libraries are built (runner.prebuild): the
tuners' choices stay in their in-process caches (and on disk), so the timed pass re-tunes
nothing. Each prepare writes the in-flight marker, so a crash costs that point only; any other
failure is left for the point itself to report. protocol.tune_first=false turns it off.
Each row of a point prepared here says so in its provider_config (`"tune_pass": true`, see
mark), so `harness compare` can tell a run that tuned inside its points from one that did not.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from harness import inflight
from harness.compile_ahead import compile_ahead
from harness.device import DeviceInfo
from harness.measure.point import check_inputs, deadline, release_memory
from harness.measure.protocol import Protocol
from harness.providers import Registry
from harness.sweep import Point


def own_points(todo: list[tuple[str, Point]], registry: Registry, device: DeviceInfo) -> list:
    """The pending points of own providers that can run here (the ones whose prepare may tune)."""
    chosen = []
    for key, point in todo:
        provider = registry.get(point.problem.op, point.provider)
        if provider.family == "own" and provider.why_not(point.problem, device) is None:
            chosen.append((key, point))
    return chosen


def tune_first(
    todo: list[tuple[str, Point]],
    registry: Registry,
    device: DeviceInfo,
    protocol: Protocol,
    run_path: Path,
    shard_index: int,
    out,
    timeout_s: float | None = None,
    force: bool = False,
    stop_at: float | None = None,
    compile_workers: int | None = None,
    processes_here: int = 1,
    record: dict | None = None,
) -> set[str]:
    """Prepare each pending own point once on the inputs its correctness check will draw; the
    keys whose prepare succeeded (a failed one tunes again inside its point). Nothing on the
    CPU (no tuner times there) or with tune_first off, unless `force` (tune_only=true: the
    pass is all that is asked for, so it runs and reports on a CPU too). No point starts after
    `stop_at` (epoch seconds, stop_after_s=): the rest tune inside their points, or in the next
    invocation. First, own Triton's candidates compile in `compile_workers` processes
    (harness.compile_ahead; None: as many as the cores and memory allow where this is the only
    measuring process of the run, `processes_here` 1; 0: none). A failure there is reported and
    the pass goes on: compiling ahead only saves time. `record`, where given, receives what the
    pass printed (points, seconds by provider, failed, not reached; compile ahead's points,
    failures and seconds) for the run's history: how long a cold pass took is provenance."""
    if not force and (not protocol.tune_first or not device.is_gpu):
        return set()
    chosen = own_points(todo, registry, device)
    if not chosen:
        return set()
    if compile_workers != 0 and device.is_gpu:
        # no longer than one point may take (a hung kernel), nor past half the time to
        # stop_after_s: a step that needs more has failed at saving time, and the pass needs it
        now = time.time()
        half = stop_at and now + max(0.0, stop_at - now) / 2
        ends = [t for t in (half, timeout_s and now + timeout_s) if t]
        began = time.perf_counter()
        ahead: dict[str, str | None] | None = None
        try:
            ahead = compile_ahead(
                chosen,
                device,
                *check_inputs(protocol),
                out,
                compile_workers,
                min(ends, default=None),
                processes_here,
            )
        except Exception as exc:  # noqa: BLE001 - the pass compiles everything itself
            print(f"harness: compile ahead failed ({type(exc).__name__}: {exc})", file=out)
        if record is not None:
            record["compile_ahead"] = {
                "points": len(ahead) if ahead is not None else 0,
                "not_compiled": sum(v is not None for v in ahead.values()) if ahead else 0,
                "failed": ahead is None,
                "seconds": round(time.perf_counter() - began, 1),
            }
    started, prepared = time.perf_counter(), set()
    spent: dict[str, float] = {}  # seconds per provider: where a long pass goes
    stopped = 0
    for i, (key, point) in enumerate(chosen):
        if stop_at is not None and time.time() >= stop_at:
            stopped = len(chosen) - i
            break
        inflight.write_marker(run_path, shard_index, key, point.label())
        provider = registry.get(point.problem.op, point.provider)
        began = time.perf_counter()
        try:
            with deadline(timeout_s):
                inputs = point.problem.make_inputs(*check_inputs(protocol), device.torch_device)
                provider.prepare(point.problem, inputs, device)
            prepared.add(key)
        except Exception:  # noqa: BLE001 - the point is measured anyway and says why it fails
            pass
        finally:
            inputs = None
            release_memory(device)
            name = f"{point.provider} {point.problem.op}"  # own-triton tunes GEMM and attention
            spent[name] = spent.get(name, 0.0) + time.perf_counter() - began
    failed = len(chosen) - stopped - len(prepared)
    by_provider = ", ".join(f"{name} {s:.0f} s" for name, s in sorted(spent.items()))
    print(
        f"harness: tune pass: {len(chosen) - stopped} own points prepared in "
        f"{time.perf_counter() - started:.0f} s before the first timed point ({by_provider})"
        + (f"; {failed} failed, their points will say why" if failed else "")
        + (f"; {stopped} not reached by stop_after_s" if stopped else ""),
        file=out,
    )
    if record is not None:
        record.update(
            points=len(chosen) - stopped,
            seconds=round(time.perf_counter() - started, 1),
            by_provider={name: round(s, 1) for name, s in sorted(spent.items())},
            failed=failed,
            not_reached=stopped,
        )
    return prepared


def mark(row: dict) -> dict:
    """`row` with `"tune_pass": true` in its provider_config (a row that has one)."""
    if row.get("provider_config"):
        config = json.loads(row["provider_config"])
        config["tune_pass"] = True
        row["provider_config"] = json.dumps(config, sort_keys=True, default=str)
    return row
