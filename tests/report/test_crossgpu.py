"""Cross-GPU comparison on two synthetic GPUs whose points sit exactly on their rooflines, so
every speedup is known: pairing, the protocol filter, regimes, predicted ratios, decode
crossovers, the command (output, files, bad inputs), the report section, and the committed
H100 and H200 runs."""

import re
from pathlib import Path

import pytest
from report_fixtures import ceiling_row, speed_row, write_run

from harness.cli import main
from harness.report import crossgpu as xg
from harness.report import crossgpu_batch as xb
from harness.report.crossgpu_tables import build, latex, markdown
from harness.report.data import load
from harness.report.peaks import Peaks
from harness.workloads import get_workload, problem_flops, problem_min_bytes

REPO = Path(__file__).resolve().parents[2]
CEILINGS = {
    "h100": {"hbm_read_gbps": 3000.0, "tensor_bf16_tflops": 600.0},
    "h200": {"hbm_read_gbps": 4500.0, "tensor_bf16_tflops": 600.0},
}
# ridges: A 200 FLOP/B, B 133.3 FLOP/B
GEMM = {"n": 8192, "k": 8192, "dtype": "bf16", "layout": "nt", "batch": 1}
M_MEMORY, M_BETWEEN, M_COMPUTE = 16, 160, 4096  # intensities ~16, ~157, ~2731 FLOP/B
HOLD = {"stream_hold": "flag", "l2_flush": "read", "warmup_ms": 300.0}


def _roof_ms(dev: str, op: str, problem: dict) -> float:
    c = CEILINGS[dev]
    flops, nbytes = problem_flops(op, problem), problem_min_bytes(op, problem)
    return max(flops / (c["tensor_bf16_tflops"] * 1e12), nbytes / (c["hbm_read_gbps"] * 1e9)) * 1e3


def _row(dev, m, provider="cublas", run="main", efficiency=0.8, **over):
    p = {"m": m, **GEMM}
    r = speed_row(
        dev,
        "gemm",
        p,
        provider,
        run,
        median_ms=_roof_ms(dev, "gemm", p) / efficiency,
        noise=0.002,
        n=50,
    )
    r.update(HOLD)
    r.update(over)
    return r


def _gpu(dev: str) -> xg.Gpu:
    name = {"h100": "NVIDIA H100 80GB HBM3", "h200": "NVIDIA H200"}[dev]
    return xg.Gpu(name, Peaks(name, dict(CEILINGS[dev])))


def _ceilings(dev):
    rows = [ceiling_row(dev, m, v, f"{dev}-ceilings") for m, v in CEILINGS[dev].items()]
    # a GEMM of the ceilings run: it defines the compute ceiling, so it is never compared
    rows.append(_row(dev, M_COMPUTE, "own-triton", f"{dev}-ceilings", efficiency=1.0))
    return rows


@pytest.fixture(scope="module")
def two_gpus(tmp_path_factory):
    root = tmp_path_factory.mktemp("xgpu")
    a = [_row("h100", m) for m in (M_MEMORY, M_BETWEEN, M_COMPUTE)]
    a.append(_row("h100", M_MEMORY, "own-triton"))
    a.append(_row("h100", 64, "own-triton", stream_hold="flag"))  # B has it without the hold
    a.append(_row("h100", 32, "cublas"))  # only on A
    a.append(
        _row(
            "h100",
            M_MEMORY,
            "own-triton",
            run="older",
            efficiency=0.4,
            timestamp="2025-01-01T00:00:00+00:00",
        )
    )  # an earlier row: the latest wins
    a.append(
        speed_row(
            "h100", "gemm", {"m": 8, **GEMM}, "cublas", "main", status="skipped", reason="not here"
        )
    )
    b = [_row("h200", m) for m in (M_MEMORY, M_BETWEEN, M_COMPUTE)]
    # B's own-triton keeps 80% of its roofline on A but reaches only 40% on B
    b.append(_row("h200", M_MEMORY, "own-triton", efficiency=0.4))
    b.append(_row("h200", 64, "own-triton", stream_hold="none"))  # the timer without the hold
    b.append(_row("h200", 128, "cublas", l2_flush=None, stream_hold=None, warmup_ms=30.0))
    write_run(root / "h100", "main", a[:-2] + a[-1:])
    write_run(root / "h100", "older", [a[-2]])
    write_run(root / "h100", "h100-ceilings", _ceilings("h100"))
    write_run(root / "h200", "main", b)
    write_run(root / "h200", "h200-ceilings", _ceilings("h200"))
    write_run(root / "bare", "main", b[:1])  # a GPU with no ceilings in its results folder
    return root


