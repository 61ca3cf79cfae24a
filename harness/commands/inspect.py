"""`harness inspect [targets=...] [kernels=...]`: registers, spills, shared memory and MMA
instruction counts of the Triton kernels, compiled ahead of time (harness.inspect), printed
and stored as op="inspect" rows."""

from __future__ import annotations

import datetime as dt

from harness.cliargs import BadValue, Parser
from harness.inspect import GROUPS, TARGETS, inspect_kernels, store_rows, table


def _items(value: str) -> list[str]:
    """`a,b` or `[a,b]` -> ['a', 'b']."""
    return [v.strip() for v in value.strip("[]").split(",") if v.strip()]


def _targets(value: str) -> list[str]:
    items = _items(value)
    for t in items:
        if t not in TARGETS:
            raise BadValue(f"targets: unknown '{t}'; allowed: {', '.join(TARGETS)}")
    return items or list(TARGETS)


def _kernels(value: str) -> list[str]:
    return _items(value) or list(GROUPS)


def _write(value: str) -> bool:
    if value.lower() not in ("true", "false"):
        raise BadValue(f"write: '{value}' is not a boolean; allowed: true, false")
    return value.lower() == "true"


def _jobs(value: str) -> int:
    if not value.isdigit() or int(value) < 1:
        raise BadValue(f"jobs: '{value}' is not a positive integer; allowed: 1, 2, ...")
    return int(value)


def _run_id(value: str) -> str:
    from harness.store import check_run_id

    try:
        return check_run_id(value)
    except ValueError as e:
        raise BadValue(str(e)) from None


def parser() -> Parser:
    import harness.inspect

    p = Parser("inspect", (harness.inspect.__doc__ or "").split("\n\n")[0])
    p.add_key("targets", list(TARGETS), "targets to compile for", _targets)
    p.add_key(
        "kernels", list(GROUPS), "groups, or globs over names like gemm:full-bf16-8192", _kernels
    )
    p.add_key("results_dir", "results/_scratch", "rows go to <results_dir>/<run_id>/")
    p.add_key("run_id", None, "default inspect-<utc time>", _run_id)
    p.add_key("write", True, "write op=inspect rows", _write)
    p.add_key("jobs", None, "compile processes (default: one per target)", _jobs)
    return p


def main(args: list[str]) -> int:
    """Compile, print the table, write op="inspect" rows."""
    ns = parser().parse_args(args)
    if ns.write:  # found before compiling for minutes, not after
        from harness.outputs import writable_dir

        writable_dir("results_dir", ns.results_dir)
    results = inspect_kernels(ns.targets, ns.kernels, ns.jobs)
    if not results:
        raise ValueError(
            f"kernels: nothing matches {','.join(ns.kernels)}; allowed: "
            f"{', '.join(GROUPS)} or globs over names like gemm:full-bf16-8192"
        )
    print(table(results))
    if ns.write:
        from harness import store

        stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%S")
        run_id = ns.run_id or f"inspect-{stamp}"
        run_path = store.run_dir(ns.results_dir, run_id)
        for row in store_rows(results, run_id):
            store.write_row(run_path, row)
        print(f"\n{len(results)} rows written to {run_path}")
    counts = {k: sum(r["status"] == k for r in results) for k in ("ok", "skipped", "error")}
    print(f"{counts['ok']} compiled, {counts['skipped']} skipped, {counts['error']} failed")
    return 1 if any(r["name"] == "(worker)" for r in results) else 0
