"""files=html keeps the page light: a long table shows its first rows and says so; files=all shows
every row."""

from __future__ import annotations

import pandas as pd

from harness.report.html import HTML_ONLY_ROWS, _table_html
from harness.report.tables import Table


def _table(n: int) -> Table:
    return Table("t", "A table", "Rows worst first.", pd.DataFrame({"i": range(n)}))


def test_html_only_build_cuts_a_long_table_and_says_so():
    html = _table_html(_table(HTML_ONLY_ROWS + 7), open_=False, full=False)
    assert html.count("<td>") == HTML_ONLY_ROWS  # one cell per row: the first rows only
    assert f"The first {HTML_ONLY_ROWS} of {HTML_ONLY_ROWS + 7} rows are shown" in html
    assert f"({HTML_ONLY_ROWS + 7} rows)" in html  # the summary counts them all


def test_full_build_and_short_tables_show_every_row():
    long = _table_html(_table(HTML_ONLY_ROWS + 7), full=True)
    assert long.count("<td>") == HTML_ONLY_ROWS + 7 and "are shown" not in long
    short = _table_html(_table(3), full=False)
    assert short.count("<td>") == 3 and "are shown" not in short
