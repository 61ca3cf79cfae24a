"""The report's decoder-layer section, built from the committed H200 layer_ops run and the
H200 ceilings: a figure per device with the bandwidth line named, and a table line per point
with every provider's time and the own kernel's share of the HBM read bandwidth."""

import pytest

from harness.config import SWEEPS_DIR
from harness.report import data
from harness.report.layer_ops import layer_ops_figures, layer_ops_table
from harness.report.peaks import device_peaks

RESULTS = SWEEPS_DIR.parent / "results/h200"


@pytest.fixture(scope="module")
def rows():
    if not (RESULTS / "layer_ops-s82").is_dir():
        pytest.skip("results/h200/layer_ops-s82 not in this checkout")
    return data.load([RESULTS / "layer_ops-s82", RESULTS / "ceilings"])


def test_layer_ops_table_has_every_point_and_provider(rows):
    table = layer_ops_table(rows, device_peaks(rows))
    frame = table.frame
    assert len(frame) == 75  # the preset's problems, one device
    assert set(frame["op"]) == {"rmsnorm", "add_rmsnorm", "silu_mul", "rope", "kv_append"}
    for provider in ("own-triton", "torch-eager", "torch-compile"):
        assert (frame[f"{provider} us"] != "").all(), provider
    shares = frame["own % of HBM read"].astype(float)
    assert ((shares > 0) & (shares < 100)).all()  # min_bytes over time never beats the ceiling
    assert (frame["own speedup vs fastest vendor"] != "").all()


def test_layer_ops_figure_names_its_bandwidth_line(rows, tmp_path):
    peaks = device_peaks(rows)
    (fig,) = layer_ops_figures(rows, peaks, tmp_path)
    assert fig.png.exists() and fig.svg.exists()
    assert "NVIDIA H200" in fig.caption and "HBM read" in fig.caption
    assert f"{peaks['NVIDIA H200'].bandwidth('measured'):,.0f} GB/s" in fig.caption


def test_layer_ops_rows_without_ceilings_fall_back_to_the_datasheet(rows, tmp_path):
    only = rows[rows["op"] != "ceiling"]
    (fig,) = layer_ops_figures(only, device_peaks(only), tmp_path)
    assert "datasheet" in fig.caption


def test_the_figure_leaves_the_own_rungs_to_the_table():
    """Session 84's runs hold RMSNorm rungs (own-triton-weight-late, -looped, -one-pass): the
    table gives each its columns, the figure plots the headline and the vendors only."""
    from harness.report.layer_ops import figure_rows

    runs = [RESULTS / "rmsnorm-weight-s84", RESULTS / "ceilings"]
    if not runs[0].is_dir():
        pytest.skip("results/h200/rmsnorm-weight-s84 not in this checkout")
    df = data.load(runs)
    plotted = set(figure_rows(df)["provider"])
    assert plotted == {"own-triton", "torch-compile"}
    frame = layer_ops_table(df, device_peaks(df)).frame
    assert "own-triton-weight-late us" in frame.columns


def test_each_figure_line_has_one_point_per_token_count():
    """The presets append to the KV cache for TP-sharded heads (1-8 KV heads) and, in prefill,
    to an empty cache: labelled by page alone, their rows shared lines that zig-zagged between
    shapes at one batch. Every (device, op, provider, width) line now has one row per x."""
    from harness.report.layer_ops import figure_rows

    df = data.load(sorted(p for p in RESULTS.iterdir() if (p / "run.json").is_file()))
    rows = figure_rows(df)
    if rows.empty:
        pytest.skip("no layer-op rows in this checkout")
    per_x = rows.groupby(["device", "op", "provider", "width", "tokens"]).size()
    assert (per_x == 1).all(), per_x[per_x > 1].head()
    appends = rows[rows["op"] == "kv_append"]
    assert appends.groupby("width")[["page_size", "kv_heads", "kv_len"]].nunique().eq(1).all().all()
