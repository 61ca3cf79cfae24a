"""What one report build produced: its figures and tables, section by section, for the two
renderers (harness.report.html writes index.html, harness.report.markdown index.md)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from harness.report.crossgpu_section import Section
from harness.report.figures import FigureFile
from harness.report.latency import WorkloadReport
from harness.report.tables import Table


@dataclass
class Report:
    """What one build produced (paths relative to out_dir)."""

    out_dir: Path
    figures: list[FigureFile] = field(default_factory=list)
    tables: list[Table] = field(default_factory=list)
    workloads: list[WorkloadReport] = field(default_factory=list)
    cross_gpu: list[Section] = field(default_factory=list)  # two GPUs of one vendor: their pair
    full: bool = True  # False: index.html and PNG figures only (FILES["html"])
    rung_roofs: list[FigureFile] = field(default_factory=list)  # in the Ladder section
    set_aside: Table | None = None  # smoke and CPU rows: kept out of every figure and table
    set_aside_figures: list[FigureFile] = field(default_factory=list)  # but their own
    layer_ops: list[FigureFile] = field(default_factory=list)  # decoder-layer ops, per device
    layer_ops_table: Table | None = None
    # issue 21.3's bars per serving run (harness.report.decode_serving)
    serving: Table = field(default_factory=lambda: Table("decode_serving", "", "", pd.DataFrame()))
    serving_figures: list[FigureFile] = field(default_factory=list)  # both bars per point, per GPU
    # issue 20.1: each own GEMM's speedup by M, per GPU (harness.report.gemm_by_m_figure)
    gemm_figures: list[FigureFile] = field(default_factory=list)
    # the original study's shapes, TFLOP/s against size, per GPU (harness.report.thesis_figure)
    thesis_figures: list[FigureFile] = field(default_factory=list)
    # each open issue's bar per GPU (harness.report.goals); empty where no goal has rows
    goals: Table = field(default_factory=lambda: Table("goals", "", "", pd.DataFrame()))
    # the measured ceilings and the cold read fit per GPU (harness.report.roofs_table)
    roofs: list[Table] = field(default_factory=list)

    @property
    def index(self) -> Path:
        return self.out_dir / "index.html"
