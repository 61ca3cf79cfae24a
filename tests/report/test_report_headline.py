"""What the headline figures and tables may show (issue 22.3): smoke and CPU rows set aside in
their own section, a measured roof never below a measured row and labelled with its source, at
most SERIES_MAX series per figure with ladder rungs in figures of their own, speedups that never
read 0.00x, and latency captions that say what each panel draws."""

import pandas as pd
import pytest
from PIL import Image
from report_fixtures import TINY

from harness.report.data import is_smoke
from harness.report.figures import SERIES_MAX, top_series
from harness.report.ladder import speedup_text
from harness.report.peaks import device_peaks
from harness.report.roofline import points, roofline_figure

H200 = "NVIDIA H200"


def test_smoke_rows_by_sweep_cpu_and_size(frame):
    """By provenance first: the smoke run's run.json, the CPU device; size only where the run
    records no sweep."""
    smoke = frame[is_smoke(frame)]
    assert set(smoke["run_id"]) == {"h200-smoke", "cpu-smoke", "h200-adhoc"}
    assert set(frame.loc[frame["run_id"] == "h200-smoke", "sweep"]) == {"smoke"}
    assert (frame.loc[frame["run_id"] == "h200-decode", "sweep"]).isna().all()
    # a run that records a real sweep keeps its tiny rows out only if they ran on the CPU
    odd = frame[frame["run_id"] == "h200-smoke"].assign(sweep="gemm_llama")
    assert not is_smoke(odd).any()
    assert is_smoke(odd.assign(sweep=None)).all()  # no record: the size decides


def test_smoke_rows_stay_out_of_every_headline(built):
    stems = {f.stem for f in built.figures}
    headline = {s for s in stems if not s.startswith("smoke-")}
    assert not any("fp32" in s or "x86" in s for s in headline), stems  # fp32 was smoke only
    # their own section draws them: one roofline per device and dtype of the set-aside rows
    own = {f.stem: f for f in built.figures if f.stem.startswith("smoke-")}
    assert set(own) == {"smoke-nvidia-h200-bf16", "smoke-nvidia-h200-fp32",
                        "smoke-cpu-x86-64-not-gpu-numbers-fp32"}  # fmt: skip
    assert all("no headline figure or table shows them" in f.caption for f in own.values())
    tables = {t.stem: t.frame for t in built.tables}
    tiny = f"gemm {TINY['m']}x{TINY['n']}x{TINY['k']}"
    for stem in ("cross_gpu", "cross_vendor", "own_vs_vendor", "gaps"):
        text = tables[stem].to_string()
        assert tiny not in text and "fp32" not in text and "x86_64" not in text, stem
    aside = tables["set_aside"].set_index("run")
    assert set(aside.index) == {"h200-smoke", "cpu-smoke", "h200-adhoc"}
    assert aside.loc["h200-smoke", "why"] == "sweep smoke"
    assert aside.loc["cpu-smoke", "why"] == "CPU row"
    assert aside.loc["h200-adhoc", "why"].startswith("no sweep recorded")
    roof = next(f for f in built.figures if f.stem == "roofline-nvidia-h200-bf16")
    assert "4 smoke or CPU rows (section Smoke and CPU rows)" in roof.caption
    html = (built.out_dir / "index.html").read_text()
    section = html.index('<h2 id="set-aside">Smoke and CPU rows</h2>')
    assert all(html.index(f"figures/{f.png.name}") > section for f in own.values())


def test_a_row_above_its_measured_roof_is_counted_not_absorbed(built, frame):
    """The fixture's cuBLAS row beats its ceilings run (791 vs 760 TFLOP/s): the drawn roof
    stays the ceilings run's, the row sits above it, and the caption counts such points."""
    rows = points(frame[~is_smoke(frame)])
    peaks = device_peaks(frame[~is_smoke(frame)])
    above = []
    for r in rows.to_dict("records"):
        p = peaks[r["device_name"]]
        peak, bw = p.compute(r["dtype"], "measured"), p.bandwidth("measured")
        if peak and bw and r["tflops"] > min(peak, r["intensity_flop_per_byte"] * bw / 1e3):
            above.append((r["device_name"], r["provider"], r["problem"]))
    assert (H200, "cublas", "gemm 8192x8192x8192 bf16 nn") in above
    caption = next(f.caption for f in built.figures if f.stem == "roofline-nvidia-h200-bf16")
    assert "760 TFLOP/s from the ceilings sweep (run h200-ceilings)" in caption
    assert "HBM 4300 GB/s from the ceilings sweep (run h200-ceilings)" in caption
    assert "sit above the measured roof (up to 1.03" in caption  # the row's median / 760
    assert "the roof is not raised to them" in caption


