"""`harness gaps AFTER against=BEFORE`: each point's own-vs-vendor speedup in two runs and their
ratio, which holds across two machines of one model where the times alone do not."""

import math

import pytest
from report_fixtures import speed_row, write_run

from harness.report import gap_change, gaps
from harness.report.data import load

GEMM = {"dtype": "bf16", "layout": "nt", "batch": 1}
SHAPES = [(16, 6144, 4096), (256, 10240, 8192), (2048, 8192, 8192)]


def _rows(run_id: str, own_ms: dict, machine: float, uuid: str, only=None) -> list[dict]:
    """cuBLAS at fixed times and own Triton at own_ms per M, every time scaled by `machine`
    (a second GPU of the model, a few percent slower at everything), all on GPU `uuid`."""
    vendor_ms = {16: 0.020, 256: 0.064, 2048: 0.40}
    rows = []
    for m, n, k in SHAPES if only is None else only:
        p = {"m": m, "n": n, "k": k, **GEMM}
        for provider, ms in (("cublas", vendor_ms[m]), ("own-triton", own_ms[m])):
            r = speed_row("h200", "gemm", p, provider, run_id, median_ms=ms * machine, noise=1e-4)
            rows.append({**r, "device_uuid": uuid})
    return rows


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    """Before: own Triton 0.8x, 0.9x and 1.0x cuBLAS. After, on another H200 3% slower at
    everything: the 256-row point sped up by 10%, the others unchanged, and the 16-row point
    not measured."""
    root = tmp_path_factory.mktemp("change")
    before = {16: 0.025, 256: 0.064 / 0.9, 2048: 0.40}
    after = {**before, 256: before[256] / 1.10}
    write_run(root / "before", "gemm_llama-a", _rows("gemm_llama-a", before, 1.0, "GPU-one"))
    write_run(
        root / "after",
        "gemm_llama-b",
        _rows("gemm_llama-b", after, 1.03, "GPU-two", only=SHAPES[1:]),
    )
    return root


def test_change_is_the_ratio_of_the_two_runs_speedups_on_their_common_points(two_runs):
    before = gaps.gap_frame(load([two_runs / "before"]))
    after = gaps.gap_frame(load([two_runs / "after"]))
    pairs = gap_change.gap_change(before, after).set_index("problem")
    # the 16-row point is in one run only; a machine 3% slower at everything moves no ratio
    assert sorted(pairs.index) == ["gemm 2048x8192x8192 bf16 nt", "gemm 256x10240x8192 bf16 nt"]
    assert pairs.loc["gemm 2048x8192x8192 bf16 nt", "change"] == pytest.approx(1.0, abs=2e-3)
    moved = pairs.loc["gemm 256x10240x8192 bf16 nt"]
    assert moved["speedup_before"] == pytest.approx(0.9, rel=2e-3)
    assert moved["speedup_after"] == pytest.approx(0.99, rel=2e-3)
    assert moved["change"] == pytest.approx(1.10, rel=3e-3)
    assert list(pairs["change"]) == sorted(pairs["change"])  # smallest change first

    line = gap_change.change_summary(gap_change.gap_change(before, after)).iloc[0]
    assert (line["run_before"], line["run_after"], line["points"]) == (
        "gemm_llama-a",
        "gemm_llama-b",
        2,
    )
    assert line["change"] == pytest.approx(math.sqrt(1.10), rel=3e-3)
    assert line["before"] == pytest.approx(math.sqrt(0.9), rel=3e-3)
    # on par or better (within 2%): 2048 before; 2048 and 256 (0.99) after
    assert (line["at_par_before"], line["at_par_after"]) == (1, 2)
    assert line["reference_on_other_gpu"] == 0


def test_another_own_provider_or_gpu_model_is_not_matched(two_runs, tmp_path):
    before = gaps.gap_frame(load([two_runs / "before"]))
    other = before.assign(own="own-cutlass")
    assert gap_change.gap_change(other, before).empty
    h100 = before.assign(device="NVIDIA H100 80GB HBM3")
    assert gap_change.gap_change(h100, before).empty
    assert gap_change.change_summary(gap_change.gap_change(h100, before)).empty
    assert "no point with a speedup in both" in gap_change.render(
        gap_change.gap_change(h100, before)
    )


def test_cli_prints_the_change_after_the_gaps(two_runs, capsys):
    from harness import cli

    after, before = str(two_runs / "after"), str(two_runs / "before")
    assert cli.main(["gaps", after, f"against={before}", "worst=3"]) == 0
    out = capsys.readouterr().out
    head, _, change = out.partition(f"against {before} (before) -> {after} (after)")
    assert "worst 3 points per GPU" in head and change
    assert "gemm_llama-a" in change and "gemm_llama-b" in change
    assert "largest moves (up to 3 each way, headline kernels):" in change
    assert "0.900 vs cublas" in change and "0.990 vs cublas" in change and "1.100" in change


