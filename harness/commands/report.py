"""`harness report <results path...> [out=DIR] [files=all|html]`: index.html with rooflines,
latency vs batch, ladders and tables, from the parquet rows alone (no GPU, no torch)."""

from __future__ import annotations

from harness.cliargs import Parser
from harness.outputs import writable_dir

DEFAULT_OUT = "reports/_scratch"


def main(args: list[str]) -> int:
    from harness.report.html import build_report, check_files

    parser = Parser(
        "report",
        "index.html with rooflines, latency vs batch of LLM workloads, ladders and tables, from\n"
        "the parquet rows under the given paths alone (no GPU, no torch).",
    )
    parser.add_argument("paths", nargs="+", help="results folders or runs")
    parser.add_key("out", DEFAULT_OUT, "the report's folder")
    parser.add_key(
        "files",
        "all",
        "all: index.html, index.md, PNG+SVG figures, tables as "
        "md/tex/html; html: index.html and PNG figures (what reports/ commits)",
    )
    ns = parser.parse_args(args)
    check_files(ns.files)  # before writable_dir makes the folder
    writable_dir("out", ns.out)
    report = build_report(ns.paths, ns.out, ns.files)
    print(f"report: {report.index} ({len(report.figures)} figures, {len(report.tables)} tables)")
    return 0
