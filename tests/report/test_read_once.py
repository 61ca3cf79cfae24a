"""harness.report.read_once: one cold read pass's rate by bytes, per GPU model, from a
probes_read_once run's rows (the roof `harness gaps` and the serving table give a memory-bound
point)."""

import math

import pandas as pd
import pytest

from harness.report import read_once


def _read(device: str, nbytes: float, gbps: float, **kw) -> dict:
    row = dict(
        device_name=device,
        op="memory",
        status="ok",
        metric="read",
        working_set_bytes=nbytes,
        traffic_bytes=nbytes,
        gbps=gbps,
    )
    row.update(kw)
    return row


def test_each_gpu_model_gets_its_own_curve_of_single_passes():
    rows = pd.DataFrame(
        [
            _read("NVIDIA H200", 1e8, 3800.0),
            _read("NVIDIA H200", 1e8, 3900.0),  # a faster provider at the same size wins
            _read("NVIDIA H200", 4e9, 4600.0),
            _read("NVIDIA H100 80GB HBM3", 1e8, 2600.0),
            _read("NVIDIA H200", 1e7, 9000.0, traffic_bytes=1e9),  # re-reads an L2-sized set
            _read("NVIDIA H200", 1e6, 100.0, status="wrong"),
            _read("NVIDIA H200", 1e6, 100.0, metric="copy"),
            {**_read("NVIDIA H200", 1e6, 5.0), "op": "gemm"},
        ]
    )
    curves = read_once.curves_by_device(rows)
    assert set(curves) == {"NVIDIA H200", "NVIDIA H100 80GB HBM3"}
    assert curves["NVIDIA H200"].to_dict() == {1e8: 3900.0, 4e9: 4600.0}
    assert curves["NVIDIA H100 80GB HBM3"].to_dict() == {1e8: 2600.0}


def test_the_curve_is_linear_in_log_bytes_flat_past_its_end_and_unknown_below_its_start():
    curve = pd.Series({1e8: 3000.0, 1e10: 5000.0})
    at = read_once.gbps_at(curve, pd.Series([1e9, 1e12, 1e8]))
    assert list(at) == pytest.approx([4000.0, 5000.0, 3000.0])
    # Below the smallest probe the rate still climbs: the smallest size's rate would overstate it.
    assert math.isnan(read_once.gbps_at(curve, pd.Series([1e7])).iloc[0])
    mid = 10**8.5  # a quarter of the way in log bytes
    assert read_once.gbps_at(curve, pd.Series([mid])).iloc[0] == pytest.approx(3500.0)
    assert math.isclose(read_once.gbps_at(pd.Series({1e8: 42.0}), pd.Series([5e9])).iloc[0], 42)


def test_rows_without_the_read_columns_give_no_curve():
    rows = pd.DataFrame([{"op": "gemm", "status": "ok", "device_name": "NVIDIA H200"}])
    assert read_once.one_pass_reads(rows).empty
    assert read_once.curves_by_device(rows) == {}


def test_a_hot_cache_run_beside_the_cold_ones_does_not_raise_the_roof():
    """The curve is the fastest row per size, so a `protocol.l2=hot` run in the same tree (an
    H200's 16 MiB read: 4.1 TB/s warm, 2.0 cold) must not count; cold rows of any flush size,
    and rows from before the column, do."""
    rows = pd.DataFrame(
        [
            _read("NVIDIA H200", 1.6e7, 2000.0, l2="cold"),
            _read("NVIDIA H200", 1.6e7, 4100.0, l2="hot"),
            _read("NVIDIA H200", 1.6e7, 1900.0, l2="cold", l2_flush_bytes=480 * 2**20),
            _read("NVIDIA H200", 4e9, 4600.0, l2=None),
        ]
    )
    assert read_once.curves_by_device(rows)["NVIDIA H200"].to_dict() == {1.6e7: 2000.0, 4e9: 4600.0}
