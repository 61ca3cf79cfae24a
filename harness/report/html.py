"""The report: index.html (and index.md) with PNG + SVG figures and tables, from parquet alone.

    harness report <results path...> [out=DIR]
Nothing here imports torch or a kernel: the report builds on a machine without a GPU.
"""

from __future__ import annotations

import html
import shutil
from functools import partial
from pathlib import Path

import pandas as pd

from harness.report import data
from harness.report.built import Report
from harness.report.ceilings import card_hbm_reads
from harness.report.collectives import collective_figures
from harness.report.compose import COMPOSE_NOTE, SELECTIONS
from harness.report.crossgpu_section import cross_gpu_sections
from harness.report.decode_serving import serving_table
from harness.report.decode_serving_figure import serving_figures
from harness.report.figures import FigureFile, slug, styled
from harness.report.gaps import gap_tables
from harness.report.gemm_by_m_figure import gemm_by_m_figures
from harness.report.goals import goals_table
from harness.report.ladder import SINGLE_RUNG_NOTE, ladder_figures
from harness.report.latency import WorkloadReport, workload_reports
from harness.report.layer_ops import layer_ops_figures, layer_ops_table
from harness.report.markdown import render_markdown
from harness.report.peaks import device_peaks, measured_hbm_read
from harness.report.roofline import roofline_figures, rung_roofline_figures, set_aside_figures
from harness.report.roofs_table import cold_read_table, roofs_table
from harness.report.tables import (
    Table,
    composed_table,
    cross_gpu_table,
    cross_vendor_table,
    own_vs_vendor_table,
    set_aside_table,
    status_table,
    unstable_table,
)
from harness.report.thesis_figure import thesis_figures

_CSS = """
body { font-family: system-ui, sans-serif; margin: 1.5em auto; max-width: 1200px; color: #222; }
h1 { font-size: 1.5em; } h2 { margin-top: 2em; border-bottom: 1px solid #ccc; }
figure { margin: 1em 0; }
figure img { max-width: 100%; height: auto; box-sizing: border-box; border: 1px solid #eee; }
figcaption { font-size: 0.85em; color: #444; max-width: 1000px; }
table.data { border-collapse: collapse; font-size: 0.8em; margin: 0.5em 0; }
/* a table wider than the page scrolls inside its own box; the page never scrolls sideways */
table.data { display: block; max-width: 100%; overflow-x: auto; }
table.data th, table.data td { padding: 2px 6px; border-bottom: 1px solid #e4e4e4; text-align: left; }
table.data th { background: #f4f4f4; } details { margin: 0.5em 0; } code { font-size: 0.9em; }
.note { font-size: 0.9em; color: #444; max-width: 1000px; }
"""


def _e(text) -> str:
    return html.escape(str(text))


# What `harness report files=...` writes. The committed reports use "html": every table is in
# index.html already, and its .md/.tex/.html copies and the SVG twins tripled the tree's weight.
FILES = {
    "all": "index.html, index.md, PNG and SVG figures, every table as .md, .tex and .html",
    "html": "index.html and its PNG figures only",
}


def check_files(files: str) -> None:
    """Raise ValueError in one line unless `files` names an entry of FILES."""
    if files not in FILES:
        raise ValueError(f"files: unknown '{files}'; allowed: {', '.join(FILES)}")


def _figure_html(f: FigureFile, full: bool = True) -> str:
    svg = f' <a href="figures/{f.svg.name}">SVG</a>' if full else ""
    return (
        f'<figure><img src="figures/{f.png.name}" alt="{_e(f.caption)}">'
        f"<figcaption>{_e(f.caption)}{svg}</figcaption></figure>"
    )


# files=html keeps a page light enough to commit: a table longer than this shows its first rows
# (each table is sorted so they are the ones to read: worst first, or by GPU and problem) and
# says how to get the rest; files=all writes every row to tables/ and shows them all.
HTML_ONLY_ROWS = 150


def _table_html(t: Table, open_: bool = True, full: bool = True) -> str:
    links = " · ".join(f'<a href="tables/{t.stem}.{x}">{x}</a>' for x in ("md", "tex", "html"))
    cut = not full and len(t.frame) > HTML_ONLY_ROWS
    shown = Table(t.stem, t.title, t.caption, t.frame.head(HTML_ONLY_ROWS)) if cut else t
    more = (
        f" The first {HTML_ONLY_ROWS} of {len(t.frame)} rows are shown; the same command without "
        "files=html writes them all (tables/, as md, tex and html)."
        if cut
        else ""
    )
    body = (
        f'<p class="note">{_e(t.caption)}{_e(more)}{f" ({links})" if full else ""}</p>'
        f"{shown.html()}"
    )
    if open_:
        return f"<h3>{_e(t.title)}</h3>{body}"
    return f"<details><summary>{_e(t.title)} ({len(t.frame)} rows)</summary>{body}</details>"


