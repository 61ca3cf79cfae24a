"""Ceiling extraction and ceiling fractions on synthetic rows; datasheet lookup; the tables;
`harness ceilings` end to end on the CPU."""

import json
import math

import pandas as pd
import pytest
from omegaconf import OmegaConf

from harness import store
from harness.cli import main
from harness.config import compose_run_config
from harness.providers import load_all
from harness.report.ceiling_tables import bandwidth_table, ceilings_table, latency_table
from harness.report.ceilings import (
    CEILING_METRICS,
    attach_ceiling_fraction,
    candidates,
    ceiling_rows,
    readers_per_block,
)
from harness.report.datasheet import DATASHEET, datasheet_value, lookup
from harness.report.levels import level_of
from harness.report.published import LUO_2024
from harness.sweep import expand

H200 = {
    "device_name": "NVIDIA H200",
    "device_type": "cuda",
    "device_l2_bytes": 60 << 20,
    "device_sm_count": 132,
    "device_uuid": "GPU-x",
}
GIB = 1 << 30


def row(**kw) -> dict:
    base = {c: None for c in store.COLUMNS}
    base.update(H200, status="ok", timestamp="2026-01-01T00:00:00+00:00")
    base.update(kw)
    return base


def mem(metric, ws, traffic, gbps, status="ok", provider="triton-stream"):
    return row(
        op="memory",
        metric=metric,
        working_set_bytes=ws,
        traffic_bytes=traffic,
        gbps=gbps,
        status=status,
        provider=provider,
        problem=f"{metric} {ws}",
    )


def gemm(dtype, tflops, status="ok", provider="cublas", m=8192, intensity=2730.0):
    return row(
        op="gemm",
        dtype=dtype,
        m=m,
        tflops=tflops,
        status=status,
        provider=provider,
        flops=1.0,
        intensity_flop_per_byte=intensity,
        problem=f"gemm {m} {dtype}",
    )


SYNTHETIC = pd.DataFrame(
    [
        mem("read", 4 * GIB, 4 * GIB, 4300.0),
        mem("read", 4 * GIB, 4 * GIB, 4400.0, provider="torch-stream"),
        mem("read", 4 * GIB, 4 * GIB, 9999.0, status="wrong"),  # never a ceiling
        mem("read", 128 << 20, 128 << 20, 8000.0),  # < 8x L2: partly cached, not HBM
        mem("write", 4 * GIB, 4 * GIB, 4100.0),
        mem("copy", 4 * GIB, 4 * GIB, 4240.0),
        mem("read", 8 << 20, 4 * GIB, 11000.0),  # L2-resident, re-read
        mem("read", 64 << 10, 4 * GIB, 30000.0),  # L1-resident: not an L2 number
        mem("read", 8 << 20, 8 << 20, 5000.0),  # one pass: not an L2 number
        {  # 4 programs on each 16 KiB block at once: shared lines, not an L2 stream
            **mem("read", 2 << 20, 4 * GIB, 17000.0),
            "dtype": "fp32",
            "provider_config": json.dumps(
                {"kernel": "stream_read", "BLOCK": 4096, "programs": 512}
            ),
        },
        gemm("bf16", 750.0),
        gemm("bf16", 700.0, provider="own-triton"),
        gemm("fp16", 760.0),
        gemm("fp8_e4m3", 1270.0, provider="cublaslt-fp8"),
        gemm("tf32", 0.0, status="skipped"),
        row(op="fma", tflops=60.0, provider="triton-fma", problem="fma"),
        row(op="latency", working_set_bytes=4096, latency_ns=20.0),
    ]
)


def by_metric(rows):
    return {r["metric"]: r for r in rows}


