"""Command line: `harness run sweep=<preset> [overrides]`, `harness list`.

Bad input exits with status 2 and one line naming the key and the allowed values.
"""

from __future__ import annotations

import os
import sys

USAGE = """usage: harness <command> [args]

commands:
  main [key=value ...] [report_dir=DIR]   the main job: `run` with the default sweep, then
                                          `report` of that run (default reports/_scratch/<run_id>)
  run  [sweep=<preset>] [key=value ...]   measure a sweep (Hydra overrides); default sweep:
                                          main_gpu on a GPU, smoke on the CPU
  list [--op gemm|attention]              every provider, and whether it runs on this machine
  ceilings [key=value ...]                measured ceilings (HBM, L2, tensor-core peak per
                                          dtype, FP32 FMA) as op=ceiling rows; show=DIR[,DIR]
                                          prints ceilings, bandwidth and latency tables
  inspect [targets=...] [kernels=...]     registers, spills, shared memory and MMA instruction
                                          counts of the Triton kernels for sm_80, sm_90,
                                          gfx90a, gfx942 (compiled ahead of time, no GPU)
  report <results path...> [out=DIR]      index.html with rooflines, latency vs batch of LLM
                                          workloads, ladders and tables, from parquet alone
  compare <run A> [<run B>] [--aa]        per point B/A median ratio, bootstrap CI and verdict
                                          (SAME/FASTER/SLOWER/UNCLEAR); one run: A/A noise floor
  gaps <results path...> [worst=15]       own kernels vs the fastest vendor row per point:
                                          geomean per run, and why the worst points are behind
"""
EXIT_BAD_INPUT = 2


class BadInput(Exception):
    pass


def _device_override(overrides: list[str]) -> str:
    for o in overrides:
        if o.startswith("device="):
            return o.split("=", 1)[1]
    return "auto"


def _prepare_environment(device_spec: str) -> str:
    """Resolve the device and, for the CPU, switch on the Triton interpreter before any kernel
    module is imported (triton.jit decides at decoration time)."""
    from harness.device import parse_device

    kind, _ = parse_device(device_spec)
    if kind == "cpu":
        os.environ.setdefault("TRITON_INTERPRET", "1")
    return kind


def cmd_run(args: list[str]) -> int:
    from harness import store
    from harness.config import CPU_DEFAULT_SWEEP, GPU_DEFAULT_SWEEP, compose_run_config
    from harness.runner import plan, run_sweep, shard_of
    from harness.summary import device_banner, run_table

    overrides = list(args)
    kind = _prepare_environment(_device_override(overrides))
    default_sweep = CPU_DEFAULT_SWEEP if kind == "cpu" else GPU_DEFAULT_SWEEP
    if not any(o.startswith("sweep=") for o in overrides):
        overrides.append(f"sweep={default_sweep}")
    overrides = [f"sweep={default_sweep}" if o == "sweep=auto" else o for o in overrides]
    try:  # everything that can be wrong with the input is found here, before measuring
        cfg = compose_run_config(overrides)
        if cfg.devices:
            from harness.shard import resolve_devices

            resolve_devices(cfg.devices)
        points, device = plan(cfg)
        shard_of(points, cfg.shard_index, cfg.shard_count)
    except ValueError as e:
        raise BadInput(str(e)) from None
    if cfg.dry_run:
        for p in points:
            print(p.label())
        print(f"{len(points)} points on {device.type}:{device.name}")
        return 0
    try:
        result = run_sweep(cfg, overrides=overrides)
    except ValueError as e:  # the input was validated above: this is a bug, show its traceback
        raise RuntimeError(f"while measuring: {e}") from e
    df = store.read_rows(result.run_path)
    print(device_banner(df))
    print(run_table(df))
    counts = ", ".join(f"{k}={v}" for k, v in sorted(result.statuses.items())) or "nothing new"
    print(
        f"\nrun {result.run_path}: {result.total} points, {result.already_done} already done, "
        f"{result.measured} measured now ({counts})"
    )
    return 0