def _legend(fig) -> list[str]:
    return [t.get_text() for t in fig.axes[0].get_legend().get_texts()]


def test_at_most_eight_series_and_the_rest_named(frame):
    """Twelve providers: the seven with the most points are coloured, the rest fold into one
    grey 'others' series that the caption names."""
    base = points(frame[(frame["device_name"] == H200) & (frame["provider"] == "cublas")])
    parts = []
    for i in range(12):
        part = base.head(i + 1).assign(provider=f"vendor-{i:02d}", family="vendor")
        parts.append(part)
    rows = pd.concat(parts, ignore_index=True)
    fig, caption = roofline_figure(rows, device_peaks(frame)[H200], "bf16", H200)
    providers = [t for t in _legend(fig) if t.startswith(("vendor-", "others"))]
    assert len(providers) == SERIES_MAX and providers[-1] == "others (5 providers)"
    shown, folded = top_series(rows.groupby("provider").size().to_dict())
    assert folded == [f"vendor-{i:02d}" for i in range(5)]  # the fewest points
    assert "grey 'others': vendor-00, vendor-01, vendor-02, vendor-03, vendor-04" in caption
    colours = {tuple(c.get_facecolor()[0][:3]) for c in fig.axes[0].collections}
    assert len(colours) == SERIES_MAX  # seven hues and the grey, none repeated
    # An own kernel with the fewest points is still drawn: the own kernels come first.
    assert (
        top_series(
            {"own-new": 1, **{f"v{i}": 10 for i in range(9)}}, prefer=frozenset({"own-new"})
        )[0][0]
        == "own-new"
    )


def test_ladder_rungs_have_their_own_roofline(built):
    headline = next(f for f in built.figures if f.stem == "roofline-nvidia-h200-bf16")
    rungs = next(f for f in built.figures if f.stem == "roofline-rungs-nvidia-h200-bf16")
    assert "2 points of 2 ladder rungs (their own rooflines, section Ladder)" in headline.caption
    assert "ladder rungs: 3 points" in rungs.caption  # the two rungs and own-triton, one problem
    html = (built.out_dir / "index.html").read_text()
    assert html.index("roofline-rungs-nvidia-h200-bf16.png") > html.index('id="ladder"')


@pytest.mark.parametrize(("speedup", "text"), [(1.0123, "1.01x"), (0.95, "0.95x"),
                                                (0.0043, "0.0043x"), (0.041, "0.041x")])  # fmt: skip
def test_speedups_never_read_zero(speedup, text):
    assert speedup_text(speedup) == text


def test_latency_captions_say_what_is_drawn(built):
    by_stem = {f.stem: f for f in built.figures}
    for f in built.figures:
        assert "batch none" not in f.caption, f.stem
    llama = by_stem["latency-nvidia-h200-llama3-8b-decode"]
    assert "composed at batch 1, 2, 4, 8, 16, 32, 64, 128, 256, 512" in llama.caption
    mistral = by_stem["latency-nvidia-h200-mistral-7b-decode"].caption
    assert "no batch composed (the LM head is unmeasured)" in mistral
    assert "without an ok row at some batch: lm_head" in mistral
    mixtral = by_stem["latency-nvidia-h200-mixtral-8x7b-decode"]
    assert "No tokens/s panel" in mixtral.caption and "router" in mixtral.caption
    # the empty panel is dropped, not drawn: one panel is about as wide as tall
    with Image.open(mixtral.png) as one, Image.open(llama.png) as two:
        assert one.size[0] / one.size[1] < 1.8 < two.size[0] / two.size[1]