@pytest.fixture(scope="module")
def pairing(two_gpus):
    return xg.pair_rows(load([two_gpus / "h100"]), load([two_gpus / "h200"]), n_boot=200)


def test_regime_and_predicted_ratio():
    a, b = _gpu("h100"), _gpu("h200")
    assert a.ridge("bf16") == pytest.approx(200.0) and b.ridge("bf16") == pytest.approx(
        133.33, rel=1e-3
    )
    assert xg.regime(50, a, b, "bf16") == "memory"
    assert xg.regime(150, a, b, "bf16") == "between"
    assert xg.regime(200, a, b, "bf16") == "compute"
    assert xg.predicted(50, a, b, "bf16") == pytest.approx(1.5)  # HBM read ratio
    assert xg.predicted(1000, a, b, "bf16") == pytest.approx(1.0)  # tensor-ceiling ratio
    # between the ridges: B at its peak, A on its bandwidth slope
    assert xg.predicted(150, a, b, "bf16") == pytest.approx(600 / (150 * 3.0))
    assert xg.regime(50, a, b, "fp8_e4m3") is None and xg.predicted(
        50, a, b, "fp8_e4m3"
    ) != xg.predicted(50, a, b, "fp8_e4m3")


def test_pairs_points_with_the_roofline_speedups(pairing):
    pts = pairing.points.set_index(["provider", "problem"])
    cases = {
        ("cublas", M_MEMORY): "memory",
        ("cublas", M_BETWEEN): "between",
        ("cublas", M_COMPUTE): "compute",
    }
    for (provider, m), regime in cases.items():
        r = pts.loc[(provider, f"gemm {m}x8192x8192 bf16 nt")]
        assert r["regime"] == regime
        assert r["speedup"] == pytest.approx(r["predicted"], rel=0.01)  # same efficiency on both
        assert r["ci_lo"] <= r["speedup"] <= r["ci_hi"]
        assert r["roof_a"] == pytest.approx(0.8, rel=0.01) and r["roof_b"] == pytest.approx(
            0.8, rel=0.01
        )
    mem = pts.loc[("cublas", f"gemm {M_MEMORY}x8192x8192 bf16 nt")]
    assert mem["predicted"] == pytest.approx(1.5)
    own = pts.loc[("own-triton", f"gemm {M_MEMORY}x8192x8192 bf16 nt")]
    assert own["vs_predicted"] == pytest.approx(0.5, rel=0.01)  # 40% of B's roof / 80% of A's
    assert own["run_a"] == "main"  # the later of its two rows on A
    assert len(pairing.points) == 4


def test_protocol_filter_and_dropped_rows(pairing):
    assert pairing.protocol["stream_hold"] == "flag"
    why = dict(
        zip(
            pairing.dropped["reason"],
            zip(pairing.dropped["rows on A"], pairing.dropped["rows on B"], strict=True),
            strict=True,
        )
    )
    assert why["measured under another protocol (differs in stream_hold)"] == (0, 1)
    assert why["measured under another protocol (differs in l2_flush, stream_hold, warmup_ms)"] == (
        0,
        1,
    )
    assert why["only on A (no row of the point on B under this protocol)"] == (2, 0)  # m=32, m=64
    assert why["an earlier row of the same point and protocol (the latest is compared)"] == (1, 0)
    assert why["point of a ceilings run (it defines the prediction)"] == (1, 1)
    assert why["status not ok (skipped, error, wrong)"] == (1, 0)
    assert pairing.dropped["rows on A"].sum() + len(pairing.points) == 11  # every row accounted
    problems = set(pairing.points["problem"])
    assert (
        "gemm 64x8192x8192 bf16 nt" not in problems and "gemm 128x8192x8192 bf16 nt" not in problems
    )


