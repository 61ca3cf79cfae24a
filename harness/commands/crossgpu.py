"""`harness crossgpu A B [out=DIR] [files=md,tex] [points=false] [n_boot=200]`: per point the
speedup of GPU B over GPU A beside what the two GPUs' measured ceilings predict for its regime,
a summary and a finding per kernel family, and decode latency versus batch on both GPUs."""

from __future__ import annotations

from pathlib import Path

from harness.cliargs import BadValue, Parser, true_or_false
from harness.outputs import writable_dir

FILES = ("md", "tex")


def _files(text: str) -> tuple[str, ...]:
    names = tuple(f for f in text.split(",") if f)
    bad = [f for f in names if f not in FILES]
    if bad or not names:
        raise BadValue(f"files: '{text}'; allowed: a comma-separated subset of {','.join(FILES)}")
    return names


def main(args: list[str]) -> int:
    from harness.report.crossgpu import with_ceilings
    from harness.report.crossgpu_tables import build, latex, markdown
    from harness.report.data import load

    parser = Parser(
        "crossgpu",
        "Per point the speedup of GPU B over GPU A beside what the GPUs' measured ceilings\n"
        "predict for its regime (HBM read ratio when memory-bound, the dtype's tensor-ceiling\n"
        "ratio when compute-bound); a summary and a finding per kernel family; Llama-3-8B and\n"
        "-70B decode latency versus batch on both GPUs and the batch where each turns\n"
        "compute-bound. Points pair only where every protocol column matches.",
    )
    parser.add_argument(
        "a",
        metavar="A",
        help="results folder or run of GPU A (the baseline); "
        "a run without ceilings takes those of the folder holding it",
    )
    parser.add_argument("b", metavar="B", help="results folder or run of GPU B")
    parser.add_key("out", None, "also write crossgpu.md / crossgpu.tex into this folder")
    parser.add_key("files", ",".join(FILES), "which files out= writes: md, tex or md,tex", _files)
    parser.add_key(
        "points",
        False,
        "also print every paired point (files always hold them)",
        true_or_false("points"),
    )
    parser.add_key("n_boot", 200, "bootstrap resamples per speedup CI (0: no CI)", int)
    ns = parser.parse_args(args)
    if ns.n_boot < 0 or 0 < ns.n_boot < 100:
        raise ValueError(f"n_boot: {ns.n_boot}; allowed: 0 or >= 100")
    if isinstance(ns.files, str):  # the default, not parsed by _files
        ns.files = _files(ns.files)
    if ns.out:  # found before the pairing, not after
        writable_dir("out", ns.out)
    sides, notes = [], []
    for side, path in (("A", ns.a), ("B", ns.b)):  # a run folder: its results folder's ceilings
        rows, near = with_ceilings(load([path]), path)
        sides.append(rows)
        if near:
            notes.append(f"Ceilings of {side} ({path} holds none) from {near}.")
    rows_a, rows_b = sides
    x = build(rows_a, rows_b, ns.n_boot, notes)
    print(markdown(x, points=ns.points))
    if ns.out:
        written = []
        for ext in ns.files:
            path = Path(ns.out) / f"crossgpu.{ext}"
            path.write_text(markdown(x) + "\n" if ext == "md" else latex(x))
            written.append(str(path))
        print(f"written: {', '.join(written)}")
    return 0