def test_cli_refuses_a_missing_against_path(two_runs, capsys):
    from harness import cli

    assert cli.main(["gaps", str(two_runs / "after"), "against=/nowhere/run"]) == 2
    err = capsys.readouterr().err
    assert "against: '/nowhere/run' does not exist" in err


def test_a_point_whose_vendor_rows_differ_is_left_out_and_counted(tmp_path):
    """Session 58's H100 run ended before FA4's row at a point where FA4 had been the fastest:
    against FlashInfer alone own Triton's speedup there rose from 0.921x to 1.155x, a change
    of the reference, not of the kernel. Here a second vendor, fastest at both points before,
    is missing at one point after."""
    p1 = {"m": 256, "n": 10240, "k": 8192, **GEMM}
    p2 = {"m": 2048, "n": 8192, "k": 8192, **GEMM}

    def run(run_id: str, second_at: tuple) -> list[dict]:
        rows = []
        for p, ven_ms in ((p1, 0.064), (p2, 0.40)):
            rows.append(speed_row("h200", "gemm", p, "cublas", run_id, median_ms=ven_ms))
            rows.append(speed_row("h200", "gemm", p, "own-triton", run_id, median_ms=ven_ms))
            if p in second_at:
                fast = speed_row("h200", "gemm", p, "torch-eager", run_id, median_ms=ven_ms * 0.9)
                rows.append(fast)
        return rows

    write_run(tmp_path / "before", "a", run("a", (p1, p2)))
    write_run(tmp_path / "after", "b", run("b", (p2,)))
    before = gaps.gap_frame(load([tmp_path / "before"]))
    after = gaps.gap_frame(load([tmp_path / "after"]))
    assert set(before["vendors"]) == {"cublas,torch-eager"}
    assert sorted(after["vendors"]) == ["cublas", "cublas,torch-eager"]
    pairs = gap_change.gap_change(before, after)
    assert list(pairs["same_vendors"]) == [True, False]  # p2 unchanged (1.0), then p1 (1.11)
    line = gap_change.change_summary(pairs).iloc[0]
    assert line["points"] == 1 and line["vendors_differ"] == 1
    assert line["change"] == pytest.approx(1.0, abs=3e-3)
    assert gap_change.largest_moves(pairs)["problem"].tolist() == ["gemm 2048x8192x8192 bf16 nt"]


def test_points_that_kept_their_config_measure_the_drift(tmp_path):
    """Own Triton picks a new tile at one point and gains 10%; at the other it keeps its tile
    and its row runs 2% slower on the second machine. The summary splits the change by whether
    the own config changed, and the moves name both configs where it did."""
    import json

    p1 = {"m": 256, "n": 10240, "k": 8192, **GEMM}
    p2 = {"m": 2048, "n": 8192, "k": 8192, **GEMM}
    tile = {"block_m": 128, "block_n": 128, "block_k": 64, "num_warps": 8, "num_stages": 4}

    def run(run_id: str, own: dict) -> list[dict]:
        rows = []
        for p, ven_ms in ((p1, 0.064), (p2, 0.40)):
            rows.append(speed_row("h200", "gemm", p, "cublas", run_id, median_ms=ven_ms))
            ms, cfg = own[p["m"]]
            r = speed_row("h200", "gemm", p, "own-triton", run_id, median_ms=ven_ms * ms)
            rows.append({**r, "provider_config": json.dumps(cfg)})
        return rows

    wide = {**tile, "block_n": 256}
    write_run(tmp_path / "before", "a", run("a", {256: (1.0, tile), 2048: (1.0, tile)}))
    write_run(tmp_path / "after", "b", run("b", {256: (1 / 1.1, wide), 2048: (1.02, tile)}))
    before = gaps.gap_frame(load([tmp_path / "before"]))
    after = gaps.gap_frame(load([tmp_path / "after"]))
    pairs = gap_change.gap_change(before, after).set_index("problem")
    assert not pairs.loc["gemm 256x10240x8192 bf16 nt", "same_config"]
    assert pairs.loc["gemm 2048x8192x8192 bf16 nt", "same_config"]
    line = gap_change.change_summary(gap_change.gap_change(before, after)).iloc[0]
    assert line["config_changed"] == 1
    assert line["change_new_config"] == pytest.approx(1.10, rel=3e-3)
    assert line["change_same_config"] == pytest.approx(1 / 1.02, rel=3e-3)
    text = gap_change.render(gap_change.gap_change(before, after))
    assert "128x128x64 w8 s4 -> 128x256x64 w8 s4" in text
    assert "change_same_config" in text
