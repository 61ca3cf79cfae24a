"""`harness ceilings [key=value ...]`: run the ceilings sweep (HBM, L2, tensor-core peak per
dtype, FP32 FMA), then write and print one op=ceiling row per metric, the best ok row of the
run; `harness ceilings show=DIR[,DIR...]` prints the ceilings, bandwidth and latency tables of
stored runs."""

from __future__ import annotations

from pathlib import Path

from harness.cliargs import BadInput
from harness.commands.runargs import print_config, run_parser, with_sweep


def main(args: list[str]) -> int:
    parser = run_parser(
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
        return show(ns.show)
    overrides = with_sweep("ceilings", ns.overrides)
    if ns.cfg:
        return print_config(overrides, ns.resolve)
    return measure(overrides)


def show(folders: str) -> int:
    """Print every microbenchmark table the rows under the comma-separated folders support."""
    from harness.report.ceiling_tables import show as show_tables

    paths = [p for p in folders.split(",") if p]
    if not paths:
        raise ValueError("show: no folder given; allowed: show=DIR[,DIR...]")
    missing = [p for p in paths if not Path(p).exists()]
    if missing:
        raise ValueError(
            f"show: '{missing[0]}' does not exist; allowed: run folders or their parents"
        )
    print(show_tables(paths))
    return 0


def measure(overrides: list[str]) -> int:
    """Run the ceilings sweep, write its ceiling rows into the run, print them."""
    import pandas as pd

    from harness import store
    from harness.config import compose_run_config
    from harness.outputs import writable_dir
    from harness.plan import run_plan
    from harness.report.ceiling_tables import ceilings_table
    from harness.report.ceilings import ceiling_rows
    from harness.runner import run_sweep

    cfg = compose_run_config(overrides)
    plan = run_plan(cfg)
    if cfg.dry_run:
        for p in plan.points:
            print(p.label())
        print(f"{len(plan.points)} points on {plan.device.type}:{plan.device.name}")
        return 0
    writable_dir("results_dir", cfg.results_dir)
    result = run_sweep(plan, overrides=overrides)
    df = store.read_rows(result.run_path)
    rows = ceiling_rows(df, result.run_path.name)
    for row in rows:
        store.write_row(result.run_path, row)
    print(ceilings_table(pd.DataFrame(rows)))
    ok = sum(r["status"] == "ok" for r in rows)
    print(
        f"\nrun {result.run_path}: {result.total} points ({result.measured} measured now); "
        f"{ok} of {len(rows)} ceilings measured"
    )
    return 0
