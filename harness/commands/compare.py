"""`harness compare <run A> [<run B>] [--aa]`: per point the B/A median ratio with a bootstrap
CI and a verdict; given one run, the A/A noise floor of its even vs odd samples."""

from __future__ import annotations

from pathlib import Path

from harness.cliargs import Parser
from harness.outputs import writable_file


def main(args: list[str]) -> int:
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
    if (
        not aa
        and result["status_a"].notna().sum()
        and not (result["status_a"].notna() & result["status_b"].notna()).any()
    ):
        raise ValueError(
            f"compare: no point in common: A {cmp.what_ran(a)}, B {cmp.what_ran(b)} "
            "(a point is one problem, provider and protocol)"
        )
    same_status = (result["status_a"] == result["status_b"]) & (result["status_a"] != "ok")
    quiet = (result["verdict"] == "SAME") | same_status  # a status that changed is shown
    shown = result if ns.all else result[~quiet]
    lines = [title, f"threshold +-{ns.threshold:.1%}; {cmp.summary(result)}"]
    if len(ns.runs) == 2:
        lines.insert(1, f"GPU of A: {cmp.gpu_models(a)}; GPU of B: {cmp.gpu_models(b)}")
        if warning := cmp.model_warning(a, b, ns.runs):
            lines.insert(2, warning)
    if aa:
        lines.append(cmp.noise_floor(result, ns.threshold).text(ns.threshold))
        if len(ns.runs) == 1:
            lines.append(
                "(sample noise only: run-to-run drift needs two runs, `harness compare A B --aa`)"
            )
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
