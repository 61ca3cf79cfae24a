"""nvbench, through cuda-bench (PyPI 0.3.0 = NVIDIA/nvbench tag python-0.3.0), in this process.

The API facts this module relies on, read from the wheel (cuda/bench/__init__.pyi, results/) and
the sources at that tag (python/src/py_nvbench.cpp, nvbench/detail/measure_cold*.cu*,
stdrel_criterion.cxx, benchmark_base.cuh, l2flush.cuh, option_parser.cu):

- Register: `cuda.bench.register(fn)` adds `fn(state: cuda.bench.State)` under `fn.__name__`
  and returns a `Benchmark` (set_timeout, set_min_samples, set_criterion_param_float64 ...).
  The native extension (cuda.bench.cu12 or cu13, chosen by the installed cuda-bindings' major
  version) loads on first use and calls cuInit; it links cudart statically, and shares the
  device's primary context, so its streams are torch's streams too.
- Run: `cuda.bench.run_all_benchmarks(argv)` parses nvbench's own command line and runs every
  registered benchmark in this process, ONCE per process (a second run or a later
  registration raises). So every point is registered first, and the harness times each point
  inside its benchmark function, just before nvbench times the same closure.
  argv used: `--devices N` (one device), `--quiet` (no stdout table), `--md FILE` (nvbench's
  own table and warnings), `--jsonbin FILE` (results, with per-sample side files).
- Stream: `state.exec(launcher, batched=...)` calls `launcher(launch)`; the stream nvbench times
  is `launch.get_stream().addressof()` (a cudaStream_t), wrapped as torch.cuda.ExternalStream so
  the torch closure launches on it (NVIDIA's examples/pytorch_bench.py does the same).
- Cold mode (measure_cold): per sample cudaMemsetAsync over a buffer of exactly the L2 size (a
  WRITE flush of 1x L2), cudaStreamSynchronize, a blocking kernel that holds the stream while
  the launcher queues (timeout 30 s; not in the warm-up), timestamp kernels around the events
  that give each sample's SM clock, and a stream sync after EVERY sample. Warm-up: one run
  (cold_warmup_runs=1). A sample whose clock is below 75% of the default SM clock is discarded
  and nvbench sleeps 50 ms (throttle_threshold 0.75, throttle_recovery_delay 0.05 s).
- Stop rule (criterion "stdrel"): at least min_samples=10 and min-time=0.5 s of summed GPU
  time, then relative stdev < max-noise=0.5%, or the noise estimate stable (its spread < 5%
  over > 64 estimates); else the timeout, 15 s of wall time.
- batched=True (the default) adds the batch (hot) measurement: back-to-back launches, no flush,
  a mean only (nv/batch/time/gpu/mean); batched=False is cold only.
- Results: no Python getter on State; the JSON of `--jsonbin` holds per state the summaries
  nv/cold/time/gpu/{median,mean,q1,q3,stdev/relative} (s), nv/cold/sample_size,
  nv/cold/sm_clock_rate/mean (Hz), nv/batch/time/gpu/mean (s), is_skipped and skip_reason, and
  float32 side files of the sample times and clocks; cuda.bench.results.BenchmarkResult
  .from_json(path) reads all of it.
"""

from __future__ import annotations

import importlib.metadata
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from harness.device import DeviceInfo
from harness.measure.point import first_line
from harness.measure.telemetry import Telemetry, TelemetrySummary

INSTALL_HINT = "pip install 'kernel-harness[nvbench]'"
# nvbench's defaults at python-0.3.0, which the matched protocol copies.
MIN_SAMPLES = 10  # benchmark_base.cuh m_min_samples
MIN_GPU_TIME_S = 0.5  # stdrel "min-time": summed GPU time of the samples
MAX_NOISE = 0.005  # stdrel "max-noise": relative standard deviation of the samples
TIMEOUT_S = 15.0  # benchmark_base.cuh m_timeout: wall time of the sampling loop
COLD_WARMUP_RUNS = 1  # benchmark_base.cuh m_cold_warmup_runs

Closure = Callable[[], object]


def unavailable(device: DeviceInfo) -> str | None:
    """Why nvbench cannot time on `device` in this process, or None."""
    if device.type != "cuda" or device.vendor != "nvidia":
        return f"cuda-bench runs on NVIDIA GPUs only, not {device.vendor} {device.type}"
    try:
        import cuda.bench as bench
    except ImportError:
        return f"cuda-bench not installed: {INSTALL_HINT}"
    try:
        _ = bench._nvbench  # loads the native extension for the installed cuda-bindings
    except Exception as e:  # no cuda-bindings, or a CUDA major without an extension
        return f"cuda-bench unusable: {first_line(e)}"
    return None


def importable() -> bool:
    """Whether cuda-bench is installed (without loading its native extension)."""
    try:
        import cuda.bench  # noqa: F401
    except ImportError:
        return False
    return True


def version() -> str | None:
    try:
        return importlib.metadata.version("cuda-bench")
    except importlib.metadata.PackageNotFoundError:
        return None


