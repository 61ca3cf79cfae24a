"""`harness report`, `compare` and `gaps`: argument parsing at the edge, typed functions inside.
Bad input raises ValueError with one line; harness.cli turns it into exit status 2."""

from __future__ import annotations

from pathlib import Path

from harness.cliargs import Parser
from harness.outputs import writable_dir, writable_file

DEFAULT_OUT = "reports/_scratch"


def cmd_report(args: list[str]) -> int:
    from harness.report.html import build_report

    parser = Parser(
        "report",
        "index.html with rooflines, latency vs batch of LLM workloads, ladders and tables, from\n"
        "the parquet rows under the given paths alone (no GPU, no torch).",
    )
    parser.add_argument("paths", nargs="+", help="results folders or runs")
    parser.add_key("out", DEFAULT_OUT, "the report's folder")
    parser.add_key("files", "all", "all: index.html, index.md, PNG+SVG figures, tables as "
                   "md/tex/html; html: index.html and PNG figures (what reports/ commits)")
    ns = parser.parse_args(args)
    from harness.report.html import FILES

    if ns.files not in FILES:
        raise ValueError(f"files: unknown '{ns.files}'; allowed: {', '.join(FILES)}")
    writable_dir("out", ns.out)
    report = build_report(ns.paths, ns.out, ns.files)
    print(f"report: {report.index} ({len(report.figures)} figures, {len(report.tables)} tables)")
    return 0


def cmd_compare(args: list[str]) -> int:
    from harness.report import compare as cmp
    from harness.report.data import load

    parser = Parser(
        "compare",
        "Per point, the B/A median latency ratio with a bootstrap CI and a verdict\n"
        "(SAME/FASTER/SLOWER/UNCLEAR); given one run, the A/A noise floor of its even vs odd\n"
        "samples.",
    )
    parser.add_argument("runs", nargs="+", help="run A, and run B (at most two)")
    parser.add_argument("--aa", action="store_true", help="A and B are the same setup: noise floor")
    parser.add_argument("--all", action="store_true", help="also show SAME points")
    parser.add_key("threshold", cmp.DEFAULT_THRESHOLD, "a ratio within 1 +- this is SAME", float)
    parser.add_key("markdown", None, "also write the comparison to this file")
    parser.add_key("n_boot", 2000, "bootstrap resamples", int)
    ns = parser.parse_args(args)
    if len(ns.runs) > 2:
        raise ValueError(f"compare: {len(ns.runs)} runs given; allowed: {parser.usage_line()}")
    if not 0 < ns.threshold < 1:
        raise ValueError(f"threshold: {ns.threshold}; allowed: between 0 and 1, e.g. 0.02")
    if ns.n_boot < 100:
        raise ValueError(f"n_boot: {ns.n_boot}; allowed: >= 100")
    if ns.markdown:  # found before the bootstrap, not after
        writable_file("markdown", ns.markdown)
    a = load([ns.runs[0]])
    if len(ns.runs) == 1:
        a, b = cmp.split_halves(a)
        title = f"A/A within {ns.runs[0]}: even vs odd samples of every point"
        aa = True
    else:
        b = load([ns.runs[1]])
        title = f"B = {ns.runs[1]} against A = {ns.runs[0]} (ratio = B/A latency)"
        aa = ns.aa
    result = cmp.compare_runs(a, b, ns.threshold, ns.n_boot)
    same_status = (result["status_a"] == result["status_b"]) & (result["status_a"] != "ok")
    quiet = (result["verdict"] == "SAME") | same_status  # a status that changed is shown
    shown = result if ns.all else result[~quiet]
    lines = [title, f"threshold +-{ns.threshold:.1%}; {cmp.summary(result)}"]
    if aa:
        lines.append(cmp.noise_floor(result, ns.threshold).text(ns.threshold))
        if len(ns.runs) == 1:
            lines.append("(sample noise only: run-to-run drift needs two runs, "
                         "`harness compare A B --aa`)")  # fmt: skip
    per_device = cmp.by_device(result, ns.threshold)
    if len(per_device) > 1:  # several GPUs took part: does each agree on its own?
        lines += ["", "by GPU:", cmp.render_by_device(per_device, ns.threshold)]
    hidden = len(result) - len(shown)
    table = cmp.render(shown) if len(shown) else "(no point differs)"
    print("\n".join([*lines, "", table]))
    if hidden:
        print(f"({hidden} points SAME or not ok in both runs not shown; --all shows them)")
    if ns.markdown:
        md = "\n\n".join(["# harness compare", *lines, cmp.render(result, "github")]) + "\n"
        Path(ns.markdown).write_text(md)
        print(f"markdown: {ns.markdown}")
    return 0


def cmd_gaps(args: list[str]) -> int:
    from harness.report import gaps
    from harness.report.data import load

    parser = Parser(
        "gaps",
        "Own kernels against the fastest vendor row of each point: the geomean per run, and\n"
        "why the worst points are behind (tail, memory- or compute-bound).",
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
