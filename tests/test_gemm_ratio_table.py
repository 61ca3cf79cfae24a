"""scripts/gemm_ratio_table.py: each own GEMM against the fastest vendor row of its point (the
faster of cuBLASLt's two fp8 rows), per M band, with the worst points and the chosen configs."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from script_module import load_script

table = load_script("gemm_ratio_table")

CUTLASS = json.dumps(
    {"library": "own-cutlass", "variant": "sm90-swapab-dp-128x16", "run_options": "heuristic/sw1"}
)
TRITON = json.dumps({"block_m": 64, "block_n": 128, "split_k": 4})


def _row(provider: str, family: str, m: int, ms: float, cfg: str = "{}") -> dict:
    return dict(
        op="gemm",
        provider=provider,
        family=family,
        m=m,
        n=4096,
        k=4096,
        latency_ms_median=ms,
        provider_config=cfg,
    )


def test_reference_is_the_fastest_vendor_row_and_bands_split_by_m():
    rows = pd.DataFrame(
        [
            _row("cublaslt-fp8", "vendor", 1, 0.010),
            _row("cublaslt-fp8-fastaccum", "vendor", 1, 0.011),
            _row("own-cutlass", "own", 1, 0.008, CUTLASS),
            _row("own-triton", "own", 1, 0.020, TRITON),
            _row("cublaslt-fp8", "vendor", 4096, 0.300),
            _row("cublaslt-fp8-fastaccum", "vendor", 4096, 0.200),
            _row("own-cutlass", "own", 4096, 0.250, CUTLASS),
        ]
    )
    lines = table.ratio_table(rows)
    text = "\n".join(lines)
    # M 1: the default-accumulation row is the faster reference (10 us), own CUTLASS 1.25x
    assert "1 4096 4096 | 10.0 (cublaslt-fp8) | 1.250 sm90-swapab-dp-128x16:heuristic/sw1" in text
    assert "0.500 64x128/sk4" in text  # own Triton's tile, half the vendor's speed
    # M 4096: fast accumulation is the reference; own Triton has no row there
    assert "4096 4096 4096 | 200.0 (cublaslt-fp8-fastaccum) | 0.800 " in text and "| -" in text
    cutlass = next(line for line in lines if line.startswith("own-cutlass:"))
    assert "geomean 1.000" in cutlass and "min 0.800 (2 pts)" in cutlass  # sqrt(1.25 * 0.8)
    bands = lines[lines.index(cutlass) + 1]
    assert bands.strip() == "bands: M1-64 1.250 M>=2048 0.800"
    assert "1 below 0.90, 1 below 0.95; worst: 4096x4096x4096 0.800 1x4096x4096 1.250" in text
    # each cuBLASLt row apart: 10/8 and 300/250 against the plain row, 11/8 and 200/250 fast
    each = lines[lines.index(cutlass) + 3]
    assert each == "  against each vendor row: cublaslt-fp8 1.225 cublaslt-fp8-fastaccum 1.049"
    # the best own row per point, where both own providers have one (M 1 only): own CUTLASS
    assert "best of own-cutlass, own-triton: geomean 1.250 min 1.250 (1 pts)" in text
    assert lines[-1].strip() == "bands: M1-64 1.250"


def test_no_vendor_row_says_so():
    rows = pd.DataFrame([_row("own-cutlass", "own", 1, 0.008, CUTLASS)])
    assert table.ratio_table(rows) == ["no vendor row: nothing to compare with"]


def test_clock_line_splits_a_band_ratio_into_clock_and_per_cycle():
    rows = pd.DataFrame(
        [
            {**_row("cublas", "vendor", 256, 0.100), "sm_clock_mhz": 2000.0},
            {**_row("own-cutlass", "own", 256, 0.110, CUTLASS), "sm_clock_mhz": 1800.0},
            {**_row("cublas", "vendor", 4096, 1.000), "sm_clock_mhz": 1500.0},
            {**_row("own-cutlass", "own", 4096, 1.000, CUTLASS), "sm_clock_mhz": 1500.0},
        ]
    )
    lines = table.ratio_table(rows)
    cutlass = next(line for line in lines if line.startswith("own-cutlass:"))
    clock = lines[lines.index(cutlass) + 2]
    # M 256: 0.909x at a 0.900 clock ratio is 1.010x per cycle; M 4096 even on both counts
    assert clock == "  clock own/vendor (per cycle): M128-1024 0.900 (1.010) M>=2048 1.000 (1.000)"


def test_no_clock_line_without_clock_readings():
    rows = pd.DataFrame(
        [
            {**_row("cublas", "vendor", 256, 0.100), "sm_clock_mhz": float("nan")},
            {**_row("own-cutlass", "own", 256, 0.110, CUTLASS), "sm_clock_mhz": float("nan")},
        ]
    )
    assert not any("clock" in line for line in table.ratio_table(rows))


def test_drift_line_is_the_sweep_over_the_tuner_time_per_band():
    tuned = json.dumps({"library": "own-cutlass", "variant": "v", "tuned_ms": 0.100})
    rows = pd.DataFrame(
        [
            _row("cublas", "vendor", 256, 0.100),
            _row("own-cutlass", "own", 256, 0.105, tuned),
            _row("cublas", "vendor", 4, 0.010),
            _row("own-cutlass", "own", 4, 0.010, CUTLASS),  # no tuner time recorded: left out
        ]
    )
    lines = table.ratio_table(rows)
    assert "  sweep/tuner time (median): M128-1024 1.050" in lines


def test_drift_line_reads_own_tritons_pair_re_time_not_its_burst():
    """Own Triton's `tuned_ms` is the `tl` tuner's burst; where the interleaved tl / Gluon
    re-time ran after it (at the power cap for long kernels), that is the tuner's last time of
    the kernel that ran, and the one the sweep is held against (Gluon rows have no `tuned_ms`)."""
    # tl ran though its capped re-time was the slower side (a pair within the noise, which
    # bursts then decided): its own time is read, not the faster side's
    tl = json.dumps(
        {"kernel": "tl", "tuned_ms": 0.090, "choice_tl_ms": 0.100, "choice_gluon_ms": 0.099}
    )
    gluon = json.dumps({"kernel": "gluon-ws", "choice_tl_ms": 0.210, "choice_gluon_ms": 0.200})
    rows = pd.DataFrame(
        [
            _row("cublas", "vendor", 2048, 0.100),
            _row("own-triton", "own", 2048, 0.101, tl),
            _row("cublas", "vendor", 4096, 0.200),
            _row("own-triton", "own", 4096, 0.202, gluon),
        ]
    )
    assert "  sweep/tuner time (median): M>=2048 1.010" in table.ratio_table(rows)


def _run_rows(ms: list[int], vendor_ms: float) -> pd.DataFrame:
    rows = [_row("cublaslt-fp8", "vendor", m, vendor_ms) for m in ms]
    rows += [_row("own-triton", "own", m, 0.010, TRITON) for m in ms]
    rows += [_row("hipblaslt", "vendor", m, float("nan")) for m in ms]
    df = pd.DataFrame(rows).assign(dtype="fp8_e4m3", layout="nt", sm_clock_mhz=float("nan"))
    return df.assign(status=["skipped" if p == "hipblaslt" else "ok" for p in df.provider])


def test_a_grid_over_runs_keeps_each_points_ratio_within_its_run(monkeypatch):
    """`RUN@M,...` keeps those M of a run, so a grid measured over several runs reads as one;
    a point measured in two runs is refused (its rows would mix runs), while skipped rows,
    which every run of the preset holds, are not a clash."""
    runs = {"a": _run_rows([1, 16384], 0.011), "b": _run_rows([1, 128], 0.009)}
    monkeypatch.setattr(table, "read_rows", lambda path, columns: runs[path])
    df = table.read_runs(["b", "a@16384"])
    ok = df[df.status == "ok"]
    assert sorted(set(ok.m)) == [1, 128, 16384] and len(ok) == 6
    text = "\n".join(table.ratio_table(ok))
    assert "1 4096 4096 | 9.0 (cublaslt-fp8) | 0.900 " in text  # run b's M 1, not run a's
    with pytest.raises(SystemExit, match="more than one run .*1x4096x4096"):
        table.read_runs(["a", "b"])


def test_a_model_presets_run_reads_its_gemms_only(monkeypatch):
    """A preset's run (qwen2_5_7b_decode) holds attention and the layer ops too, whose m, n, k
    are empty: only the GEMMs are read, and their shapes print as integers, not 1.0x4096.0."""
    gemms = _run_rows([1], 0.011)
    norm = dict(op="add_rmsnorm", provider="own-triton", family="own", m=float("nan"), n=3584)
    df = pd.concat([gemms, pd.DataFrame([norm | {"k": float("nan"), "status": "ok"}])])
    monkeypatch.setattr(table, "read_rows", lambda path, columns: df)
    ok = table.read_runs(["preset"]).query("status == 'ok'")
    assert set(ok.op) == {"gemm"} and ok.m.dtype.kind == "i"
    assert "1 4096 4096 | 11.0 (cublaslt-fp8) | 1.100 " in "\n".join(table.ratio_table(ok))


def test_a_tile_label_says_swapped_and_two_per_sm():
    """The decode picks differ by the swap and the programs per SM, not only by the tile."""
    cfg = {"block_m": 128, "block_n": 16, "num_stages": 4, "programs_per_sm": 2, "swap_ab": True}
    assert table._tile(json.dumps(cfg)) == "128x16s4/p2/swap"
    assert table._tile(json.dumps({"block_m": 16, "block_n": 64, "num_stages": 5})) == "16x64s5"