@dataclass
class Job:
    """One point for nvbench. `harness()` times it with the harness and returns the checked
    closure to hand nvbench, or (None, why not); `done()` runs once nvbench has timed it."""

    name: str
    harness: Callable[[], tuple[Closure | None, str | None]]
    done: Callable[[], None] = field(default=lambda: None)


def _benchmark(job: Job, batch: bool, telemetry: Telemetry | None, windows: dict) -> Callable:
    """The function nvbench runs for `job`: the harness timings, then nvbench's own."""
    import torch

    def benchmark(state) -> None:
        try:
            closure, why = job.harness()
        except Exception as e:  # an exception must not end nvbench's run of the other points
            closure, why = None, f"error: {first_line(e)}"
        if closure is None:
            state.skip(why or "not ok")
            return
        device, streams = state.get_device(), {}

        def launcher(launch) -> None:
            ptr = launch.get_stream().addressof()
            if ptr not in streams:  # one stream per state: wrap it once
                streams[ptr] = torch.cuda.ExternalStream(ptr, device=device)
            with torch.cuda.stream(streams[ptr]):
                closure()

        if telemetry is not None:
            telemetry.start()
        try:
            state.exec(launcher, batched=batch)
        finally:
            if telemetry is not None:
                windows[job.name] = telemetry.stop()
            job.done()

    benchmark.__name__ = benchmark.__qualname__ = job.name
    return benchmark


def run(
    jobs: Sequence[Job],
    device_index: int,
    out_dir: Path,
    *,
    batch: bool,
    timeout_s: float,
    telemetry: Telemetry | None,
) -> dict[str, dict]:
    """Register every job and run nvbench once over them on one device; the nvbench_* columns
    per job name (a job nvbench never reached is missing). nvbench writes nvbench.json (+ its
    -bin side files) and nvbench.md into `out_dir`."""
    import cuda.bench as bench

    windows: dict[str, TelemetrySummary] = {}
    for job in jobs:
        bench.register(_benchmark(job, batch, telemetry, windows)).set_timeout(timeout_s)
    out_dir.mkdir(parents=True, exist_ok=True)
    json_path, md_path = out_dir / "nvbench.json", out_dir / "nvbench.md"
    argv = ["harness-crosscheck", "--devices", str(device_index), "--quiet"]
    argv += ["--md", str(md_path), "--jsonbin", str(json_path)]
    try:
        bench.run_all_benchmarks(argv)
        out = read_results(json_path)
    except Exception as e:  # nvbench stopped (it writes its JSON only at the end)
        out = {name: _error(f"nvbench stopped: {first_line(e)}") for name in windows}
    for name, tel in windows.items():
        out.setdefault(name, _error("nvbench wrote no result for this point"))
        out[name]["nvbench_sm_clock_mhz"] = tel.sm_clock_mhz
    return out


def _error(reason: str) -> dict:
    return {"nvbench_status": "error", "nvbench_reason": reason}


def read_results(json_path: Path) -> dict[str, dict]:
    """nvbench_* columns per benchmark name from nvbench's JSON (first state of each)."""
    from cuda.bench.results import BenchmarkResult

    result = BenchmarkResult.from_json(json_path)
    out = {}
    for name, sub in result.items():
        if not sub.states:
            continue
        state = sub.states[0]
        summaries = {tag: s.value for tag, s in state.summaries.items()}
        out[name] = columns(summaries, state.samples, state.is_skipped, state.skip_reason)
    return out


def columns(
    summaries: dict[str, float | int | str | None],
    samples_s: Sequence[float] | None,
    skipped: bool = False,
    skip_reason: str | None = None,
) -> dict:
    """nvbench_* columns of one state from its summaries (tag -> value; times in s, clocks in
    Hz) and its cold sample times (s); p10/p90 from the samples where nvbench wrote them."""
    if skipped:
        return {"nvbench_status": "skipped", "nvbench_reason": skip_reason}
    median = summaries.get("nv/cold/time/gpu/median")
    if median is None:
        return _error("no cold sample accepted (every sample below the throttle threshold?)")

    def scaled(tag: str, k: float) -> float | None:
        value = summaries.get(tag)
        return None if value is None else float(value) * k

    out = {
        "nvbench_status": "ok",
        "nvbench_reason": None,
        "nvbench_ms_median": float(median) * 1e3,
        "nvbench_ms_mean": scaled("nv/cold/time/gpu/mean", 1e3),
        "nvbench_noise": scaled("nv/cold/time/gpu/stdev/relative", 1.0),
        "nvbench_samples": summaries.get("nv/cold/sample_size"),
        "nvbench_sm_clock_mhz_own": scaled("nv/cold/sm_clock_rate/mean", 1e-6),
        "nvbench_batch_ms_mean": scaled("nv/batch/time/gpu/mean", 1e3),
    }
    if samples_s is not None and len(samples_s):
        p10, p90 = np.percentile(np.asarray(samples_s, dtype=np.float64) * 1e3, [10, 90])
        out.update(
            nvbench_ms_p10=float(p10),
            nvbench_ms_p90=float(p90),
            nvbench_p90_over_p10=float(p90 / p10) if p10 > 0 else float("inf"),
        )
    return out