def test_ladder_panel_without_a_vendor_row_says_so(frame):
    from harness.report.figures import new_figure, styled
    from harness.report.ladder import _panel

    own = points(frame[(frame["problem"] == "gemm 8192x8192x8192 bf16 nn")
                       & (frame["family"] == "own")])  # fmt: skip
    with styled():
        ax = new_figure().add_subplot()
        _panel(ax, own, {})
    assert "no vendor row" in ax.get_title()
    labels = [t.get_text() for t in ax.texts]
    assert labels and all(t.endswith("TFLOP/s") and "x" not in t for t in labels)


def _ladder_row(provider, problem, family="own", run="r1"):
    """One ok GEMM row of the ladder tests (H200, cold L2, randn)."""
    return dict(
        provider=provider,
        family=family,
        problem=problem,
        op="gemm",
        status="ok",
        latency_ms_median=1.0,
        device_name="NVIDIA H200",
        timestamp="t",
        timer="cuda-events",
        l2="cold",
        fill="randn",
        seed=0,
        run_id=run,
    )


def test_two_own_kernels_without_a_rung_are_no_ladder():
    """own-triton beside own-cutlass on a GEMM is a comparison, not a ladder; a rung makes one,
    measured in the same run (a panel's bars share a run)."""
    from harness.report.ladder import ladder_problems

    rows = pd.DataFrame(
        [
            _ladder_row("own-triton", "gemm a"),
            _ladder_row("own-cutlass", "gemm a"),
            _ladder_row("cublas", "gemm a", "vendor"),
            _ladder_row("own-triton", "gemm b"),
            _ladder_row("own-triton-no-tma", "gemm b"),
            _ladder_row("cublas", "gemm b", "vendor", run="r2"),  # another run: not in the panel
            _ladder_row("own-triton", "gemm c"),
            _ladder_row("own-triton-no-tma", "gemm c", run="r2"),  # the rung in another run
        ]
    )
    ladder = ladder_problems(rows)
    assert set(ladder["problem"]) == {"gemm b"} and set(ladder["run_id"]) == {"r1"}


def test_a_single_rung_ab_is_the_worth_tables_not_a_panel():
    """Two rungs of own-triton on one problem in one run make a ladder panel; a run that set one
    rung beside own-triton (an A/B over a sweep's points) is left to the rung-worth table."""
    from harness.report.ladder import MIN_RUNGS, ladder_panels

    rows = pd.DataFrame(
        [
            _ladder_row("own-triton", "gemm a"),
            _ladder_row("own-triton-no-tma", "gemm a"),
            _ladder_row("own-triton-no-pipeline", "gemm a"),
            _ladder_row("cublas", "gemm a", "vendor"),
            _ladder_row("own-triton", "gemm b", run="r2"),
            _ladder_row("own-triton-no-wave-tiles", "gemm b", run="r2"),
            _ladder_row("cublas", "gemm b", "vendor", run="r2"),
        ]
    )
    assert MIN_RUNGS == 2
    panels = ladder_panels(rows)
    assert set(panels["problem"]) == {"gemm a"}
    assert set(panels["provider"]) == {
        "own-triton",
        "own-triton-no-tma",
        "own-triton-no-pipeline",
        "cublas",
    }


def test_a_ladder_measured_in_two_runs_is_drawn_from_the_latest():
    """Two runs with the same ladder problem (older code in the first): one panel, the latest
    run's; both runs stay in the rung-worth table."""
    from harness.report.ladder import ladder_panels

    rows = []
    for run, when in (("old", "2026-11-01"), ("new", "2026-12-01")):
        for provider, family in (
            ("own-triton", "own"),
            ("own-triton-no-tma", "own"),
            ("own-triton-no-pipeline", "own"),
            ("cublas", "vendor"),
        ):
            rows.append({**_ladder_row(provider, "gemm a", family, run=run), "timestamp": when})
    panels = ladder_panels(pd.DataFrame(rows))
    assert set(panels["run_id"]) == {"new"} and len(panels) == 4
