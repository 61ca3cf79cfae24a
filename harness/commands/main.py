"""`harness main [key=value ...] [report_dir=DIR]`: the main job, `run` of the default sweep
(main_gpu on a GPU, smoke on the CPU), then `report` of that run."""

from __future__ import annotations

import datetime as dt

from harness.commands import report
from harness.commands.run import measure, plan_run
from harness.commands.runargs import (
    device_override,
    prepare_environment,
    print_config,
    run_parser,
    with_sweep,
)


def main(args: list[str]) -> int:
    parser = run_parser(
        "main",
        "The main job: `harness run` of the default sweep (main_gpu on a GPU, smoke on the CPU),\n"
        "then `harness report` of that run. run_id defaults to main-<sweep>-<device>-<utc time>.",
    )
    parser.add_key("report_dir", None, "default reports/_scratch/<run_id>")
    ns = parser.parse_args(args)
    overrides = with_sweep("run", ns.overrides)
    if not any(o.startswith("run_id=") for o in overrides):
        kind = prepare_environment(device_override(overrides))
        sweep = next(o.split("=", 1)[1] for o in reversed(overrides) if o.startswith("sweep="))
        stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%S")
        overrides.append(f"run_id=main-{sweep}-{kind}-{stamp}")
    if ns.cfg:
        return print_config(overrides, ns.resolve)
    cfg, plan = plan_run(overrides)  # the config composed and planned once
    if ns.report_dir is not None and not cfg.dry_run:  # found before measuring, not after
        from harness.outputs import writable_dir

        writable_dir("report_dir", ns.report_dir)
    run_path = measure(plan, overrides, dry_run=cfg.dry_run)
    if run_path is None:  # dry run: nothing measured, nothing to report
        return 0
    out = ns.report_dir or f"{report.DEFAULT_OUT}/{run_path.name}"
    return report.main([str(run_path), f"out={out}"])
