"""Command line: `harness <command> [args]`; `harness <command> --help` for a command's keys.

Bad input exits with status 2 and one line naming the key and the allowed values; so does a
full disk or an unwritable path met while writing. Ctrl-C prints "harness: interrupted" and exits
130; the run resumes where it stopped.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from harness.cliargs import HelpShown, Parser

USAGE = """usage: harness <command> [args]        (harness <command> --help: its keys and defaults)

commands:
  main [key=value ...] [report_dir=DIR]   the main job: `run` with the default sweep, then
                                          `report` of that run (default reports/_scratch/<run_id>)
  run  [sweep=<preset>] [key=value ...]   measure a sweep (Hydra overrides; --cfg job prints
                                          the composed config); default sweep: main_gpu on a
                                          GPU, smoke on the CPU
  list [--op OP] [--device DEVICE]        every provider, and whether it runs on this machine
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
  gaps <results path...> [worst=N]        own kernels vs the fastest vendor row per point:
                                          geomean per run, and why the worst points are behind
  compact <run path...> [level=19]        fold each run's row files into one parquet
                                          (<run>/rows.parquet); readers and resume use it
  crosscheck [key=value ...]              a few points timed by the harness and by nvbench
                                          (cuda-bench) on one GPU: ratios and their reasons

exit status: 0 done; 2 bad input, a full disk or an unwritable path (one line
`harness: error: <key>: <what>; allowed: <values>`); 130 interrupted (Ctrl-C; a run resumes)
"""
EXIT_BAD_INPUT = 2  # also a full disk or an unwritable path met while writing: one line
EXIT_INTERRUPTED = 130  # Ctrl-C (128 + SIGINT, as a shell reports it): "harness: interrupted"


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


def _with_sweep(command: str, overrides: list[str]) -> list[str]:
    """The overrides with the command's default sweep for this device added (or put for
    sweep=auto); prepares the environment for that device."""
    from harness.config import default_sweep

    kind = _prepare_environment(_device_override(overrides))
    sweep = f"sweep={default_sweep(command, kind)}"
    if not any(o.startswith("sweep=") for o in overrides):
        return [*overrides, sweep]
    return [sweep if o == "sweep=auto" else o for o in overrides]


def _run_parser(command: str, description: str) -> Parser:
    """A parser for a command that composes a run config: Hydra overrides, --cfg, and help that
    prints the composed config's keys with their values (harness.config.config_help)."""
    from harness.config import compose_run_config, config_help

    sweep_of = "ceilings" if command == "ceilings" else "run"
    parser = Parser(command, description)
    parser.add_argument(
        "--cfg",
        "-c",
        choices=["job"],
        metavar="job",
        help="print the composed config as YAML, exit",
    )
    parser.add_argument("--resolve", action="store_true", help="with --cfg: resolve ${...}")
    parser.add_overrides("Hydra overrides: sweep=NAME, protocol=NAME, key=value (keys below)")
    parser.set_help_tail(
        lambda ov: config_help(compose_run_config(_with_sweep(sweep_of, ov)), sweep_of)
    )
    return parser


def _print_config(overrides: list[str], resolve: bool) -> int:
    """`--cfg job`: the config a run with these overrides would use, as YAML (Hydra's form)."""
    from omegaconf import OmegaConf

    from harness.config import compose_run_config

    print(OmegaConf.to_yaml(compose_run_config(overrides), resolve=resolve), end="")
    return 0


def cmd_run(args: list[str]) -> int:
    parser = _run_parser(
        "run",
        "Measure a sweep: configs/config.yaml composed with a preset from sweeps/ and Hydra\n"
        "overrides. Every point is checked before anything is timed; the rows go to\n"
        "<results_dir>/<run_id>/, and the same results_dir and run_id resume a run.",
    )
    ns = parser.parse_args(args)
    overrides = _with_sweep("run", ns.overrides)
    if ns.cfg:
        return _print_config(overrides, ns.resolve)
    _run(overrides)
    return 0


def _run(overrides: list[str]) -> Path | None:
    """Plan (all input checks), then measure; the run's folder, or None for a dry run."""
    from harness import children, store
    from harness.config import compose_run_config
    from harness.lock import RunLocked, check_not_held
    from harness.outputs import writable_dir
    from harness.plan import plan, shard_of
    from harness.runner import run_sweep
    from harness.runrecord import check_resume, plan_of
    from harness.summary import device_banner, run_table

    try:  # everything that can be wrong with the input is found here, before measuring
        cfg = compose_run_config(overrides)
        if cfg.devices:
            from harness.shard import resolve_devices

            resolve_devices(cfg.devices)
        points, device = plan(cfg)
        shard_of(points, cfg.shard_index, cfg.shard_count)
        if not cfg.dry_run:
            writable_dir("results_dir", cfg.results_dir)
        if cfg.run_id is not None:  # a resume: the same sweep, providers and protocol
            run_path = store.run_dir(cfg.results_dir, cfg.run_id)
            if not children.supervised():  # a worker's parent holds the lock for it
                check_not_held(run_path, cfg.shard_index, cfg.shard_count)
            check_resume(run_path, plan_of(cfg, points), cfg.allow_mixed)
    except ValueError as e:
        raise BadInput(str(e)) from None
    if cfg.dry_run:
        for p in points:
            print(p.label())
        print(f"{len(points)} points on {device.type}:{device.name}")
        return None
    try:
        result = run_sweep(cfg, overrides=overrides)
    except RunLocked as e:  # another live writer has this run: its pid, host and start
        raise BadInput(str(e)) from None
    except ValueError as e:  # the input was validated above: this is a bug, show its traceback
        raise RuntimeError(f"while measuring: {e}") from e
    if result.errors:  # a measuring child refused in one line (a full disk...): the same line
        raise BadInput(result.errors[0])
    df = store.read_rows(result.run_path)
    print(device_banner(df))
    print(run_table(df))
    counts = ", ".join(f"{k}={v}" for k, v in sorted(result.statuses.items())) or "nothing new"
    print(
        f"\nrun {result.run_path}: {result.total} points, {result.already_done} already done, "
        f"{result.measured} measured now ({counts})"
    )
    if result.gave_up:  # points are missing: say so in the exit status, not only on stderr
        print(f"harness: error: {', '.join(result.gave_up)} gave up (see above); run again to "
              "measure the rest", file=sys.stderr)  # fmt: skip
        raise SystemExit(1)
    return Path(result.run_path)


