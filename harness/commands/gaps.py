"""`harness gaps <results path...> [worst=N]`: own kernels against the fastest vendor row of
each point, geomean per run, and why the worst points are behind."""

from __future__ import annotations

from harness.cliargs import Parser


def main(args: list[str]) -> int:
    from harness.report import gaps
    from harness.report.data import load

    parser = Parser(
        "gaps",
        "Own kernels against the fastest ok vendor row of each point (named in the reference\n"
        "column): the geomean per run, and why the worst points are behind (tail, memory- or\n"
        "compute-bound).",
    )
    parser.add_argument("paths", nargs="+", help="results folders or runs")
    parser.add_key("worst", gaps.WORST_SHOWN, "points listed per GPU", int)
    ns = parser.parse_args(args)
    if ns.worst < 1:
        raise ValueError(f"worst: {ns.worst}; allowed: >= 1")
    frame = gaps.gap_frame(load(ns.paths))
    summary = gaps.gap_summary(frame)
    if summary.empty:
        print("(no problem measured by both an own kernel and a vendor library)")
        return 0
    shown = summary.drop(columns=["worst"])
    print(shown.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    print(f"\nworst {ns.worst} points per GPU (headline kernels, ladder rungs left out):")
    print(gaps.render_worst(frame, ns.worst, tablefmt="simple"))
    return 0
