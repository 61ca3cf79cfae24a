"""`harness report` and `harness compare`: argument parsing at the edge, typed functions inside.
Bad input raises ValueError with one line; harness.cli turns it into exit status 2."""

from __future__ import annotations

import argparse
from pathlib import Path

DEFAULT_OUT = "reports/_scratch"


class _Parser(argparse.ArgumentParser):
    """argparse that raises one-line ValueErrors instead of printing usage and exiting."""

    def __init__(self, prog: str, allowed: str):
        super().__init__(prog=prog, exit_on_error=False, add_help=False)
        self.allowed = allowed

    def error(self, message: str):
        raise ValueError(f"{self.prog.split()[-1]}: {message}; allowed: {self.allowed}")

    def parse_args(self, args=None, namespace=None):
        try:
            return super().parse_args(args, namespace)
        except argparse.ArgumentError as e:  # exit_on_error=False raises these for bad values
            self.error(str(e))


def _key_values(args: list[str], keys: tuple[str, ...], command: str) -> list[str]:
    """Rewrite key=value tokens (harness style) as --key value; unknown keys are errors."""
    out = []
    for a in args:
        if "=" in a and not a.startswith("-") and not Path(a).exists():
            key, value = a.split("=", 1)
            if key not in keys:
                raise ValueError(f"{command}: unknown key '{key}'; allowed: {', '.join(keys)}")
            out += [f"--{key.replace('_', '-')}", value]
        else:
            out.append(a)
    return out


def cmd_report(args: list[str]) -> int:
    from harness.report.html import build_report

    allowed = "harness report <results path...> [out=DIR]"
    parser = _Parser("harness report", allowed)
    parser.add_argument("paths", nargs="+")
    parser.add_argument("--out", default=DEFAULT_OUT)
    ns = parser.parse_args(_key_values(args, ("out",), "report"))
    report = build_report(ns.paths, ns.out)
    print(f"report: {report.index} ({len(report.figures)} figures, {len(report.tables)} tables)")
    return 0


def cmd_compare(args: list[str]) -> int:
    from harness.report import compare as cmp
    from harness.report.data import load

    allowed = ("harness compare A [B] [--aa] [--all] [threshold=0.02] [markdown=FILE] "
               "[n_boot=2000]")  # fmt: skip
    parser = _Parser("harness compare", allowed)
    parser.add_argument("runs", nargs="+")
    parser.add_argument("--aa", action="store_true")
    parser.add_argument("--all", action="store_true")
    parser.add_argument("--threshold", type=float, default=cmp.DEFAULT_THRESHOLD)
    parser.add_argument("--markdown")
    parser.add_argument("--n-boot", type=int, default=2000)
    keys = ("threshold", "markdown", "n_boot")
    ns = parser.parse_args(_key_values(args, keys, "compare"))
    if len(ns.runs) > 2:
        raise ValueError(f"compare: {len(ns.runs)} runs given; allowed: {allowed}")
    if not 0 < ns.threshold < 1:
        raise ValueError(f"threshold: {ns.threshold}; allowed: between 0 and 1, e.g. 0.02")
    if ns.n_boot < 100:
        raise ValueError(f"n_boot: {ns.n_boot}; allowed: >= 100")
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
        Path(ns.markdown).parent.mkdir(parents=True, exist_ok=True)
        Path(ns.markdown).write_text(md)
        print(f"markdown: {ns.markdown}")
    return 0


def cmd_gaps(args: list[str]) -> int:
    from harness.report import gaps
    from harness.report.data import load

    allowed = "harness gaps <results path...> [worst=15]"
    parser = _Parser("harness gaps", allowed)
    parser.add_argument("paths", nargs="+")
    parser.add_argument("--worst", type=int, default=gaps.WORST_SHOWN)
    ns = parser.parse_args(_key_values(args, ("worst",), "gaps"))
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