def test_findings_and_summary_come_from_the_numbers(two_gpus):
    x = build(load([two_gpus / "h100"]), load([two_gpus / "h200"]), n_boot=0)
    summary = x.summary.frame.set_index(["provider", "regime"])
    assert summary.loc[("cublas", "memory"), "median H200/H100"] == "1.50x"
    assert summary.loc[("cublas", "memory"), "within 10%"] == "100%"
    assert summary.loc[("own-triton", "memory"), "within 10%"] == "0%"
    text = " ".join(x.findings)
    assert "1 memory-bound point runs 1.50x the speed on the H200 against 1.50x predicted" in text
    assert "80% of the H100's roofline but 40% of the H200's" in text
    assert "ridge 200 FLOP/B" in x.header[1] and "ridge 133 FLOP/B" in x.header[1]
    md, tex = markdown(x), latex(x)
    assert "## Findings" in md and "| family" in md
    assert "\\begin{itemize}" in tex and "\\toprule" in tex


def _decode_rows(dev: str, run: str, batches) -> list[dict]:
    """Every problem of llama3_8b_decode at `batches` on its roofline (efficiency 1)."""
    w, rows, seen = get_workload("llama3_8b_decode"), [], set()
    for batch in batches:
        for item in w.items(batch):
            if item.label() in seen:
                continue
            seen.add(item.label())
            r = speed_row(
                dev,
                item.op,
                item.problem,
                "cublas",
                run,
                n=5,
                median_ms=_roof_ms(dev, item.op, item.problem),
            )
            rows.append({**r, **HOLD})
    return rows


def _decode_pair(root, h100_rows=lambda rows: rows):
    """llama3_8b_decode on both synthetic GPUs with their ceilings runs, compared; `h100_rows`
    edits the H100's rows (a part left unmeasured there)."""
    w = get_workload("llama3_8b_decode")
    for dev in ("h100", "h200"):
        rows = _decode_rows(dev, "decode", w.batches)
        write_run(root / dev, "decode", h100_rows(rows) if dev == "h100" else rows)
        write_run(
            root / dev,
            "ceilings",
            [ceiling_row(dev, m, v, "ceilings") for m, v in CEILINGS[dev].items()],
        )
    return build(load([root / "h100"]), load([root / "h200"]), n_boot=0)


def test_decode_curves_and_crossovers(tmp_path):
    w = get_workload("llama3_8b_decode")
    x = _decode_pair(tmp_path)
    (ca, cb), *_ = x.curves
    assert ca.composed == list(w.batches) and cb.composed == list(w.batches)
    for c in (ca, cb):  # both affine in the batch: the crossover solves c1 b = m0 + m1 b
        c1 = c.gemm_compute_ms[2] - c.gemm_compute_ms[1]
        m1 = c.gemm_memory_ms[2] - c.gemm_memory_ms[1]
        m0 = c.gemm_memory_ms[1] - m1
        assert c.roofline_crossover == pytest.approx(m0 / (c1 - m1), rel=1e-6)
    assert cb.roofline_crossover < ca.roofline_crossover  # more bandwidth: compute-bound sooner
    assert ca.measured_crossover is not None
    frame = xb.batch_frame(ca, cb)
    assert frame["H200/H100 speedup"].tolist() == pytest.approx(
        frame["predicted (roofline)"].tolist(), rel=1e-3
    )
    assert f"~{cb.roofline_crossover:.0f}" in x.findings[-1]


