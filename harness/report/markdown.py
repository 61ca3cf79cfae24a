"""The report as Markdown (index.md), section for section beside harness.report.html's
index.html, for a repository page or a thesis appendix: figures as PNG with their SVG linked,
each long table linked under tables/ rather than inlined."""

from __future__ import annotations

from harness.report.built import Report
from harness.report.compose import COMPOSE_NOTE
from harness.report.ladder import SINGLE_RUNG_NOTE


def render_markdown(r: Report, cmd, roofs, ladders_and_colls, wl_tables, main) -> str:
    """index.md: the report's sections as Markdown, each table linked under tables/."""
    ladders, colls = ladders_and_colls
    inputs, cross_gpu, cross_vendor, own_vendor, summary, _, unstable, *gap_tables = main
    gap_sum, room, worst, gaps, worth = gap_tables
    out = [
        "# Kernel characterization report",
        "",
        f"Built from parquet rows alone by `{cmd}`. Figures link their SVG; "
        "`tables/` holds every table as .md, .tex (booktabs) and .html.",
        "",
        "## Runs",
        "",
        inputs.markdown(),
        "",
        "## Rooflines",
        "",
    ]
    fig = lambda f: [
        f"![{f.stem}](figures/{f.png.name})",
        "",
        f"{f.caption} ([SVG](figures/{f.svg.name}))",
        "",
    ]
    for f in roofs:
        out += fig(f)
    for i, t in enumerate(r.roofs):
        if t.frame.empty:
            continue
        shown = t.markdown() if i == 0 else f"Every size: [tables/{t.stem}.md](tables/{t.stem}.md)"
        out += [f"### {t.title}", "", t.caption, "", shown, ""]
    out += ["## Latency vs batch (LLM workloads)", "", COMPOSE_NOTE, ""]
    for wr, t in zip(r.workloads, wl_tables, strict=True):
        out += [
            f"### {wr.device}: {wr.workload.name}",
            "",
            *fig(wr.figure),
            f"Composed steps: [tables/{t.stem}.md](tables/{t.stem}.md); "
            f"{len(wr.missing)} problems without an ok row.",
            "",
        ]
    out += ["## Decoder-layer ops (norms, rotary, activation, KV append)", ""]
    for f in r.layer_ops:
        out += fig(f)
    if r.layer_ops_table is not None and not r.layer_ops_table.frame.empty:
        t = r.layer_ops_table
        out += [f"Every point: [tables/{t.stem}.md](tables/{t.stem}.md)", ""]
    out += [line for s in r.cross_gpu for line in s.markdown()]
    out += ["## Ladder", ""]
    for f in [*r.rung_roofs, *ladders]:
        out += fig(f)
    if not worth.frame.empty:
        out += [f"### {worth.title}", "", worth.caption, "", worth.markdown(), ""]
        out += [SINGLE_RUNG_NOTE, ""]
    for f in r.thesis_figures:
        out += fig(f)
    out += ["## Collectives", ""]
    for f in colls:
        out += fig(f)
    out += [
        "## Own vs vendor: where and why",
        "",
        *(
            [f"### {r.goals.title}", "", r.goals.caption, "", r.goals.markdown(), ""]
            if not r.goals.frame.empty
            else []
        ),
        *[line for f in r.gemm_figures for line in fig(f)],
        gap_sum.caption,
        "",
        gap_sum.markdown(),
        "",
        f"### {room.title}",
        "",
        room.caption,
        "",
        room.markdown(),
        "",
        f"### {worst.title}",
        "",
        worst.markdown(),
        "",
        f"Every point: [tables/{gaps.stem}.md](tables/{gaps.stem}.md)",
        "",
        "## Paged decode as served",
        "",
        *[line for f in r.serving_figures for line in fig(f)],
        r.serving.caption,
        "",
        r.serving.markdown(),
        "",
    ]
    out += [
        "## Own vs vendor, each GPU on its own roofline",
        "",
        own_vendor.caption,
        "",
        own_vendor.markdown(),
        "",
        "## Cross-GPU",
        "",
        f"[tables/{cross_gpu.stem}.md](tables/{cross_gpu.stem}.md)",
        "",
        "## Cross-vendor",
        "",
        cross_vendor.caption,
        "",
        f"[tables/{cross_vendor.stem}.md](tables/{cross_vendor.stem}.md)",
        "",
        "## Smoke and CPU rows",
        "",
        r.set_aside.caption if r.set_aside else "",
        "",
        r.set_aside.markdown() if r.set_aside else "",
        "",
        *(line for f in r.set_aside_figures for line in fig(f)),
        "## Rows not ok",
        "",
        summary.markdown(),
        "",
        "## Rows with unstable samples",
        "",
        unstable.caption,
        "",
        unstable.markdown(),
        "",
    ]
    return "\n".join(out)
