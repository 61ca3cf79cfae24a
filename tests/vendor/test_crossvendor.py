"""The cross-vendor table on synthetic rows: an H200 with measured ceilings, an MI300X and an
MI250X GCD without (datasheet fallback, labelled), each GPU normalised to its own ceilings."""

from __future__ import annotations

import math
import sys

import pandas as pd
import pytest

from harness.report.crossvendor import normalised_table, own_vs_vendor, render

H200 = dict(
    device_name="NVIDIA H200",
    device_vendor="nvidia",
    device_arch="sm_90",
    device_type="cuda",
    device_sm_count=132,
)
MI300X = dict(
    device_name="AMD Instinct MI300X",
    device_vendor="amd",
    device_arch="gfx942",
    device_type="cuda",
    device_sm_count=304,
)
MI250X = dict(
    device_name="AMD Instinct MI250X",
    device_vendor="amd",
    device_arch="gfx90a",
    device_type="cuda",
    device_sm_count=110,  # one GCD of two
)
CPU = dict(
    device_name="Xeon",
    device_vendor="cpu",
    device_arch="x86_64",
    device_type="cpu",
    device_sm_count=2,
)
GEMM = dict(
    op="gemm",
    problem="gemm 8192x8192x8192 bf16",
    dtype="bf16",
    phase=None,
    intensity_flop_per_byte=2730.7,
)
PREFILL = dict(
    op="attention",
    problem="attn b1 h32/8 s4096/4096 d128 causal fp16",
    dtype="fp16",
    phase="prefill",
    intensity_flop_per_byte=1365.0,
)
DECODE = dict(
    op="attention",
    problem="attn b4 h64/8 s1/8192 d128 bf16",
    dtype="bf16",
    phase="decode",
    intensity_flop_per_byte=1.0,
)


def row(dev, prob, provider, family, tflops, ts="2025-01-02", status="ok"):
    gbps = tflops * 1e3 / prob["intensity_flop_per_byte"] if tflops else None
    return {
        **dev,
        **prob,
        "provider": provider,
        "family": family,
        "status": status,
        "tflops": tflops,
        "gbps": gbps,
        "timestamp": ts,
    }


def ceiling(dev, metric, value):
    unit = "gbps" if metric.endswith("_gbps") else "tflops"
    return {
        **dev,
        "op": "ceiling",
        "status": "ok",
        "metric": metric,
        unit: value,
        "timestamp": "2025-01-01",
    }


@pytest.fixture
def rows() -> pd.DataFrame:
    return pd.DataFrame(
        [
            ceiling(H200, "tensor_bf16_tflops", 700.0),
            ceiling(H200, "hbm_read_gbps", 4000.0),
            row(H200, GEMM, "own-triton", "own", 630.0),
            row(H200, GEMM, "cublas", "vendor", 900.0, ts="2024-12-01"),  # older run: ignored
            row(H200, GEMM, "cublas", "vendor", 665.0),
            row(H200, GEMM, "own-triton-no-tma", "own", 400.0),
            row(H200, PREFILL, "own-triton", "own", 500.0),
            row(H200, PREFILL, "sdpa-flash", "vendor", None, status="wrong"),
            row(MI300X, GEMM, "own-triton", "own", 500.0),
            row(MI300X, GEMM, "hipblaslt", "vendor", 800.0),
            row(MI300X, PREFILL, "ck-fmha-register-trick", "own", 250.0),
            row(MI300X, PREFILL, "ck-fmha", "vendor", 300.0),
            row(MI300X, DECODE, "own-triton", "own", 3.0),
            row(MI250X, GEMM, "hipblaslt", "vendor", 150.0),
            row(CPU, GEMM, "torch-cpu", "vendor", 0.5),
        ]
    )


def _line(table, gpu, op, family, phase="-"):
    sel = table[
        (table["gpu"] == gpu)
        & (table["op"] == op)
        & (table["family"] == family)
        & (table["phase"] == phase)
    ]
    assert len(sel) == 1
    return sel.iloc[0]


def test_measured_ceilings_normalise_the_h200(rows):
    t = normalised_table(rows)
    own, vendor = _line(t, "NVIDIA H200", "gemm", "own"), _line(t, "NVIDIA H200", "gemm", "vendor")
    assert own["provider"] == "own-triton" and own["pct_roofline"] == pytest.approx(90.0)
    assert vendor["tflops"] == 665.0 and vendor["pct_roofline"] == pytest.approx(95.0)
    assert own["ceiling_source"] == "measured" and own["bound"] == "compute"
    assert own["pct_compute"] == pytest.approx(90.0)
    # fp16 was not measured: its compute ceiling comes from the datasheet, and says so
    prefill = _line(t, "NVIDIA H200", "attention", "own", "prefill")
    assert prefill["compute_ceiling_tflops"] == pytest.approx(989.4)
    assert prefill["ceiling_source"] == "datasheet compute, measured HBM"
    assert prefill["pct_roofline"] == pytest.approx(100 * 500 / 989.4)


def test_datasheet_fallback_for_amd_is_labelled(rows):
    t = normalised_table(rows)
    gemm = _line(t, "AMD Instinct MI300X", "gemm", "vendor")
    assert gemm["provider"] == "hipblaslt" and gemm["ceiling_source"] == "datasheet"
    assert gemm["arch"] == "gfx942" and gemm["pct_roofline"] == pytest.approx(100 * 800 / 1307.4)
    ck = _line(t, "AMD Instinct MI300X", "attention", "own", "prefill")
    assert ck["provider"] == "ck-fmha-register-trick"
    decode = _line(t, "AMD Instinct MI300X", "attention", "own", "decode")
    assert decode["bound"] == "memory"  # 1 FLOP/B x 5.3 TB/s = 5.3 TFLOP/s
    assert decode["pct_roofline"] == pytest.approx(100 * 3.0 / 5.3)
    assert decode["pct_hbm"] == pytest.approx(100 * 3000 / 5300)
    gcd = _line(t, "AMD Instinct MI250X", "gemm", "vendor")  # one GCD: half the package's peak
    assert gcd["compute_ceiling_tflops"] == pytest.approx(191.5)


def test_cpu_and_failed_rows_are_left_out(rows):
    t = normalised_table(rows)
    assert "Xeon" not in set(t["gpu"]) and "sdpa-flash" not in set(t["provider"])
    assert "Xeon" in set(normalised_table(rows, include_cpu=True)["gpu"])
    cpu = normalised_table(rows, include_cpu=True).set_index("gpu").loc["Xeon"]
    assert math.isnan(cpu["pct_roofline"]) and cpu["ceiling_source"] == "none"


def test_own_vs_vendor_and_render(rows):
    pairs = own_vs_vendor(normalised_table(rows))
    h200 = pairs[(pairs["gpu"] == "NVIDIA H200") & (pairs["op"] == "gemm")].iloc[0]
    assert h200["own_over_vendor"] == pytest.approx(90 / 95)
    mi = pairs[(pairs["gpu"] == "AMD Instinct MI300X") & (pairs["phase"] == "prefill")].iloc[0]
    assert (mi["own_provider"], mi["vendor_provider"]) == ("ck-fmha-register-trick", "ck-fmha")
    assert mi["own_over_vendor"] == pytest.approx(250 / 300)
    text = render(pairs)
    assert "90.0%" in text and "AMD Instinct MI300X" in text
    assert render(normalised_table(rows.iloc[:0])) == "(no ok GEMM or attention rows on a GPU)"


def test_report_module_needs_no_torch():
    import subprocess

    code = "import sys, harness.report.crossvendor; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