def inputs_table(df: pd.DataFrame) -> Table:
    rows = []
    for run, g in df.groupby("run_id", sort=True):
        ts = g["timestamp"].dropna()
        rows.append(
            {
                "run": run,
                "sweep": ", ".join(sorted(set(g["sweep"].dropna()))),
                "rows": len(g),
                "ok": int((g["status"] == "ok").sum()),
                "not ok": int((g["status"] != "ok").sum()),
                "devices": ", ".join(sorted({data.device_of(r) for r in g.to_dict("records")})),
                "git": ", ".join(sorted({str(s)[:10] for s in g["git_sha"].dropna()})),
                "from": ts.min()[:19] if len(ts) else "",
                "to": ts.max()[:19] if len(ts) else "",
            }
        )
    return Table("inputs", "Runs", "every run the report read", pd.DataFrame(rows))


def _workload_tables(reports: list[WorkloadReport]) -> list[Table]:
    tables = []
    for wr in reports:
        w = wr.workload
        caption = f"{wr.device}: {w.describe()}; rows: " + "; ".join(
            f"{k} = {v}" for k, v in SELECTIONS.items()
        )
        stem = f"composed-{slug(wr.device)}-{w.name}"
        tables.append(composed_table(wr.table, stem, f"{w.config.name} {w.phase}", caption))
    return tables


def build_report(paths: list[str | Path], out_dir: str | Path, files: str = "all") -> Report:
    """Read the rows under `paths`, write figures, tables, index.html and index.md (what
    FILES[files] says)."""
    check_files(files)
    everything = data.load(paths)
    smoke = data.is_smoke(everything)  # smoke and CPU rows: their own section, no headline
    df, aside = everything[~smoke], everything[smoke]
    out = Path(out_dir)
    for sub in ("figures", "tables"):  # stale files of an earlier build must not linger
        shutil.rmtree(out / sub, ignore_errors=True)
    (out / "index.md").unlink(missing_ok=True)
    out.mkdir(parents=True, exist_ok=True)
    report = Report(out, full=files == "all")
    peaks = device_peaks(df)
    hbm_read = measured_hbm_read(peaks)
    with styled():
        roofs = roofline_figures(df, peaks, out, aside)
        report.workloads = workload_reports(df, peaks, out)
        report.rung_roofs = rung_roofline_figures(df, peaks, out)
        ladders = ladder_figures(df, out)
        colls = collective_figures(df, out)
        aside_peaks = {**device_peaks(aside), **peaks} if len(aside) else peaks
        report.set_aside_figures = set_aside_figures(aside, aside_peaks, out)
        report.cross_gpu = cross_gpu_sections(df, out)
        report.layer_ops = layer_ops_figures(df, peaks, out)
        report.serving_figures = serving_figures(df, hbm_read[0], out)
        report.gemm_figures = gemm_by_m_figures(df, out)
        report.thesis_figures = thesis_figures(df, out)
    report.layer_ops_table = layer_ops_table(df, peaks)
    wl_tables = _workload_tables(report.workloads)
    summary, every = status_table(everything)
    report.set_aside = set_aside_table(aside)
    report.serving = serving_table(df, *hbm_read, card_reads=card_hbm_reads(df))
    report.goals = goals_table(df)
    report.roofs = [roofs_table(df), cold_read_table(df)]
    main_tables = [
        inputs_table(everything),
        cross_gpu_table(df),
        cross_vendor_table(df),
        own_vs_vendor_table(df),
        summary,
        every,
        unstable_table(df),
        *gap_tables(df),
    ]
    report.tables = [
        *main_tables,
        *report.roofs,
        report.goals,
        report.serving,
        *wl_tables,
        report.layer_ops_table,
        report.set_aside,
        *(t for s in report.cross_gpu for t in s.tables),
    ]
    report.figures = [
        *roofs,
        *(w.figure for w in report.workloads),
        *report.layer_ops,
        *report.serving_figures,
        *report.gemm_figures,
        *report.rung_roofs,
        *ladders,
        *report.thesis_figures,
        *colls,
        *report.set_aside_figures,
        *(f for s in report.cross_gpu for f in s.figures),
    ]
    cmd = "harness report " + " ".join(map(str, paths)) + f" out={out_dir}"
    cmd += "" if report.full else f" files={files}"
    ladders_and_colls = (ladders, colls)
    (out / "index.html").write_text(
        _html(report, cmd, roofs, ladders_and_colls, wl_tables, main_tables)
    )
    if not report.full:
        for f in report.figures:
            f.svg.unlink(missing_ok=True)
        return report
    for t in report.tables:
        t.write(out)
    (out / "index.md").write_text(
        render_markdown(report, cmd, roofs, ladders_and_colls, wl_tables, main_tables)
    )
    return report


