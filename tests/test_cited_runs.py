"""Every run folder README.md and the docs cite is in the tree, or the citation says it was
moved out (the results READMEs' "Runs moved out" tables restore each). Session 92's re-read
found 14 citations of folders long gone that said nothing of it; a reader who followed one met
a missing path."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# a run folder, a glob of them (`gemm_llama_mid-cutlass*`) or a file under one
CITED = re.compile(r"`results/(\*|h100|h200|h200x2|h100x2)/([A-Za-z0-9_.*\-]+)(/[^`]*)?`")
# A doc that says once, for all its table, that many runs named there left the tree and where
# they are restored from; each of its citations is not marked one by one.
BLANKET = "Many runs named here have since left the tree"


def _docs() -> list[Path]:
    docs = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    return [d for d in docs if BLANKET not in d.read_text()]


def unmarked_citations(text: str, root: Path) -> list[str]:
    """`results/<gpu>/<run>` citations (`*` for both Hopper kinds) whose folder is missing and
    whose next 250 characters do not say it was moved out."""
    out = []
    found = list(CITED.finditer(text))
    for i, m in enumerate(found):
        gpu, run, _ = m.groups()
        if run.startswith("_") or run == "README.md":
            continue
        gpus = ["h100", "h200"] if gpu == "*" else [gpu]
        if all(any(p.is_dir() for p in (root / "results" / g).glob(run)) for g in gpus):
            continue
        # the note belongs to this citation: it ends where the next one starts
        end = min(m.end() + 250, found[i + 1].start() if i + 1 < len(found) else len(text))
        if "moved out" not in text[m.end() : end].lower():
            out.append(f"line {text[: m.start()].count(chr(10)) + 1}: {m.group(0)}")
    return out


@pytest.mark.parametrize("doc", _docs(), ids=lambda p: p.name)
def test_every_cited_run_is_in_the_tree_or_marked_moved_out(doc):
    assert unmarked_citations(doc.read_text(), ROOT) == []


def test_an_unmarked_missing_run_is_found(tmp_path):
    (tmp_path / "results" / "h200" / "kept").mkdir(parents=True)
    (tmp_path / "results" / "h200" / "kept-s2").mkdir()
    text = (
        "`results/h200/kept` ok; `results/h200/gone` | `results/*/kept` needs the H100's too; "
        + "x" * 260
        + "`results/h200/gone2` (Moved out in session 9); `results/h200/kept-s*` a glob; "
        + "`results/h200/gone3/rows.parquet` a file, `results/h200/gone4*` (moved out)"
    )
    assert unmarked_citations(text, tmp_path) == [
        "line 1: `results/h200/gone`",
        "line 1: `results/*/kept`",
        "line 1: `results/h200/gone3/rows.parquet`",  # the next citation's note is not its
    ]
