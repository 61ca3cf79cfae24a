"""Reports from parquet rows alone (never torch, never a kernel): rooflines, latency versus
batch of LLM workloads, ladder charts, cross-GPU and cross-vendor tables, run comparison."""

from harness.report.compare import compare_runs, noise_floor, verdict
from harness.report.html import build_report

__all__ = ["build_report", "compare_runs", "noise_floor", "verdict"]
