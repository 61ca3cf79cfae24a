"""`harness run [sweep=<preset>] [key=value ...]`: measure a sweep and print its table."""

from __future__ import annotations

import sys
from pathlib import Path

from harness.cliargs import BadInput
from harness.commands.runargs import print_config, run_parser, with_sweep


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