def test_best_ok_candidate_per_metric():
    rows = by_metric(ceiling_rows(SYNTHETIC, "run1"))
    assert set(rows) == set(CEILING_METRICS)
    assert rows["hbm_read_gbps"]["gbps"] == 4400.0
    assert rows["hbm_read_gbps"]["provider"] == "torch-stream"
    assert rows["hbm_write_gbps"]["gbps"] == 4100.0 and rows["hbm_copy_gbps"]["gbps"] == 4240.0
    assert rows["l2_read_gbps"]["gbps"] == 11000.0
    assert rows["tensor_bf16_tflops"]["tflops"] == 750.0
    assert rows["tensor_fp8_tflops"]["provider"] == "cublaslt-fp8"
    assert rows["fp32_fma_tflops"]["tflops"] == 60.0
    tf32 = rows["tensor_tf32_tflops"]
    assert (
        tf32["status"] == "skipped" and "no ok row among 1 candidates (skipped=1)" in tf32["reason"]
    )
    cfg = json.loads(rows["hbm_read_gbps"]["provider_config"])
    assert cfg["candidates"] == 3 and cfg["ok_candidates"] == 2 and cfg["unit"] == "gbps"
    for r in rows.values():
        assert r["op"] == "ceiling" and r["run_id"] == "run1" and r["device_name"] == "NVIDIA H200"


def test_ceiling_rows_fit_the_store_and_keys_are_stable(tmp_path):
    rows = ceiling_rows(SYNTHETIC, "run1")
    assert len({r["point_key"] for r in rows}) == len(rows)
    assert [r["point_key"] for r in rows] == [r["point_key"] for r in ceiling_rows(SYNTHETIC, "x")]
    for r in rows:
        store.write_row(tmp_path, r)
    back = store.read_rows(tmp_path)
    assert len(back) == len(rows) and set(back["op"]) == {"ceiling"}


def test_candidate_rules():
    hbm = candidates(SYNTHETIC, "hbm_read_gbps")
    assert set(hbm["working_set_bytes"]) == {4 * GIB}  # 128 MiB < 8 x 60 MiB L2 is excluded
    l2 = candidates(SYNTHETIC, "l2_read_gbps")
    assert list(l2["working_set_bytes"]) == [8 << 20]
    assert list(readers_per_block(SYNTHETIC[SYNTHETIC["working_set_bytes"] == 2 << 20])) == [4]


def test_readers_per_block_recorded_and_inferred():
    before_key = {"kernel": "stream_read", "BLOCK": 4096, "programs": 512}
    recorded = {**before_key, "readers_per_block": 1}
    rows = pd.DataFrame(
        [
            {**mem("read", 2 << 20, 4 * GIB, 1.0), "provider_config": json.dumps(recorded)},
            # before the key: 512 programs over 256 blocks of 16 KiB
            {**mem("read", 4 << 20, 4 * GIB, 1.0), "provider_config": json.dumps(before_key)},
            mem("read", 4 << 20, 4 * GIB, 1.0),  # no config: one reader
        ]
    )
    rows["dtype"] = "fp32"
    assert list(readers_per_block(rows)) == [1, 2, 1]


def test_attach_ceiling_fraction_roofline():
    ceilings = pd.DataFrame(ceiling_rows(SYNTHETIC, "run1"))
    rows = pd.DataFrame(
        [
            gemm("bf16", 375.0),  # compute-bound: 375 / 750
            gemm("bf16", 36.0, m=16, intensity=15.0),  # memory-bound: 36 / (15 x 4.4 TB/s)
            gemm("fp32", 30.0),  # fp32 GEMM against the FMA peak
            mem("copy", 4 * GIB, 4 * GIB, 2120.0),  # memory: against the copy ceiling
            gemm("bf16", 300.0, status="wrong"),
            {**gemm("bf16", 300.0), "device_name": "NVIDIA A100-SXM4-80GB"},  # no ceilings
            row(op="latency", working_set_bytes=4096, latency_ns=20.0),
        ]
    )
    out = attach_ceiling_fraction(rows, ceilings)
    f = list(out["ceiling_fraction"])
    assert f[0] == pytest.approx(0.5)
    assert f[1] == pytest.approx(36.0 / (15.0 * 4400.0 / 1e3))
    assert f[2] == pytest.approx(0.5)
    assert f[3] == pytest.approx(0.5)
    assert all(math.isnan(v) for v in f[4:])
    assert rows["ceiling_fraction"].isna().all()  # the input is not modified


def test_latest_ceiling_wins():
    old = pd.DataFrame(ceiling_rows(SYNTHETIC, "a"))
    new = old.copy()
    new["timestamp"] = "2027-01-01T00:00:00+00:00"
    new.loc[new["metric"] == "tensor_bf16_tflops", "tflops"] = 1000.0
    out = attach_ceiling_fraction(pd.DataFrame([gemm("bf16", 500.0)]), pd.concat([new, old]))
    assert out["ceiling_fraction"].iloc[0] == pytest.approx(0.5)


