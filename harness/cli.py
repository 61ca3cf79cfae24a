"""Command line: `harness <command> [args]`; `harness <command> --help` for a command's keys.

Bad input exits with status 2 and one line naming the key and the allowed values; so does a
full disk or an unwritable path met while writing. Ctrl-C prints "harness: interrupted" and exits
130; the run resumes where it stopped.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Callable

from harness.cliargs import BadInput, HelpShown

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
  crossgpu <A> <B> [out=DIR]              GPU B against GPU A under one protocol: per point
                                          speedup vs the roofline's prediction for its regime,
                                          a finding per kernel family, decode latency vs batch
  gaps <results path...> [worst=N]        own kernels vs the fastest vendor row per point:
                                          geomean per run, and why the worst points are behind
  goals <results path...>                 each issue's bar (configs/goals.yaml) per GPU: the
                                          latest run that covers it, its geomean and worst
                                          own / vendor ratio, met or not
  spread <run> <run> [<run>...]           the same points over several runs (processes): the
                                          range of their medians against one run's p90/p10,
                                          and how far each own / vendor ratio moves
  compact <run path...> [level=19] [rewrite=false]
                                          fold each run's row files into one parquet
                                          (<run>/rows.parquet); readers and resume use it
  crosscheck [key=value ...]              a few points timed by the harness and by nvbench
                                          (cuda-bench) on one GPU: ratios and their reasons

exit status: 0 done; 2 bad input, a full disk or an unwritable path (one line
`harness: error: <key>: <what>; allowed: <values>`); 75 stopped at stop_after_s with points
left (a run resumes); 130 interrupted (Ctrl-C; a run resumes)
"""
EXIT_BAD_INPUT = 2  # also a full disk or an unwritable path met while writing: one line
EXIT_INTERRUPTED = 130  # Ctrl-C (128 + SIGINT, as a shell reports it): "harness: interrupted"

__all__ = ["USAGE", "BadInput", "main"]  # BadInput: commands raise it (harness.cliargs)


# `harness <command>` runs harness.commands.<module>.main(args); "list" is a module name too.
COMMANDS = (
    "main",
    "run",
    "list",
    "ceilings",
    "inspect",
    "report",
    "compare",
    "crossgpu",
    "gaps",
    "goals",
    "spread",
    "compact",
    "crosscheck",
)


def _command(name: str) -> Callable[[list[str]], int]:
    """The command's main, imported only when it is the one asked for (the report commands
    must not pay for torch)."""
    return importlib.import_module(f"harness.commands.{name}").main


def _quiet_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's exit flush does not raise again on the
    closed pipe (the recipe in Python's signal docs, "Note on SIGPIPE")."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())


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
        return _command(command)(rest)
    except HelpShown:
        return 0
    except (BadInput, ValueError) as e:  # input validation (ConfigError is a ValueError)
        # the first line of the message; the exception's name when it has none
        first = (str(e).splitlines() or [type(e).__name__])[0]
        print(f"harness: error: {first}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:  # Ctrl-C: finished rows are whole files; the run resumes
        print("harness: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # `harness compare ... | head`: the reader left; not an error
        _quiet_stdout()
        return 0
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
