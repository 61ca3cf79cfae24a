"""The report from a synthetic dataset: files, figures per device and dtype, composed steps
against sums computed by hand, tables with roofline fractions and speedups, rows that are not ok
listed and never plotted, deterministic figures, the CLI, and no torch in the import."""

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from harness.cli import main
from harness.report.compose import RowIndex, compose
from harness.report.peaks import device_peaks
from harness.report.roofline import plottable, roofline_figures
from harness.report.tables import cross_gpu_table, cross_vendor_table
from harness.workloads import get_workload

H200, H100 = "NVIDIA H200", "NVIDIA H100 80GB HBM3"


def test_report_imports_no_torch_and_no_kernel():
    code = (
        "import sys, harness.report, harness.commands.report, harness.commands.compare, "
        "harness.commands.gaps, harness.workloads; "
        "bad = [m for m in sys.modules if m.split('.')[0] in "
        "('torch', 'triton', 'harness_kernels', 'hydra')]; print(bad)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout


def test_report_files(built):
    out = built.out_dir
    html = (out / "index.html").read_text()
    stems = {f.stem for f in built.figures}
    assert {
        "roofline-nvidia-h200-bf16",
        "roofline-nvidia-h100-80gb-hbm3-bf16",
        "latency-nvidia-h200-llama3-8b-decode",
        "latency-nvidia-h100-80gb-hbm3-llama3-8b-decode",
        "ladder-nvidia-h200",
    } <= stems
    for f in built.figures:
        assert f.png.stat().st_size > 5000 and f.svg.stat().st_size > 5000
        assert f"figures/{f.png.name}" in html and f"figures/{f.svg.name}" in html
    assert "Roofs: measured ceilings and one cold read" in html  # the roofs each fraction uses
    for t in ("cross_gpu", "cross_vendor", "not_ok_rows", "roofs"):
        for ext in ("md", "tex", "html"):
            assert (out / "tables" / f"{t}.{ext}").stat().st_size > 100
    assert "\\toprule" in (out / "tables/cross_vendor.tex").read_text()
    assert (out / "index.md").read_text().startswith("# Kernel characterization report")


def test_not_ok_rows_are_listed_never_plotted(built, frame):
    html = (built.out_dir / "index.html").read_text()
    for reason in ("rel_err 0.5 &gt; tol 0.01", "CUDA out of memory", "runs on amd, not nvidia"):
        assert reason in html
    df = frame
    plotted = plottable(df)
    assert (plotted["status"] == "ok").all()
    assert len(plotted) == int(
        ((df["status"] == "ok") & df["op"].isin(["gemm", "attention"])).sum()
    )


def _by_hand(df, device, batch, family):
    """layers x (count x each per-layer problem) + the once-per-step problems (final norm, LM
    head), from the fastest rows."""
    w = get_workload("llama3_8b_decode")
    rows = df[(df["device_name"] == device) & (df["status"] == "ok") & (df["family"] == family)]
    total = 0.0
    for item in w.items(batch):
        ms = rows[rows["problem"] == item.label()]["latency_ms_median"].min()
        total += ms * item.count * (w.config.layers if item.per_layer else 1)
    return total


def test_composed_step_equals_sum_by_hand(frame):
    df = frame
    w = get_workload("llama3_8b_decode")
    peaks = device_peaks(df)
    index = RowIndex(df[df["device_name"] == H200])
    for batch in (1, 64):
        step = compose(index, w, batch, "vendor", peaks[H200])
        assert step.step_ms == pytest.approx(_by_hand(df, H200, batch, "vendor"), rel=1e-12)
        assert step.tokens_per_s == pytest.approx(batch / (step.step_ms / 1e3))
        assert step.ms_per_token == step.step_ms and step.coverage == "11/11"
        assert not step.omitted and sum(step.by_category().values()) == pytest.approx(step.step_ms)
        assert step.bound_source == "measured" and step.bound_step_ms < step.step_ms
        assert {c.provider for c in step.components} == {"cublas", "sdpa-flash", "torch-eager"}
    own_512 = compose(index, w, 512, "own", peaks[H200])
    assert own_512.step_ms is None and own_512.coverage == "10/11"
    assert [i.name for i in own_512.missing] == ["down"]  # its row is `wrong`
    assert compose(index, w, 512, "vendor", peaks[H200]).step_ms is not None
    h100 = RowIndex(df[df["device_name"] == H100])
    assert compose(h100, w, 16, "best", peaks[H100]).bound_source == "datasheet"
    assert compose(h100, w, 32, "best", peaks[H100]).step_ms is None


def test_composed_tables_in_report(built):
    reports = {(r.device, r.workload.name): r for r in built.workloads}
    h100 = reports[(H100, "llama3_8b_decode")].table
    composed = h100[h100["step ms"].notna()]
    assert set(composed["batch"]) == {1, 2, 4, 8, 16}
    assert (composed["% of bound"] < 100).all()
    md = (built.out_dir / "tables/composed-nvidia-h200-llama3_8b_decode.md").read_text()
    assert "tokens/s" in md and "11/11" in md


def test_cross_tables_fractions_and_speedups(frame):
    df = frame
    gpu = cross_gpu_table(df).frame
    assert f"{H200} % roof (measured)" in gpu.columns
    assert f"{H100} % roof (measured)" not in gpu.columns  # no ceilings: column dropped
    assert f"{H100} % roof (datasheet)" in gpu.columns
    vendor = cross_vendor_table(df).frame
    lad = vendor[(vendor["device"] == H200) & (vendor["problem"] == "gemm 8192x8192x8192 bf16 nn")]
    assert list(lad["provider"])[0] == "cublas" and set(lad["reference"]) == {"cublas"}
    rows = df[(df["device_name"] == H200) & (df["problem"] == "gemm 8192x8192x8192 bf16 nn")]
    med = rows.set_index("provider")["latency_ms_median"]
    got = lad.set_index("provider")["speedup (95% CI)"]
    s = float(got["own-triton-no-tma"].split()[0])
    assert s == pytest.approx(med["cublas"] / med["own-triton-no-tma"], rel=1e-3) and s < 1
    lo, hi = (float(v) for v in got["own-triton-no-tma"].split("[")[1].rstrip("]").split(","))
    assert lo <= s <= hi


def test_roofline_fraction_uses_the_ceilings_run_and_counts_the_rows_above_it(frame):
    """The ceilings run says 760 TFLOP/s; cuBLAS ran the 8192^3 GEMM at 791 in another run: the
    measured roof stays 760 (the ceilings run's), that row reads above 1, and above_roof names
    it (raising the roof to the fastest of many cards' rows made it a burst outlier)."""
    from harness.report.ceilings import above_roof, measured_ceilings
    from harness.report.peaks import roofline_fraction

    df = frame
    gemm = df[
        (df["device_name"] == H200)
        & (df["problem"] == "gemm 8192x8192x8192 bf16 nn")
        & (df["status"] == "ok")
    ].set_index("provider")
    best = gemm.loc["cublas", "tflops"]
    assert best > 760.0  # the fixture's fault: a vendor row above the ceilings run
    peaks = device_peaks(df)[H200]
    assert peaks.compute("bf16", "measured") == pytest.approx(760.0)
    assert peaks.origin("bf16", "measured") == "ceilings sweep (run h200-ceilings)"
    assert peaks.compute("fp8_e4m3", "measured") == 1350.0
    frac = roofline_fraction(gemm.reset_index(), df, "measured")
    assert list(frac) == pytest.approx(list(gemm["tflops"] / 760.0))  # compute-bound: the roof
    assert roofline_fraction(df, df, "measured").max() == pytest.approx(best / 760.0)
    above = above_roof(df, measured_ceilings(df)).set_index(["device_name", "metric"])
    line = above.loc[(H200, "tensor_bf16_tflops")]
    assert line["fastest"] == pytest.approx(best) and line["rows_above"] >= 1
    assert line["row"] == "cublas gemm 8192x8192x8192 bf16 nn (run h200-decode)"
    sheet = roofline_fraction(gemm.reset_index(), df, "datasheet")
    assert list(sheet) == pytest.approx(list(gemm["tflops"] / 989.4))


def test_figures_are_deterministic(frame, tmp_path):
    from harness.report.figures import styled

    df = frame[frame["device_name"] == H100]
    with styled():
        a = roofline_figures(df, device_peaks(df), tmp_path / "a")
        b = roofline_figures(df, device_peaks(df), tmp_path / "b")
    for fa, fb in zip(a, b, strict=True):
        assert fa.png.read_bytes() == fb.png.read_bytes()
        assert fa.svg.read_bytes() == fb.svg.read_bytes()


def _ink_at_the_edge(png: Path) -> int:
    """Pixels of the image's outermost 2-pixel frame that are not the white background: a tick
    label or legend cut off by the figure's edge leaves ink there."""
    from PIL import Image

    with Image.open(png) as im:
        grey = np.asarray(im.convert("L"))
    frame = np.concatenate(
        [grey[:2].ravel(), grey[-2:].ravel(), grey[:, :2].ravel(), grey[:, -2:].ravel()]
    )
    return int((frame < 250).sum())


def test_no_label_is_cut_at_a_figure_edge(built, tmp_path):
    """Every figure is saved cropped to what it draws, with a white margin; a figure drawn with
    its labels sticking out of the canvas (as the 8192^3 ladder panel's were) is saved whole."""
    from harness.report.figures import new_figure, save, styled

    for f in built.figures:
        assert _ink_at_the_edge(f.png) == 0, f.png.name
    with styled():
        fig = new_figure(3.0, 2.0, left=0.02, right=0.99)  # no room for the y tick labels
        ax = fig.add_subplot()
        ax.barh(["own-triton-no-tensor-cores", "cublas"], [3.0, 700.0])
        saved = save(fig, tmp_path, "cut", "a panel whose labels stick out")
    assert _ink_at_the_edge(saved.png) == 0


@pytest.mark.parametrize("name", ["hopper"])
def test_committed_report_figures_have_no_cut_labels(name):
    committed = Path(__file__).resolve().parents[2] / "reports" / name / "figures"
    if not committed.is_dir():
        pytest.skip(f"reports/{name} not in this checkout")
    cut = [p.name for p in sorted(committed.glob("*.png")) if _ink_at_the_edge(p)]
    assert cut == []


def test_cli_report(dataset, tmp_path, capsys):
    assert main(["report", str(dataset / "h100-decode"), f"out={tmp_path / 'r'}"]) == 0
    assert (tmp_path / "r/index.html").exists()
    assert "index.html" in capsys.readouterr().out


def test_files_html_writes_the_page_and_its_png_figures_only(dataset, tmp_path):
    """What reports/ commits: index.html and the PNGs it shows; no SVG, tables/ or index.md,
    and no link to them. A full build into the same folder first leaves nothing stale."""
    out = tmp_path / "r"
    assert main(["report", str(dataset / "h100-decode"), f"out={out}"]) == 0
    assert (out / "tables").is_dir() and list(out.glob("figures/*.svg"))
    assert main(["report", str(dataset / "h100-decode"), f"out={out}", "files=html"]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["figures", "index.html"]
    assert {p.suffix for p in (out / "figures").iterdir()} == {".png"}
    page = (out / "index.html").read_text()
    assert "tables/" not in page and ".svg" not in page and "files=html" in page
    for png in (out / "figures").iterdir():
        assert f"figures/{png.name}" in page


BAD = [
    (["report"], "report: the following arguments are required: paths"),
    (["report", "DATA", "files=pdf"], "files: unknown 'pdf'; allowed: all, html"),
    (["report", "/no/such/run"], "path: '/no/such/run' does not exist"),
    (["report", "DATA", "outdir=x"], "report: unknown key 'outdir'; allowed: out"),
    (["report", "EMPTY"], "path: no rows under"),
    (["compare"], "compare: the following arguments are required: runs"),
    (["compare", "DATA", "DATA", "DATA"], "compare: 3 runs given"),
    (["compare", "DATA", "threshold=2"], "threshold: 2.0; allowed: between 0 and 1"),
    (["compare", "DATA", "threshold=abc"], "threshold: invalid float value"),
    (["compare", "DATA", "--frobnicate"], "compare: unrecognized arguments: --frobnicate"),
]


@pytest.mark.parametrize(("argv", "expected"), BAD, ids=[" ".join(a) for a, _ in BAD])
def test_bad_input_exits_2_with_one_line(argv, expected, dataset, tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    subst = {"DATA": str(dataset), "EMPTY": str(tmp_path / "empty")}
    assert main([subst.get(a, a) for a in argv]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("harness: error: ") and expected in err[0], err
    assert "allowed" in err[0]


def test_real_h200_results_render(tmp_path):
    """The committed H200 rows (vendor GEMM, SDPA prefill and decode) build a report."""
    from harness.config import SWEEPS_DIR
    from harness.report import build_report

    results = SWEEPS_DIR.parent / "results/h200"
    if not results.is_dir():
        pytest.skip("results/h200 not in this checkout")
    rep = build_report([results / "fmha_decode-vendor", results / "gemm_square-vendor-a"], tmp_path)
    stems = {f.stem for f in rep.figures}
    assert "roofline-nvidia-h200-bf16" in stems
    assert "latency-nvidia-h200-llama3-8b-decode" in stems  # its attention rows are measured
    html = (tmp_path / "index.html").read_text()
    assert "flash_attn not importable" in html  # the skipped flash-attn rows are listed


def test_runs_without_layer_op_rows_compose_a_lower_bound_that_says_so(frame):
    """Rows measured before the layer ops existed still compose: the layer ops are left out of
    the sums and listed, and the report says the step is a lower bound."""
    df = frame[~frame["op"].isin(["add_rmsnorm", "rope", "kv_append", "silu_mul"])]
    w = get_workload("llama3_8b_decode")
    step = compose(RowIndex(df[df["device_name"] == H200]), w, 1, "vendor", None)
    assert step.step_ms is not None and step.coverage == "6/11"
    assert [i.name for i in step.omitted] == [
        "norms",
        "rope",
        "kv_append",
        "silu_mul",
        "final_norm",
    ]
    gemm_attn = sum(
        c.median_ms * c.item.count * (w.config.layers if c.item.per_layer else 1)
        for c in step.components
        if c.median_ms is not None
    )
    assert step.step_ms == pytest.approx(gemm_attn)


def test_latency_caption_names_the_left_out_layer_ops(frame, tmp_path):
    from harness.report.latency import workload_reports

    df = frame[~frame["op"].isin(["add_rmsnorm", "rope", "kv_append", "silu_mul"])]
    reports = workload_reports(df, device_peaks(df), tmp_path)
    caption = next(r.figure.caption for r in reports if r.workload.name == "llama3_8b_decode")
    assert "left out of every sum" in caption and "lower bounds" in caption
    full = workload_reports(frame, device_peaks(frame), tmp_path)
    caption = next(r.figure.caption for r in full if r.workload.name == "llama3_8b_decode")
    assert "Third panel" in caption and "lower bounds" not in caption


def test_a_layer_measured_whole_is_drawn_and_compared(frame, tmp_path):
    """decoder_layer rows of the workload's model, batch and KV length go into the latency
    figure (caption) and the composed table (composed / measured)."""
    import pandas as pd

    from harness.report.latency import workload_reports

    template = frame[(frame["device_name"] == H200) & (frame["op"] == "gemm")].iloc[0].to_dict()
    whole = []
    for provider, ms in (("own-triton-graph", 0.2), ("own-triton", 0.3)):
        row = {**{k: None for k in template}, **{k: template[k] for k in ("device_name",
               "device_type", "timer", "l2", "fill", "seed", "timestamp")}}  # fmt: skip
        row.update(op="decoder_layer", provider=provider, family="own", status="ok",
                   model="llama3_8b", batch=1, kv_len=4096, page_size=16, dtype="bf16",
                   latency_ms_median=ms, problem=f"decoder_layer llama3_8b b1 {provider}")  # fmt: skip
        whole.append(row)
    rows = pd.concat([frame, pd.DataFrame(whole)], ignore_index=True)
    reports = workload_reports(rows, device_peaks(rows), tmp_path)
    wr = next(r for r in reports if r.device == H200 and r.workload.name == "llama3_8b_decode")
    assert "measured whole" in wr.figure.caption and "batch 1" in wr.figure.caption
    own = wr.table[(wr.table["rows"] == "own") & (wr.table["batch"] == 1)].iloc[0]
    assert own["measured layer ms (graph)"] == 0.2
    assert own["composed / measured"] == pytest.approx(own["layer ms"] / 0.2)


def test_real_serving_run_gets_its_bars_in_the_report(tmp_path):
    """A committed serving run (sessions 68 and 70, ragged batch 64, own Triton with its item-order rung,
    FlashInfer and FA4) beside its GPU's ceilings run: the report's serving table gives its
    bars against the measured read ceiling and the vendors, and the rung's ratio."""
    from harness.config import SWEEPS_DIR
    from harness.report import build_report

    results = SWEEPS_DIR.parent / "results/h200"
    run = results / "fmha_decode_serving-b64-ragged-s68"
    if not run.is_dir():
        pytest.skip("results/h200 not in this checkout")
    rep = build_report([run, results / "ceilings"], tmp_path, files="html")
    html = (tmp_path / "index.html").read_text()
    assert '<h2 id="decode-serving">Paged decode as served</h2>' in html
    whole = rep.serving.frame.set_index("batch").loc["all"]
    assert whole["points"] == 32 and whole["fastest_vendor"] == "flashinfer"
    assert whole["rung_over_own"].startswith("own-triton-no-longest-first: 1.0")
    assert 0.8 < float(whole["of_ceiling"]) <= 1.0