def test_datasheet_lookup():
    assert lookup("NVIDIA H200").name == "H200 SXM"
    assert lookup("NVIDIA H200 NVL").name == "H200 NVL"
    assert lookup("NVIDIA H100 80GB HBM3").name == "H100 SXM"
    assert lookup("NVIDIA A100-SXM4-80GB").hbm_tbps == pytest.approx(2.039)
    assert lookup("AMD Instinct MI300X").fp8_tflops == pytest.approx(2614.9)
    gcd = lookup("AMD Instinct MI250X / MI250", sm_count=110)
    assert gcd.bf16_tflops == pytest.approx(191.5) and gcd.hbm_tbps == pytest.approx(1.6384)
    assert lookup("Intel(R) Data Center GPU Max 1550").l2_mib == 408.0
    assert lookup("Intel(R) Xeon(R) Processor") is None and lookup(None) is None
    assert datasheet_value(lookup("NVIDIA H200"), "hbm_copy_gbps") == pytest.approx(4800.0)
    assert datasheet_value(lookup("NVIDIA H200"), "l2_read_gbps") is None
    assert datasheet_value(lookup("NVIDIA A100-SXM4-80GB"), "tensor_fp8_tflops") is None
    names = {s.name for s in DATASHEET}
    assert {
        "H100 SXM",
        "H200 SXM",
        "A100 SXM4 80GB",
        "L40S",
        "MI250X",
        "MI300X",
        "Max 1550",
    } <= names


def test_levels_and_tables():
    l2 = 60 << 20
    assert [level_of(ws, l2) for ws in (4096, 8 << 20, 50 << 20, 1 << 30)] == [
        "l1",
        "l2",
        None,
        "global",
    ]
    assert level_of(4 << 20, None) == "l2" and level_of(1 << 30, None) == "global"
    text = ceilings_table(pd.DataFrame(ceiling_rows(SYNTHETIC, "r")))
    assert "H200 SXM" in text and "4800" in text and "91.7%" in text  # 4400 / 4800 GB/s
    assert "8 MiB" not in bandwidth_table(SYNTHETIC) and "8MiB" in bandwidth_table(SYNTHETIC)
    lat = pd.DataFrame(
        [
            row(
                op="latency",
                working_set_bytes=16384,
                stride_bytes=128,
                latency_ns=20.5,
                latency_cycles=40.6,
                sm_clock_mhz=1980.0,
            )
        ]
    )
    text = latency_table(lat)
    assert (
        "40.6" in text and str(LUO_2024.cycles["H800 PCIe"]["l1"]) in text and "2402.13499" in text
    )


def test_ceilings_preset_has_a_candidate_for_every_metric():
    cfg = compose_run_config(["sweep=ceilings"])
    points = expand(OmegaConf.to_container(cfg.sweep.groups), load_all())
    frame = pd.DataFrame(
        [row(op=p.problem.op, provider=p.provider, **p.problem.axes()) for p in points]
    )
    for metric in CEILING_METRICS:
        assert len(candidates(frame, metric)) > 0, metric


def test_harness_ceilings_on_cpu_writes_ceiling_rows(tmp_path, capsys):
    argv = ["ceilings", "device=cpu", f"results_dir={tmp_path}", "run_id=c", "progress=false"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "tensor_fp8_tflops" in out and "no ok row" in out
    df = store.read_rows(tmp_path / "c")
    ceil = df[df["op"] == "ceiling"].set_index("metric")
    assert set(ceil.index) == set(CEILING_METRICS)
    ok = set(ceil.index[ceil["status"] == "ok"])
    assert ok == set(CEILING_METRICS) - {"tensor_fp8_tflops"}
    assert main(["ceilings", f"show={tmp_path}"]) == 0
    shown = capsys.readouterr().out
    assert "## bandwidth versus working set" in shown and "## pointer-chase latency" in shown
    assert "## fraction of the measured roofline" in shown and "gemm 64x64x64 bf16" in shown
