"""`harness inspect` on the CPU: a GEMM, an attention and a microbenchmark kernel compiled
ahead of time for sm_80, sm_90, gfx90a and gfx942 (child processes without the interpreter);
the table, the parquet rows, and bad input."""

import json

import pytest

from harness import store
from harness.cli import main
from harness.inspect import TARGETS, matches, mma_kind

KERNELS = "gemm:full-bf16-8192,attention:attn_prefill_full_causal_d128,microbench:fma"
WANT_MMA = {"sm_80": "HMMA", "sm_90": "HGMMA", "gfx90a": "MFMA", "gfx942": "MFMA"}


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    out = tmp_path_factory.mktemp("inspect")
    argv = ["inspect", f"kernels={KERNELS}", f"results_dir={out}", "run_id=aot", "jobs=2"]
    assert main(argv) == 0
    return store.read_rows(out / "aot")


def test_one_row_per_kernel_and_target(report):
    assert len(report) == 3 * len(TARGETS)
    assert set(report["op"]) == {"inspect"} and set(report["target"]) == set(TARGETS)
    assert (report["status"] == "ok").all(), report.loc[report["status"] != "ok", "reason"].tolist()
    assert (report["registers"] > 0).all() and (report["num_warps"] > 0).all()
    assert report["spills"].notna().all() and report["shared_bytes"].notna().all()


@pytest.mark.parametrize(
    "kernel", ["gemm:full-bf16-8192", "attention:attn_prefill_full_causal_d128"]
)
def test_matrix_instructions_per_target(report, kernel):
    rows = report[report["problem"] == kernel].set_index("target")
    for target, kind in WANT_MMA.items():
        assert rows.loc[target, "mma_kind"] == kind, (target, rows.loc[target, "mma_kind"])
        assert rows.loc[target, "mma_count"] > 0
        detail = json.loads(rows.loc[target, "provider_config"])
        assert sum(detail["mma"].values()) == rows.loc[target, "mma_count"]
    assert rows.loc["sm_90", "shared_bytes"] <= 232448  # fits Hopper's opt-in shared memory
    assert (rows["provider"] == "own-triton").all()


def test_no_tma_below_sm90_and_fma_kernel_has_no_mma(report):
    attn = report[report["problem"] == "attention:attn_prefill_full_causal_d128"]
    sm80 = json.loads(attn.set_index("target").loc["sm_80", "provider_config"])
    assert sm80["config"]["USE_TMA"] is False and "no TMA" in sm80["config"]["note"]
    fma = report[report["problem"] == "microbench:fma"]
    assert set(fma["mma_kind"]) == {"none"} and set(fma["provider"]) == {"triton-fma"}


def test_mma_kind_and_patterns():
    assert mma_kind({"wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16": 4}) == "HGMMA"
    assert mma_kind({"mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32": 8}) == "HMMA"
    assert mma_kind({"v_mfma_f32_32x32x8_bf16": 2, "v_mfma_f32_16x16x16_bf16": 1}) == "MFMA"
    assert mma_kind({}) == "none"
    assert matches("gemm:full-bf16-8192", ["gemm"]) and matches("gemm:full-bf16-8192", ["full-*"])
    assert not matches("attention:attn_decode_reduce", ["gemm", "attn_prefill*"])


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["inspect", "targets=sm_70"], "targets: unknown 'sm_70'; allowed: sm_80, sm_90"),
        (["inspect", "foo=1"], "inspect: unknown argument 'foo=1'; allowed: targets="),
        (["inspect", "write=maybe"], "write: 'maybe' is not a boolean; allowed: true, false"),
        (["inspect", "jobs=0"], "jobs: '0' is not a positive integer"),
        (["inspect", "targets=sm_90", "kernels=nope*"], "kernels: nothing matches nope*; allowed:"),
        (["ceilings", "show="], "show: no folder given; allowed: show=DIR"),
        (["ceilings", "sweep=nope", "device=cpu"], "sweep: unknown 'nope'; allowed:"),
        (["ceilings", "device=cpu", "foo=1"], "foo: unknown key; allowed: sweep, protocol"),
    ],
)
def test_bad_input_exits_2_with_one_line(argv, expected, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("harness: error: ") and expected in err[0], err