def cmd_list(args: list[str]) -> int:
    import argparse

    from tabulate import tabulate

    from harness.device import get_device
    from harness.providers import load_all

    parser = argparse.ArgumentParser(prog="harness list", exit_on_error=False)
    from harness.problems import PROBLEM_TYPES

    parser.add_argument("--op", choices=sorted(PROBLEM_TYPES))
    parser.add_argument("--device", default="auto")
    try:
        ns = parser.parse_args(args)
    except (argparse.ArgumentError, SystemExit) as e:
        raise BadInput(
            f"list: {e}; allowed: --op {'|'.join(sorted(PROBLEM_TYPES))}, --device auto|cpu|cuda:N"
        ) from None
    _prepare_environment(ns.device)
    device = get_device(ns.device)
    rows = []
    for p in load_all():
        if ns.op and p.op != ns.op:
            continue
        why = p.why_unavailable(device)
        rows.append(
            [
                p.op,
                p.name,
                p.family,
                "/".join(p.vendors),
                "available" if why is None else f"unavailable: {why}",
                p.description,
            ]
        )
    print(f"device: {device.type}:{device.index} {device.name} ({device.vendor}, {device.arch})")
    print(
        tabulate(
            rows,
            headers=["op", "provider", "family", "vendors", "on this machine", "what"],
            tablefmt="github",
        )
    )
    return 0


def cmd_ceilings(args: list[str]) -> int:
    from harness.microbench.ceilings import cmd_ceilings as ceilings

    if any(a.startswith("show=") for a in args):  # a read-only view of stored rows
        return ceilings(args, None)
    return ceilings(args, _prepare_environment(_device_override(args)))


def cmd_inspect(args: list[str]) -> int:
    from harness.inspect import cmd_inspect as inspect_kernels

    return inspect_kernels(args)


def cmd_main(args: list[str]) -> int:
    """Measure the default sweep (main_gpu on a GPU, smoke on the CPU), then render its report."""
    import datetime as dt

    from harness.config import CPU_DEFAULT_SWEEP, GPU_DEFAULT_SWEEP

    results = "results/_scratch"
    args = list(args)
    out = next((a.split("=", 1)[1] for a in args if a.startswith("report_dir=")), None)
    args = [a for a in args if not a.startswith("report_dir=")]
    if not any(a.startswith("run_id=") for a in args):
        kind = _prepare_environment(_device_override(args))
        sweep = CPU_DEFAULT_SWEEP if kind == "cpu" else GPU_DEFAULT_SWEEP
        stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%S")
        args.append(f"run_id=main-{sweep}-{kind}-{stamp}")
    for a in args:
        if a.startswith("results_dir="):
            results = a.split("=", 1)[1]
    run_id = next(a.split("=", 1)[1] for a in args if a.startswith("run_id="))
    rc = cmd_run(args)
    if rc:
        return rc
    out = out or f"reports/_scratch/{run_id}"
    rc = cmd_report([f"{results}/{run_id}", f"out={out}"])
    print(f"report: {out}/index.html")
    return rc


def cmd_report(args: list[str]) -> int:
    from harness.report.commands import cmd_report as report

    return report(args)


def cmd_compare(args: list[str]) -> int:
    from harness.report.commands import cmd_compare as compare

    return compare(args)


def cmd_gaps(args: list[str]) -> int:
    from harness.report.commands import cmd_gaps as gaps

    return gaps(args)


COMMANDS = {
    "main": cmd_main,
    "run": cmd_run,
    "list": cmd_list,
    "ceilings": cmd_ceilings,
    "inspect": cmd_inspect,
    "report": cmd_report,
    "compare": cmd_compare,
    "gaps": cmd_gaps,
}


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else list(argv)
    if not args or args[0] in ("-h", "--help", "help"):
        print(USAGE)
        return 0 if args else EXIT_BAD_INPUT
    command, rest = args[0], args[1:]
    if command not in COMMANDS:
        print(
            f"harness: error: command: unknown '{command}'; allowed: {', '.join(COMMANDS)}",
            file=sys.stderr,
        )
        return EXIT_BAD_INPUT
    try:
        return COMMANDS[command](rest)
    except (BadInput, ValueError) as e:  # input validation (ConfigError is a ValueError)
        print(f"harness: error: {str(e).splitlines()[0]}", file=sys.stderr)
        return EXIT_BAD_INPUT


if __name__ == "__main__":
    sys.exit(main())