def cmd_list(args: list[str]) -> int:
    from tabulate import tabulate

    from harness.device import get_device
    from harness.problems import PROBLEM_TYPES
    from harness.providers import load_all

    parser = Parser("list", "Every provider, and whether it runs on this machine (or why not).")
    parser.add_argument("--op", choices=sorted(PROBLEM_TYPES), help="only this op's providers")
    parser.add_argument(
        "--device", default="auto", help="auto, cpu, cuda:N, xpu:N (default: %(default)s)"
    )
    ns = parser.parse_args(args)
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

    parser = _run_parser(
        "ceilings",
        "Measured ceilings: run the ceilings sweep (HBM, L2, tensor-core peak per dtype, FP32\n"
        "FMA), then write and print one op=ceiling row per metric, the best ok row of the run.",
    )
    parser.add_key(
        "show", None, "DIR[,DIR...]: print the ceilings, bandwidth and latency tables of runs"
    )
    ns = parser.parse_args(args)
    if ns.show is not None:  # a read-only view of stored rows
        if ns.overrides or ns.cfg:
            raise BadInput("show: prints stored rows, measures nothing; allowed: show=DIR[,DIR]")
        return ceilings([f"show={ns.show}"], None)
    overrides = _with_sweep("ceilings", ns.overrides)
    if ns.cfg:
        return _print_config(overrides, ns.resolve)
    return ceilings(overrides, _prepare_environment(_device_override(overrides)))


def cmd_inspect(args: list[str]) -> int:
    from harness.inspect import cmd_inspect as inspect_kernels

    return inspect_kernels(args)


def cmd_main(args: list[str]) -> int:
    """Measure the default sweep (main_gpu on a GPU, smoke on the CPU), then render its report."""
    import datetime as dt

    parser = _run_parser(
        "main",
        "The main job: `harness run` of the default sweep (main_gpu on a GPU, smoke on the CPU),\n"
        "then `harness report` of that run. run_id defaults to main-<sweep>-<device>-<utc time>.",
    )
    parser.add_key("report_dir", None, "default reports/_scratch/<run_id>")
    ns = parser.parse_args(args)
    overrides = _with_sweep("run", ns.overrides)
    if not any(o.startswith("run_id=") for o in overrides):
        kind = _prepare_environment(_device_override(overrides))
        sweep = next(o.split("=", 1)[1] for o in reversed(overrides) if o.startswith("sweep="))
        stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%S")
        overrides.append(f"run_id=main-{sweep}-{kind}-{stamp}")
    if ns.cfg:
        return _print_config(overrides, ns.resolve)
    if ns.report_dir is not None:  # found before measuring, not after
        from harness.config import compose_run_config
        from harness.outputs import writable_dir

        if not compose_run_config(overrides).dry_run:
            writable_dir("report_dir", ns.report_dir)
    run_path = _run(overrides)
    if run_path is None:  # dry run: nothing measured, nothing to report
        return 0
    return cmd_report(
        [str(run_path), f"out={ns.report_dir or f'reports/_scratch/{run_path.name}'}"]
    )


def cmd_report(args: list[str]) -> int:
    from harness.report.commands import cmd_report as report

    return report(args)


def cmd_compare(args: list[str]) -> int:
    from harness.report.commands import cmd_compare as compare

    return compare(args)


def cmd_gaps(args: list[str]) -> int:
    from harness.report.commands import cmd_gaps as gaps

    return gaps(args)


def cmd_compact(args: list[str]) -> int:
    from harness.compact import cmd_compact as compact

    return compact(args)


def cmd_crosscheck(args: list[str]) -> int:
    from harness.crosscheck.command import cmd_crosscheck as crosscheck

    _prepare_environment(_device_override(args))
    return crosscheck(args)


COMMANDS = {
    "main": cmd_main,
    "run": cmd_run,
    "list": cmd_list,
    "ceilings": cmd_ceilings,
    "inspect": cmd_inspect,
    "report": cmd_report,
    "compare": cmd_compare,
    "gaps": cmd_gaps,
    "compact": cmd_compact,
    "crosscheck": cmd_crosscheck,
}


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else list(argv)
    if args[:1] == ["help"] and len(args) > 1:  # `harness help run` = `harness run --help`
        args = [args[1], "--help"]
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
    except HelpShown:
        return 0
    except (BadInput, ValueError) as e:  # input validation (ConfigError is a ValueError)
        print(f"harness: error: {str(e).splitlines()[0]}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:  # Ctrl-C: finished rows are whole files; the run resumes
        print("harness: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except OSError as e:  # a full disk, a read-only or forbidden path met while writing
        from harness.outputs import filesystem_error

        line = filesystem_error(e)
        if line is None:
            raise
        print(f"harness: error: {line}", file=sys.stderr)
        return EXIT_BAD_INPUT


if __name__ == "__main__":
    from harness.children import arm

    arm()  # a child of a supervising `harness run`: dies with it
    sys.exit(main())
