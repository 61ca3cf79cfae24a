"""`harness spread <run> <run> [<run>...]`: the same points measured by several runs (each a
process of its own): per point and provider the range of the runs' medians against the spread
inside one run, and how far each own / vendor ratio moves from run to run."""

from __future__ import annotations

from tabulate import tabulate

from harness.cliargs import Parser


def main(args: list[str]) -> int:
    from harness.report import spread
    from harness.report.data import load

    parser = Parser(
        "spread",
        "The same points measured by several runs (each run is a process of its own): per point\n"
        "and provider the lowest and highest of the runs' medians, `between` (their ratio)\n"
        "against `within` (the widest p90/p10 inside one run), and per own provider the speedup\n"
        "over the fastest vendor row of each run (lowest, median and highest over the runs).\n"
        "`wider` marks a point whose runs differ more than one run's samples do; `process`, one\n"
        "whose runs were all on one machine too: a single run cannot see that spread.",
    )
    parser.add_argument("runs", nargs="+", help="two runs or more (folders of runs also work)")
    parser.add_key("worst", 15, "points listed, the widest between-run spread first", int)
    ns = parser.parse_args(args)
    if ns.worst < 1:
        raise ValueError(f"worst: {ns.worst}; allowed: >= 1")
    df = load(ns.runs)
    if df.empty or df["run_id"].nunique() < 2:
        raise ValueError(
            f"runs: {df['run_id'].nunique() if not df.empty else 0} found; allowed: >= 2"
        )
    lines = spread.spread_frame(df)
    if lines.empty:
        print("(no point measured ok by two runs or more)")
        return 0
    print(f"{df['run_id'].nunique()} runs\n")
    print(spread.summary(lines).to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    protocol = spread.varying(lines)  # timer, l2, ... where the runs given differ in them
    widest = lines.sort_values("between", ascending=False).head(ns.worst)
    columns = ["device", "problem", "provider", *protocol, "runs", "machines", "min_us"]
    columns += ["median_us", "max_us", "between", "within", "wider", "process"]
    print(f"\nwidest {len(widest)} between-run spreads (us; between = max / min of the medians):")
    print(_table(widest[columns]))
    ratios = spread.ratio_frame(df)
    if not ratios.empty:
        lowest = ratios.sort_values("lowest").head(ns.worst)
        keep = ["device", "problem", "provider", *protocol, "runs", "lowest", "median", "highest"]
        print(
            f"\n{len(lowest)} lowest own speedups over the fastest vendor row of each run "
            "(vendor time over own time; lowest, median and highest over the runs):"
        )
        print(_table(lowest[keep]))
    return 0


def _table(frame) -> str:
    return tabulate(frame, headers="keys", tablefmt="simple", showindex=False, floatfmt=".3f")
