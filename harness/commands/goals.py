"""`harness goals <results path...>`: each goal of configs/goals.yaml (the open issues' bars)
checked against the rows: per goal and GPU the run that decides it, its geomean and worst own /
vendor ratio, and whether the bar is met (harness.report.goals says how a run is chosen)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from tabulate import tabulate

from harness.cliargs import Parser, true_or_false

if TYPE_CHECKING:
    from harness.report.tables import Table


def main(args: list[str]) -> int:
    from harness.report import goals
    from harness.report.data import load

    parser = Parser(
        "goals",
        "Each goal (an issue's bar: own provider, vendor reference, points, geomean and min of\n"
        "vendor time over own time) checked against the rows under the paths, per GPU. The\n"
        "deciding run is the latest that covers the goal's points, not the best:\n"
        "`covering_runs` and `range` give how many runs covered it and their geomeans' spread.\n"
        "An own row that is not ok (wrong, error) at a covered point fails the goal.",
    )
    parser.add_argument("paths", nargs="+", metavar="PATH", help="results folders or runs")
    parser.add_key("goals", str(goals.GOALS_FILE), "the YAML list of goals", str)
    parser.add_key(
        "every",
        False,
        "one line per covering run, not only the latest",
        true_or_false("every"),
    )
    parser.add_key(
        "out", None, "also write the table to this file: .md (GitHub) or .tex (booktabs)", str
    )
    ns = parser.parse_args(args)
    if ns.out and Path(ns.out).suffix not in (".md", ".tex"):
        raise ValueError(f"out: '{ns.out}'; allowed: a path ending .md or .tex")
    chosen = goals.load_goals(ns.goals)
    table = goals.verdicts(load(ns.paths), chosen, every=ns.every)
    shown = table.astype(object).where(table.notna(), "")  # a blank, not nan, where none
    print(tabulate(shown, headers="keys", tablefmt="simple", showindex=False, floatfmt=".3f"))
    if ns.out:
        Path(ns.out).write_text(_written(goals.as_table(table), _command_line(args), ns.out))
        print(f"\nwritten: {ns.out}")
    return 0


def _command_line(args: list[str]) -> str:
    """The command as typed, less `out=`: the file says what made it, not where it went."""
    return " ".join(["harness goals", *(a for a in args if not a.startswith("out="))])


def _written(shown: Table, command: str, out: str) -> str:
    """The table headed by the command that made it, so a cited copy carries its provenance."""
    if out.endswith(".tex"):
        return f"% written by `{command}`\n{shown.latex()}"
    return (
        f"# {shown.title}\n\nWritten by `{command}` from the rows under its paths. "
        f"{shown.caption}\n\n{shown.markdown()}\n"
    )
