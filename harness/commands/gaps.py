"""`harness gaps <results path...> [worst=N] [against=PATH[,PATH...]]`: own kernels against the
fastest vendor row of each point, geomean per run, and why the worst points are behind; with
`against`, how each point's speedup moved from those runs (before) to these (after)."""

from __future__ import annotations

from pathlib import Path

from harness.cliargs import Parser


def main(args: list[str]) -> int:
    from harness.report import gaps
    from harness.report.data import load
    from harness.report.rung_worth import rung_worth

    parser = Parser(
        "gaps",
        "Own kernels against the fastest ok vendor row of each point (named in the reference\n"
        "column): the geomean per run, and why the worst points are behind (tail, memory- or\n"
        "compute-bound).",
    )
    parser.add_argument("paths", nargs="+", help="results folders or runs")
    parser.add_key("worst", gaps.WORST_SHOWN, "points listed per GPU", int)
    parser.add_key(
        "against",
        None,
        "PATH[,PATH...]: runs before a change; prints each point's speedup before and after\n"
        "and their ratio, on the points both measured (holds across machines of one model),\n"
        "split by whether the own config changed (the points that kept theirs: the drift)",
    )
    ns = parser.parse_args(args)
    if ns.worst < 1:
        raise ValueError(f"worst: {ns.worst}; allowed: >= 1")
    before = _against(ns.against)
    frame = gaps.gap_frame(load(ns.paths))
    summary = gaps.gap_summary(frame)
    if summary.empty:
        print("(no problem measured by both an own kernel and a vendor library)")
        return 0
    shown = summary.drop(columns=["worst"])
    print(shown.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    _section(
        "room at the roof by regime (headline kernels; roof: the measured peak, or one cold "
        "read of the point's\nbytes where a read-once run is given and that read is the "
        "slower, as at every memory-bound point; else\nthe read ceiling; either marked "
        "'(datasheet)' where no ceilings run is among the rows, so nothing was measured):",
        gaps.room_by_regime(frame),
    )
    _section(
        "what each ladder rung's feature was worth, within its run (the rung's time over "
        "its own kernel's\nat the points both measured; above 1: the feature the rung removes "
        "paid, or for a rung that pins\none alternative (-persistent, -tiles, -exp-emu), the "
        "own kernel's choice beat it; paid_at: points above 1):",
        rung_worth(frame),
    )
    print(f"\nworst {ns.worst} points per GPU (headline kernels, ladder rungs left out):")
    print(gaps.render_worst(frame, ns.worst, tablefmt="simple"))
    if before is not None:
        from harness.report import gap_change

        print(
            f"\nagainst {ns.against} (before) -> {' '.join(ns.paths)} (after): own vs fastest "
            "vendor per point in each run, change = after / before"
        )
        print(gap_change.render(gap_change.gap_change(gaps.gap_frame(before), frame), ns.worst))
    return 0


def _section(title: str, table) -> None:
    """A titled table of the terminal output, left out where it is empty."""
    if not table.empty:
        print(f"\n{title}")
        print(table.to_string(index=False, float_format=lambda v: f"{v:.3f}"))


def _against(spec: str | None):
    """The `against` runs' rows, read before the (slower) gap analysis so a bad path fails
    first; None when not given."""
    if spec is None:
        return None
    from harness.cliargs import BadInput
    from harness.report.data import load

    paths: list[str | Path] = [p for p in spec.split(",") if p]
    missing = [p for p in paths if not Path(p).exists()]
    if not paths or missing:
        raise BadInput(
            f"against: '{missing[0] if missing else spec}' does not exist; allowed: "
            "against=PATH[,PATH...] (run folders or their parents)"
        )
    return load(paths)
