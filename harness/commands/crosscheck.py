"""`harness crosscheck [key=value ...]`: a few points timed by the harness and by nvbench
(cuda-bench) on one GPU, their ratios and the reasons for them (harness.crosscheck)."""

from __future__ import annotations

import pandas as pd

from harness import store
from harness.cliargs import Parser
from harness.commands.runargs import device_override, prepare_environment
from harness.config import compose_run_config
from harness.crosscheck import nvbench
from harness.crosscheck.command import crosscheck, skip_reason, validate
from harness.crosscheck.table import markdown
from harness.plan import run_plan

SWEEP = "crosscheck"
DESCRIPTION = (
    "Time the points of a preset (default sweep=crosscheck) three ways on one GPU, in one\n"
    "process: the harness default protocol, the harness matched to nvbench's cold mode, and\n"
    "nvbench itself through cuda-bench (optional: pip install 'kernel-harness[nvbench]'). Prints\n"
    "and stores per point the ratios and the reason for every systematic difference."
)
EPILOG = (
    "Files: <results_dir>/<run_id>/crosscheck.{parquet,md}, rows/ (the default protocol's rows),\n"
    "run.json, _nvbench/nvbench.{json,md}. Without a CUDA device it prints one line\n"
    "'crosscheck: skipped: <reason>' and exits 0; without cuda-bench it times the two harness\n"
    "protocols only.\n"
    "  harness crosscheck results_dir=results/mine run_id=xcheck1 providers=[cublas]"
)


def boolean(text: str) -> bool:
    if text.lower() in ("true", "1", "yes"):
        return True
    if text.lower() in ("false", "0", "no"):
        return False
    raise ValueError(f"'{text}' is not a boolean; allowed: true, false")


def parser() -> Parser:
    p = Parser("crosscheck", DESCRIPTION, epilog=EPILOG)
    p.add_key(
        "batch",
        False,
        "also nvbench's batch (hot) mean; its clock window then spans both",
        type=boolean,
    )
    p.add_key(
        "nvbench_timeout_s",
        nvbench.TIMEOUT_S,
        "nvbench's timeout per point (its default), also the matched protocol's time cap",
        type=float,
    )
    p.add_overrides("as for `harness run`: sweep=, results_dir=, run_id=, providers=, protocol.*")
    return p


def main(args: list[str]) -> int:
    """`harness crosscheck [key=value ...]`; bad input raises ValueError (exit status 2)."""
    prepare_environment(device_override(args))
    ns = parser().parse_args(args)
    overrides = list(ns.overrides)
    if not any(o.startswith("sweep=") for o in overrides):
        overrides.append(f"sweep={SWEEP}")
    cfg = compose_run_config(overrides)
    plan = run_plan(cfg)  # the config resolved once: points, device, protocol, run id
    device = plan.device
    validate(cfg, plan)
    if cfg.dry_run:
        for p in plan.points:
            print(p.label())
        print(f"{len(plan.points)} points on {device.type}:{device.name}")
        return 0
    why = skip_reason(device)
    if why:
        print(f"crosscheck: skipped: {why}")
        return 0
    try:
        run_path, rows = crosscheck(plan, batch=ns.batch, nvbench_timeout_s=ns.nvbench_timeout_s)
    except ValueError as e:  # the input was validated above: this is a bug, show its traceback
        raise RuntimeError(f"while measuring: {e}") from e
    title = f"crosscheck {run_path.name}: {device.name} (cuda:{device.index})"
    text = markdown(rows, title, ns.nvbench_timeout_s)
    store.write_crosscheck(run_path, pd.DataFrame(rows), text)
    print(f"crosscheck: {len(rows)} points; {run_path / 'crosscheck.md'}\n")
    print(text)
    return 0