def test_a_part_measured_on_one_gpu_only_is_left_out_of_both_steps(tmp_path):
    """The H100 has no layer-op rows (as its Llama-3-70B decode run), the H200 has all: both
    steps leave them out, so the speedup compares the same parts (it stays the roofline's)."""
    from harness.workloads.derive import LAYER_OPS

    x = _decode_pair(tmp_path, lambda rows: [r for r in rows if r["op"] not in LAYER_OPS])
    (ca, cb), *_ = x.curves
    for c in (ca, cb):
        left_out = {i.op for i in c.step(1).omitted}
        assert left_out and left_out <= set(LAYER_OPS)
    assert {i.name for i in ca.step(1).omitted} == {i.name for i in cb.step(1).omitted}
    frame = xb.batch_frame(ca, cb)
    assert frame["H200/H100 speedup"].tolist() == pytest.approx(
        frame["predicted (roofline)"].tolist(), rel=1e-3
    )
    assert "Left out of both GPUs' steps" in x.batches[0].caption


def test_command_prints_and_writes(two_gpus, tmp_path, capsys):
    out = tmp_path / "x"
    argv = [
        "crossgpu",
        str(two_gpus / "h100"),
        str(two_gpus / "h200"),
        f"out={out}",
        "n_boot=0",
        "points=true",
    ]
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert text.startswith("# Cross-GPU: NVIDIA H200 against NVIDIA H100 80GB HBM3")
    assert "every paired point" in text and "written:" in text
    assert (out / "crossgpu.md").read_text().startswith("# Cross-GPU")
    assert "\\toprule" in (out / "crossgpu.tex").read_text()
    assert main([*argv[:3], f"out={tmp_path / 'y'}", "files=tex", "n_boot=0"]) == 0
    assert (tmp_path / "y" / "crossgpu.tex").exists() and not (
        tmp_path / "y" / "crossgpu.md"
    ).exists()


def test_run_folders_take_the_ceilings_of_their_results_folder(two_gpus, capsys):
    argv = [
        "crossgpu",
        str(two_gpus / "h100" / "main"),
        str(two_gpus / "h200" / "main"),
        "n_boot=0",
    ]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert (
        f"Ceilings of A ({two_gpus / 'h100' / 'main'} holds none) from {two_gpus / 'h100'}." in out
    )
    assert "4 points paired under one protocol" in out
    assert "point of a ceilings run" not in out  # only the ceiling rows are taken from beside


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["{a}"], "crossgpu: the following arguments are required: B"),
        (["{a}", "{root}/nowhere"], "path: '"),
        (["{root}/h100", "{root}"], "B: rows of 2 GPUs"),
        (["{a}", "{root}/bare/main"], "B: no measured HBM read ceiling for NVIDIA H200"),
        (["{a}", "{b}", "files=pdf"], "files: 'pdf'; allowed: a comma-separated subset of md,tex"),
        (["{a}", "{b}", "n_boot=5"], "n_boot: 5; allowed: 0 or >= 100"),
        (["{a}", "{b}", "points=maybe"], "points: 'maybe'; allowed: true, false"),
        (["{a}", "{b}", "colour=red"], "crossgpu: unknown key 'colour'"),
    ],
)
def test_bad_inputs_exit_2_with_one_line(two_gpus, args, expected, capsys):
    fill = {"a": two_gpus / "h100", "b": two_gpus / "h200", "root": two_gpus}
    argv = ["crossgpu", *(a.format(**fill) for a in args)]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("harness: error: ") and expected in err[0], err


def test_report_section_for_two_gpus(two_gpus, tmp_path):
    from harness.report import build_report

    report = build_report([two_gpus], tmp_path / "r", files="html")
    html = (tmp_path / "r" / "index.html").read_text()
    assert 'id="crossgpu-nvidia-h200-vs-nvidia-h100-80gb-hbm3"' in html
    assert "memory-bound point runs 1.50x the speed on the H200" in html
    stems = {f.stem for f in report.figures}
    assert "crossgpu-nvidia-h200-vs-nvidia-h100-80gb-hbm3-speedup" in stems


