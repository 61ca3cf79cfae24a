"""Row strings in the markdown and LaTeX tables are escaped: a device name cannot open HTML,
end a markdown cell or break a LaTeX tabular."""

import pandas as pd

from harness.report.tables import Table

NAME = "<b>|x _&% $#{}~^\\"


def _table() -> Table:
    frame = pd.DataFrame({"device": [NAME, "H200"], f"{NAME} TFLOP/s": ["1.5", "2"]})
    return Table("t", "T", "a caption\nover two lines", frame)


def test_markdown_escapes_pipes_and_html():
    md = _table().markdown()
    assert "<b>" not in md and "&lt;b&gt;\\|x" in md and "&amp;" in md
    lines = md.splitlines()
    assert len(lines) == 4  # header, rule, two rows: nothing split a row
    # every line has exactly the 3 unescaped pipes of a 2-column table
    for line in lines:
        assert line.replace("\\|", "").count("|") == 3, line


def test_markdown_newline_stays_in_its_row():
    md = Table("t", "T", "c", pd.DataFrame({"reason": ["first\nsecond"]})).markdown()
    assert len(md.splitlines()) == 3 and "first second" in md


def test_latex_escapes_specials_in_cells_and_headers():
    tex = _table().latex()
    assert "\\_\\&\\%" in tex and "\\$\\#\\{\\}" in tex and "|x" in tex
    assert "\\ensuremath{<}b\\ensuremath{>}" in tex and "<b>" not in tex
    body = tex.split("\\midrule")[1]
    assert " _&%" not in body  # no raw special left in a cell
    assert tex.splitlines()[0] == "% T: a caption over two lines"  # the comment stays one line
