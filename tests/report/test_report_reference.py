"""The reference of a point (issue 19.4): the fastest ok vendor row, named in every ratio table."""

import pytest
from report_fixtures import speed_row, write_run

from harness.report import gaps
from harness.report.data import load
from harness.report.reference import NO_VENDOR, fastest, references
from harness.report.tables import cross_vendor_table, speed_rows

ATTN = {
    "batch": 1,
    "q_heads": 32,
    "kv_heads": 8,
    "q_len": 1,
    "kv_len": 4096,
    "head_dim": 128,
    "causal": True,
    "dtype": "bf16",
    "kv_layout": "dense",
    "page_size": 0,
}
DECODE = ATTN
PREFILL = {**ATTN, "q_len": 4096}
TIED = {**ATTN, "batch": 16}
PAGED = {**ATTN, "batch": 16, "kv_layout": "paged", "page_size": 16}
VENDORS = ("flashinfer", "sdpa-cudnn", "sdpa-flash")
# point: {provider: median ms}; each vendor is the fastest somewhere, and one point ties.
MEDIANS = {
    "decode": (
        DECODE,
        {"sdpa-cudnn": 0.030, "sdpa-flash": 0.020, "flashinfer": 0.025, "own-triton": 0.022},
    ),
    "prefill": (
        PREFILL,
        {"sdpa-cudnn": 0.50, "sdpa-flash": 0.60, "flashinfer": 0.55, "own-triton": 0.52},
    ),
    "tied": (
        TIED,
        {"sdpa-cudnn": 0.040, "flashinfer": 0.040, "sdpa-flash": 0.050, "own-triton": 0.036},
    ),
}
EXPECTED = {"decode": "sdpa-flash", "prefill": "sdpa-cudnn", "tied": "flashinfer"}


def _row(problem: dict, provider: str, median_ms: float | None, **kw) -> dict:
    # noise 0: every sample, so the median, is exactly median_ms (ties are ties)
    row = speed_row(
        "h200", "attention", problem, provider, "attn", median_ms=median_ms, noise=0.0, **kw
    )
    row["family"] = "vendor" if provider in VENDORS or provider.startswith("sdpa") else "own"
    return row


@pytest.fixture(scope="module")
def ref_root(tmp_path_factory):
    """Three vendors fastest on different points, a tie, a not-ok vendor row that would be the
    fastest, and a paged point whose only vendor row failed."""
    rows = [_row(p, prov, ms) for p, medians in MEDIANS.values() for prov, ms in medians.items()]
    wrong = _row(PREFILL, "sdpa-math", None, status="wrong", reason="rel_err 0.5 > tol 0.01")
    wrong["latency_ms_median"] = 0.001  # timed, then failed its check: never a reference
    rows.append(wrong)
    rows.append(_row(PAGED, "own-triton", 0.05))
    rows.append(_row(PAGED, "sdpa-paged-gather", None, status="error", reason="out of memory"))
    root = tmp_path_factory.mktemp("reference")
    write_run(root, "attn", rows)
    return root


@pytest.fixture(scope="module")
def ref_rows(ref_root):
    return load([ref_root])


def _label(name: str) -> str:
    return speed_row("h200", "attention", MEDIANS[name][0], "x", "r")["problem"]


PAGED_LABEL = speed_row("h200", "attention", PAGED, "x", "r")["problem"]


def test_fastest_lowest_median_then_name_ok_rows_only():
    def row(provider, family, status, median):
        return {
            "provider": provider,
            "family": family,
            "status": status,
            "latency_ms_median": median,
        }

    rows = [
        row("sdpa-flash", "vendor", "ok", 0.04),
        row("flashinfer", "vendor", "ok", 0.04),
        row("own-triton", "own", "ok", 0.01),
        row("sdpa-math", "vendor", "wrong", 0.001),  # timed, then failed its check
        row("sdpa-cudnn", "vendor", "ok", None),
    ]
    assert fastest(rows)["provider"] == "flashinfer"
    assert fastest(list(reversed(rows)))["provider"] == "flashinfer"  # order does not matter
    assert fastest(rows, family=None)["provider"] == "own-triton"
    assert fastest(rows[2:]) is None  # only a not-ok and a median-less vendor row


def test_references_per_point(ref_rows):
    refs = references(speed_rows(ref_rows)).set_index("problem")
    for name, provider in EXPECTED.items():
        assert refs.loc[_label(name), "reference"] == provider
        assert refs.loc[_label(name), "reference_ms"] == pytest.approx(MEDIANS[name][1][provider])
    assert refs.loc[PAGED_LABEL, "reference"] == NO_VENDOR


def test_cross_vendor_table_names_the_reference_of_each_point(ref_rows):
    table = cross_vendor_table(ref_rows).frame
    for name, provider in EXPECTED.items():
        point = table[table["problem"] == _label(name)].set_index("provider")
        assert set(point["reference"]) == {provider}
        medians = MEDIANS[name][1]
        own = float(point.loc["own-triton", "speedup (95% CI)"].split()[0])
        assert own == pytest.approx(medians[provider] / medians["own-triton"], rel=1e-3)
        assert "sdpa-math" not in point.index  # not ok: not a speed line either
    paged = table[table["problem"] == PAGED_LABEL]
    assert list(paged["provider"]) == ["own-triton"]  # said so, with no speedup
    assert list(paged["reference"]) == [NO_VENDOR] and list(paged["speedup (95% CI)"]) == [""]


def test_gaps_reference_per_point_and_summary(ref_rows):
    frame = gaps.gap_frame(ref_rows).set_index("problem")
    for name, provider in EXPECTED.items():
        medians = MEDIANS[name][1]
        assert frame.loc[_label(name), "reference"] == provider
        assert frame.loc[_label(name), "speedup"] == pytest.approx(
            medians[provider] / medians["own-triton"]
        )
    paged = frame.loc[PAGED_LABEL]
    assert paged["reference"] == NO_VENDOR and paged["reason"] == "no ok vendor row at this point"
    summary = gaps.gap_summary(gaps.gap_frame(ref_rows)).iloc[0]
    assert summary["points"] == 3 and summary["no_reference"] == 1
    assert summary["references"] == "flashinfer 1, sdpa-cudnn 1, sdpa-flash 1"
    worst = gaps.worst_points(gaps.gap_frame(ref_rows))
    assert PAGED_LABEL not in set(worst["problem"])  # no reference: not among the worst


def test_gaps_tables_name_the_reference(ref_rows):
    _, _, worst, every, _ = gaps.gap_tables(ref_rows)
    assert "reference" in worst.frame.columns and "reference" in every.frame.columns
    assert NO_VENDOR in set(every.frame["reference"])
    assert "reference" in worst.markdown()


def test_gaps_cli_prints_the_reference(ref_root, capsys):
    from harness import cli

    assert cli.main(["gaps", str(ref_root)]) == 0
    out = capsys.readouterr().out
    assert "references" in out and "no_reference" in out
    assert "sdpa-flash" in out and "flashinfer" in out