def test_report_section_says_why_without_ceilings(built):
    """The shared synthetic report: an H200 with ceilings and an H100 without."""
    html = (built.out_dir / "index.html").read_text()
    assert "No comparison: A: no measured HBM read ceiling for NVIDIA H100 80GB HBM3" in html


def test_committed_h100_and_h200_runs(capsys):
    argv = ["crossgpu", str(REPO / "results/h100"), str(REPO / "results/h200"), "n_boot=0"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    head = out.splitlines()[2]
    paired = int(head.split(": ")[1].split(" points paired")[0])
    assert paired > 0, head
    assert "Llama-3-8B decode" in out and "Llama-3-70B decode" in out
    # rows faster than a ceilings run are counted and the fastest named, the roof left as it is
    assert re.search(r"H200 tensor_bf16_tflops: \d+ rows above the ceilings run's [\d,]+", out)


def test_a_caution_where_capped_points_were_settled_on_one_gpu_only(tmp_path):
    """The H200's compute-bound row settled the power limiter (schema 4), the H100's did not:
    the findings say so; the memory-bound pair, never capped, does not count."""
    capped = dict(throttle_reasons="sw_power_cap")
    a = [_row("h100", M_COMPUTE, **capped), _row("h100", M_MEMORY)]
    b = [_row("h200", M_COMPUTE, power_settle_s=1.1, **capped), _row("h200", M_MEMORY)]
    for dev, rows in (("h100", a), ("h200", b)):
        write_run(tmp_path / dev, "main", rows)
        write_run(tmp_path / dev, f"{dev}-ceilings", _ceilings(dev))
    x = build(load([tmp_path / "h100"]), load([tmp_path / "h200"]), n_boot=0)
    assert x.pairing.settled_one_side == 1
    assert any(f.startswith("1 of 2 paired points ran power-capped") for f in x.findings)


def test_the_cold_read_prediction_takes_each_gpus_fixed_cost(tmp_path):
    """A memory-bound point of 16-64 MiB: the HBM ratio predicts 1.5x, but one cold read pass
    costs a fixed 4.8 us plus its bytes on both GPUs, so a point whose time tracks that read
    gains less on B; the cold-read prediction is t_A / t_B at the point's bytes, and a point
    below the probes' smallest size gets none (session 92: cuBLAS's memory-bound GEMMs on the
    committed rows, 64% of points within 10% of the HBM ratio, 92% of this)."""
    from report_fixtures import read_once_row

    mib = 1 << 20
    sizes = [8 * mib, 16 * mib, 64 * mib, 256 * mib, 1024 * mib]
    rates = {"h100": 3000.0, "h200": 4500.0}
    fixed_us = 4.8
    for dev, gbps in rates.items():
        reads = [
            read_once_row(dev, b, b / (fixed_us * 1e3 + b / gbps), f"{dev}-read") for b in sizes
        ]
        write_run(tmp_path / dev, f"{dev}-read", reads)
        # a CPU's read rows beside them (the smoke run's probes): never the GPU's curve
        write_run(tmp_path / dev, "cpu-read", [read_once_row("cpu", 64 * mib, 50.0, "cpu-read")])
        write_run(tmp_path / dev, f"{dev}-ceilings", _ceilings(dev))
        small = {"m": 1, "n": 1024, "k": 1024, "dtype": "bf16", "layout": "nt", "batch": 1}
        tiny = speed_row(dev, "gemm", small, "cublas", "main", median_ms=0.006, noise=0.002)
        write_run(tmp_path / dev, "main", [_row(dev, M_MEMORY), {**tiny, **HOLD}])
    p = xg.pair_rows(load([tmp_path / "h100"]), load([tmp_path / "h200"]), n_boot=0)
    pts = p.points.set_index("problem")
    mem = pts.loc[f"gemm {M_MEMORY}x8192x8192 bf16 nt"]
    nbytes = problem_min_bytes("gemm", {"m": M_MEMORY, **GEMM})
    assert 64 * mib < nbytes < 256 * mib and mem["predicted"] == pytest.approx(1.5)

    def read_ms(gbps_at_bytes: float) -> float:
        return (fixed_us * 1e3 + nbytes / gbps_at_bytes) * 1e-6

    expected = read_ms(rates["h100"]) / read_ms(rates["h200"])
    # the curve is linear in log bytes between probed sizes, so the interpolated time is close
    assert mem["predicted_read"] == pytest.approx(expected, rel=0.02)
    assert 1.3 < mem["predicted_read"] < 1.45
    # 2 MiB of weights: below the smallest probe, so no cold-read prediction
    tiny_point = pts.loc["gemm 1x1024x1024 bf16 nt"]
    assert tiny_point["predicted_read"] != tiny_point["predicted_read"]
    assert mem["vs_predicted_read"] == pytest.approx(mem["speedup"] / mem["predicted_read"])
    x = build(load([tmp_path / "h100"]), load([tmp_path / "h200"]), n_boot=0)
    text = markdown(x)
    assert "one cold read of each point's bytes predicts" in text
    assert "median predicted, cold read" in text
    assert "Cold read (the second prediction): H100 5 sizes, 8MiB-1GiB (one pass 4.80 us" in text
    assert "it predicts 1 of the 2 points" in text
    # two run folders: the read-once rows come from beside them with the ceilings
    argv = ["crossgpu", str(tmp_path / "h100" / "main"), str(tmp_path / "h200" / "main")]
    assert main([*argv, "n_boot=0"]) == 0
    by_folders = xg.pair_rows(
        *(xg.with_ceilings(load([tmp_path / d / "main"]), tmp_path / d / "main")[0] for d in rates),
        n_boot=0,
    ).points.set_index("problem")
    assert by_folders.loc[mem.name, "predicted_read"] == pytest.approx(mem["predicted_read"])


def test_a_shortfall_the_cold_read_explains_is_not_blamed_on_the_kernel():
    """Memory-bound points at 1.25x where the HBM ratio says 1.5x: if one cold read of their
    bytes predicts 1.30x, the finding says the read's fixed cost is what the ratio leaves out;
    if it predicts 1.48x, the kernel is what does not keep up (HBM bandwidth is not the limit)."""
    import pandas as pd

    from harness.report.crossgpu_tables import _regime_sentence

    def points(read: float) -> pd.DataFrame:
        n = 4
        return pd.DataFrame(
            {
                "speedup": [1.25] * n,
                "predicted": [1.5] * n,
                "vs_predicted": [1.25 / 1.5] * n,
                "roof_a": [0.8] * n,
                "roof_b": [0.8 * 0.89] * n,
                "predicted_read": [read] * n,
                "vs_predicted_read": [1.25 / read] * n,
                "dtype": ["bf16"] * n,
                "a_ms": [0.1] * n,
            }
        )

    a, b = _gpu("h100"), _gpu("h200")
    explained = _regime_sentence("memory", points(1.30), a, b)
    assert "is what the HBM ratio leaves out" in explained
    assert "not what limits" not in explained
    kernel = _regime_sentence("memory", points(1.48), a, b)
    assert "so HBM bandwidth is not what limits them on the H200" in kernel
    assert "leaves out" not in kernel
    # a read that predicts one point of four does not speak for the group
    few = points(1.30)
    few.loc[1:, ["predicted_read", "vs_predicted_read"]] = float("nan")
    sparse = _regime_sentence("memory", few, a, b)
    assert "1 of the 4 points" in sparse and "leaves out" not in sparse
    assert "not what limits" in sparse