def _html(r: Report, cmd, roofs, ladders_and_colls, wl_tables, main) -> str:
    ladders, colls = ladders_and_colls
    figure_html = partial(_figure_html, full=r.full)
    table_html = partial(_table_html, full=r.full)
    inputs, cross_gpu, cross_vendor, own_vendor, summary, every, unstable, *gap_tables = main
    gap_sum, room, worst, gaps, worth = gap_tables
    parts = [
        '<!doctype html><html lang="en"><head><meta charset="utf-8">',
        "<title>Kernel characterization report</title>",
        f"<style>{_CSS}</style></head><body>",
        "<h1>Kernel characterization report</h1>",
        f'<p class="note">Built from parquet rows alone by <code>{_e(cmd)}</code>. Speeds are '
        "medians of the raw samples of ok rows; rows with any other status are listed at the "
        "end and never plotted. Smoke and CPU rows are in no figure or table but their own "
        "section.</p>",
        '<p><a href="#roofline">Rooflines</a> · <a href="#workloads">Latency vs batch</a> · '
        '<a href="#layer-ops">Decoder-layer ops</a> · '
        '<a href="#ladder">Ladder</a> · <a href="#collectives">Collectives</a> · '
        '<a href="#gaps">Own vs vendor: where and why</a> · '
        '<a href="#decode-serving">Paged decode as served</a> · '
        '<a href="#tables">Cross-GPU and cross-vendor</a> · '
        '<a href="#set-aside">Smoke and CPU rows</a> · '
        '<a href="#not-ok">Rows not ok</a> · <a href="#unstable">Unstable rows</a></p>',
        table_html(inputs),
        '<h2 id="roofline">Rooflines</h2>',
        *(map(figure_html, roofs) if roofs else ["<p>(no ok GEMM or attention rows)</p>"]),
        *(table_html(t, open_=i == 0) for i, t in enumerate(r.roofs) if not t.frame.empty),
        '<h2 id="workloads">Latency vs batch (LLM workloads)</h2>',
        f'<p class="note">{_e(COMPOSE_NOTE)}</p>',
    ]
    if not r.workloads:
        parts.append(
            "<p>(no row matches a problem of the workload presets; run e.g. "
            "<code>harness run sweep=llama3_8b_decode</code>)</p>"
        )
    for wr, t in zip(r.workloads, wl_tables, strict=True):
        parts += [
            f"<h3>{_e(wr.device)}: {_e(wr.workload.name)}</h3>",
            figure_html(wr.figure),
            table_html(t, open_=False),
        ]
        if wr.missing:
            items = "".join(f"<li><code>{_e(m)}</code></li>" for m in wr.missing)
            parts.append(
                f"<details><summary>{len(wr.missing)} problems without an ok row "
                f"(<code>harness run sweep={_e(wr.workload.name)}</code> measures "
                f"them)</summary><ul>{items}</ul></details>"
            )
    parts += ['<h2 id="layer-ops">Decoder-layer ops (norms, rotary, activation, KV append)</h2>']
    parts += [*map(figure_html, r.layer_ops)] or [
        "<p>(no ok rows of the layer ops; <code>harness run sweep=layer_ops</code>)</p>"
    ]
    if r.layer_ops_table is not None and not r.layer_ops_table.frame.empty:
        parts.append(table_html(r.layer_ops_table, open_=False))
    parts += [p for s in r.cross_gpu for p in s.html(figure_html, table_html)]
    parts += [
        '<h2 id="ladder">Ladder</h2>',
        *map(figure_html, r.rung_roofs),
        *map(figure_html, ladders),
        *([table_html(worth)] if not worth.frame.empty else []),
    ]
    if not ladders:
        parts.append(
            "<p>(no problem measured by two or more own-kernel rungs; "
            "<code>harness run sweep=ladder</code>)</p>"
        )
    if not worth.frame.empty:
        parts.append(f"<p>{SINGLE_RUNG_NOTE}</p>")
    parts += map(figure_html, r.thesis_figures)
    parts += ['<h2 id="collectives">Collectives</h2>', *map(figure_html, colls)]
    if not colls:
        parts.append(
            "<p>(no collective rows; <code>harness run sweep=collectives</code> on a "
            "host with several GPUs)</p>"
        )
    parts += [
        '<h2 id="gaps">Own vs vendor: where and why</h2>',
        *([table_html(r.goals)] if not r.goals.frame.empty else []),
        *map(figure_html, r.gemm_figures),
        table_html(gap_sum),
        table_html(room),
        table_html(worst),
        table_html(gaps, open_=False),
        '<h2 id="decode-serving">Paged decode as served</h2>',
        *map(figure_html, r.serving_figures),
        table_html(r.serving)
        if not r.serving.frame.empty
        else "<p>(no run of <code>harness run sweep=fmha_decode_serving</code> with own-triton "
        "rows and a measured HBM read ceiling)</p>",
    ]
    parts += [
        '<h2 id="tables">Cross-GPU and cross-vendor</h2>',
        table_html(own_vendor),
        table_html(cross_gpu, open_=False),
        table_html(cross_vendor, open_=False),
        '<h2 id="set-aside">Smoke and CPU rows</h2>',
        *([table_html(r.set_aside)] if r.set_aside else []),
        *map(figure_html, r.set_aside_figures),
        '<h2 id="not-ok">Rows not ok</h2>',
        table_html(summary),
        table_html(every, open_=False),
        '<h2 id="unstable">Rows with unstable samples</h2>',
        table_html(unstable),
        "</body></html>",
    ]
    return "\n".join(parts) + "\n"
