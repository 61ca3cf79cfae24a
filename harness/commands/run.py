"""`harness run [sweep=<preset>] [key=value ...]`: measure a sweep and print its table."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

from harness.cliargs import BadInput
from harness.commands.runargs import print_config, run_parser, with_sweep

if TYPE_CHECKING:  # the command imports torch (through the plan) only when it runs
    from omegaconf import DictConfig

    from harness.plan import RunPlan


def main(args: list[str]) -> int:
    parser = run_parser(
        "run",
        "Measure a sweep: configs/config.yaml composed with a preset from sweeps/ and Hydra\n"
        "overrides. Every point is checked before anything is timed; the rows go to\n"
        "<results_dir>/<run_id>/, and the same results_dir and run_id resume a run.",
    )
    ns = parser.parse_args(args)
    overrides = with_sweep("run", ns.overrides)
    if ns.cfg:
        return print_config(overrides, ns.resolve)
    run(overrides)
    return 0


def run(overrides: list[str]) -> Path | None:
    """Plan (all input checks), then measure; the run's folder, or None for a dry run."""
    cfg, plan = plan_run(overrides)
    return measure(plan, overrides, dry_run=cfg.dry_run)


def plan_run(overrides: list[str]) -> tuple[DictConfig, RunPlan]:
    """Compose the config and resolve it into the run's one RunPlan; everything that can be
    wrong with the input is found here, before measuring (BadInput, exit 2)."""
    from harness import children
    from harness.config import compose_run_config
    from harness.lock import check_not_held
    from harness.outputs import writable_dir
    from harness.plan import run_plan
    from harness.runrecord import check_resume

    try:
        cfg = compose_run_config(overrides)
        plan = run_plan(cfg)
        if not cfg.dry_run:
            writable_dir("results_dir", cfg.results_dir)
        if cfg.run_id is not None:  # a resume: the same sweep, providers and protocol
            if not children.supervised():  # a worker's parent holds the lock for it
                check_not_held(plan.run_path, plan.shard_index, plan.shard_count)
            check_resume(plan.run_path, plan.record, plan.allow_mixed)
    except ValueError as e:
        raise BadInput(str(e)) from None
    return cfg, plan


def measure(plan: RunPlan, overrides: list[str], dry_run: bool = False) -> Path | None:
    """Measure `plan` and print the run's table; the run's folder (a dry run: print the
    points, None)."""
    from harness import store
    from harness.lock import RunLocked
    from harness.runner import run_sweep
    from harness.summary import device_banner, run_table

    if dry_run:
        for p in plan.points:
            print(p.label())
        print(f"{len(plan.points)} points on {plan.device.type}:{plan.device.name}")
        return None
    try:
        result = run_sweep(plan, overrides=overrides)
    except RunLocked as e:  # another live writer has this run: its pid, host and start
        raise BadInput(str(e)) from None
    except ValueError as e:  # the input was validated above: this is a bug, show its traceback
        raise RuntimeError(f"while measuring: {e}") from e
    if result.errors:  # a measuring child refused in one line (a full disk...): the same line
        raise BadInput(result.errors[0])
    if plan.tune_only:
        print(
            f"run {result.run_path}: tune pass only, nothing timed; {result.total} points, "
            f"{result.already_done} already done (the same command without tune_only times them)"
        )
        _exit_if_stopped(result, tune_only=True)
        return Path(result.run_path)
    df = store.read_rows(result.run_path)
    print(device_banner(df))
    print(run_table(df))
    counts = ", ".join(f"{k}={v}" for k, v in sorted(result.statuses.items())) or "nothing new"
    print(
        f"\nrun {result.run_path}: {result.total} points, {result.already_done} already done, "
        f"{result.measured} measured now ({counts})"
    )
    if result.gave_up:  # points are missing: say so in the exit status, not only on stderr
        print(
            f"harness: error: {', '.join(result.gave_up)} gave up (see above); run again to "
            "measure the rest",
            file=sys.stderr,
        )
        raise SystemExit(1)
    _exit_if_stopped(result)
    return Path(result.run_path)


def _exit_if_stopped(result, tune_only: bool = False) -> None:
    """stop_after_s was reached with work left: say so, and exit 75 so that a script (a lent
    machine's call, a batch job) knows to resume rather than move on."""
    if not result.stopped:
        return
    left = result.total - result.already_done - result.measured
    what = "the tune pass unfinished" if tune_only else f"{left} of {result.total} points left"
    print(
        f"harness: stopped at stop_after_s with {what}; the same command resumes", file=sys.stderr
    )
    from harness.plan import EXIT_STOPPED

    raise SystemExit(EXIT_STOPPED)
