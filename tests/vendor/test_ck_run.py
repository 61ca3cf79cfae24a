"""CK's tile_example_fmha_fwd on the CPU: its command line from an AttentionProblem, the parser
on recorded output lines, and the ck-fmha providers end to end through measure_point with a
stand-in binary (conftest.py) that prints CK's output format. No AMD GPU or CK build is used."""

from __future__ import annotations

import json

import pytest
import torch
from harness_kernels.ck import fmha_build
from harness_kernels.ck.fmha_run import command_args, parse_output

from harness.device import DeviceInfo
from harness.measure.point import measure_point
from harness.measure.protocol import Protocol
from harness.problems import AttentionProblem
from harness.providers import ck_fmha, load_all

THESIS = AttentionProblem(1, 32, 8, 4096, 4096, 128, causal=True, dtype="fp16")

# Recorded by the thesis (its README, verbatim: the kernel name wraps onto a second line).
README_LINES = """\
# [fp16|batch|bhsd] b:1, h:32/8, s:4096/4096, d:128/128, scale_s:0.0883883, bias:n, p_drop:0, lse:0, squant:0, mask:t(-1:0), v:r011000
# , fmha_fwd_d128_fp16_batch_shb_b128x128x32x128x32x128_r4x1x1_w32x32x16_qr_vr_psddv_mask, 3.955 ms, 69.50 TFlops, 33.94 GB/s, valid:y
"""
# The same run as fmha_fwd.cpp prints it (one line), and as a failed check and an unsupported
# problem print it.
ONE_LINE = (
    "[fp16|batch|bhsd] b:1, h:32/8, s:4096/4096, d:128/128, scale_s:0.0883883, bias:n, p_drop:0, "
    "lse:0, squant:0, mask:t(-1:0), v:r, fmha_fwd_d128_fp16_batch_shb_b128x128x32x128x32x128_"
    "r4x1x1_w32x32x16_qr_vr_psddv_mask, 3.955 ms, 69.50 TFlops, 33.94 GB/s, valid:y\n"
)
INVALID = ONE_LINE.replace("valid:y", "valid:n")
UNSUPPORTED = (
    "[bf16|batch|bhsd] b:2, h:8/8, s:100/100, d:96/96, scale_s:0.102062, bias:n, p_drop:0, "
    "lse:0, squant:0, mask:n, v:r, not supported yet\n"
)
TIMED = (
    "[bf16|batch|bhsd] b:4, h:64/8, s:1/8192, d:128/128, scale_s:0.0883883, bias:n, p_drop:0, "
    "lse:0, squant:0, mask:n, v:r, fmha_fwd_d128_bf16_batch_shb_b128x128x32x128x32x128_r4x1x1_"
    "w32x32x16_qr_async_vr_psddv, 0.021 ms, 0.20 TFlops, 807.35 GB/s\n"
)


def test_command_line_for_the_thesis_problem():
    args = command_args(*ck_fmha._shape(THESIS), validate=True, seed=1)
    assert args[:10] == [
        "-b=1",
        "-h=32",
        "-h_k=8",
        "-s=4096",
        "-s_k=4096",
        "-d=128",
        "-mask=t",
        "-prec=fp16",
        "-v=1",
        "-kname=1",
    ]
    assert {"-iperm=1", "-operm=1", "-mode=0", "-lse=0", "-bias=n", "-seed=1"} <= set(args)
    assert all(isinstance(a, str) and " " not in a for a in args)  # an argument list, no shell


@pytest.mark.parametrize(
    ("problem", "mask"),
    [
        (AttentionProblem(2, 16, 16, 512, 2048, 128, causal=True, dtype="bf16"), "-mask=b"),
        (AttentionProblem(2, 16, 16, 512, 512, 128, causal=False, dtype="bf16"), "-mask=0"),
        (AttentionProblem(4, 64, 8, 1, 8192, 128, causal=True, dtype="bf16"), "-mask=b"),
    ],
)
def test_mask_is_bottom_right_like_the_harness(problem, mask):
    args = command_args(*ck_fmha._shape(problem), validate=False, seed=2, warmup=7, repeat=30)
    assert mask in args and "-v=0" in args and "-warmup=7" in args and "-repeat=30" in args


def test_seed_zero_is_refused():  # CK would draw a random seed
    with pytest.raises(ValueError, match="seed"):
        command_args(*ck_fmha._shape(THESIS), validate=True, seed=0)


@pytest.mark.parametrize("text", [README_LINES, ONE_LINE])
def test_parser_on_recorded_thesis_output(text):
    r = parse_output(text)
    assert (
        r.kernel
        == "fmha_fwd_d128_fp16_batch_shb_b128x128x32x128x32x128_r4x1x1_w32x32x16_qr_vr_psddv_mask"
    )
    assert (r.ms, r.tflops, r.gbps, r.valid, r.unsupported) == (3.955, 69.50, 33.94, True, False)
    assert r.header["h"] == "32" and r.header["h_k"] == "8" and r.header["mask"] == "t(-1:0)"
    assert r.matches(command_args(*ck_fmha._shape(THESIS), validate=True, seed=1)) is None


def test_parser_invalid_unsupported_untimed_and_garbage():
    assert parse_output(INVALID).valid is False
    r = parse_output(UNSUPPORTED)
    assert r.unsupported and r.ms is None and r.header["d"] == "96"
    r = parse_output(TIMED)
    assert (r.ms, r.valid, r.header["s"], r.header["mask"]) == (0.021, None, "1", "n")
    other = AttentionProblem(4, 32, 8, 1, 8192, 128, causal=False, dtype="bf16")
    assert "h=64 (asked 32)" in r.matches(
        command_args(*ck_fmha._shape(other), validate=False, seed=2)
    )
    with pytest.raises(ValueError, match="no CK FMHA header"):
        parse_output("HIP error: hipErrorNoBinaryForGpu\n")
    with pytest.raises(ValueError, match="no CK result"):
        parse_output(ONE_LINE.split(", fmha_fwd")[0])


# ---------------------------------------------------------------------------------------------
# The providers through measure_point, with a stand-in binary
# ---------------------------------------------------------------------------------------------

FAKE_MI300X = DeviceInfo(
    "cpu",
    0,
    "amd",
    "AMD Instinct MI300X (stand-in)",
    None,
    "gfx942",
    None,
    304,
    4 << 20,
    None,
    None,
    "6.2.41133",
    256 << 20,
)
QUICK = Protocol(min_samples=3, max_samples=5, max_time_s=0.3, warmup_ms=0, seed=3)
SMALL = AttentionProblem(1, 4, 2, 256, 256, 128, causal=True, dtype="fp16")


@pytest.fixture
def rocm(monkeypatch):
    """torch looks like a ROCm build on an MI300X."""
    monkeypatch.setattr(torch.version, "hip", "6.2.41133")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(ck_fmha, "_gpu_arch", lambda: "gfx942")


@pytest.mark.parametrize("name", ["ck-fmha", "ck-fmha-register-trick"])
def test_ok_row_from_the_binary(rocm, fake_ck_binary, name):
    provider = load_all().get("attention", name)
    row = measure_point(SMALL, provider, FAKE_MI300X, QUICK)
    assert row["status"] == "ok", row["reason"]
    assert row["timer"] == "ck-internal" and row["l2"] == "hot" and row["n_samples"] >= 3
    assert row["latency_ms_median"] == 3.955
    assert row["tflops"] == pytest.approx(SMALL.flops() / 3.955e-3 / 1e12)  # ours, not CK's
    config = json.loads(row["provider_config"])
    assert config["ck_check"] == "valid:y" and "CK's own CPU reference" in config["correctness"]
    assert config["ck_reported_tflops"][0] == 69.5 and config["ck_sha"] == fmha_build.CK_SHA
    assert config["variant"] == ("default" if name == "ck-fmha" else "register-trick")
    calls = fake_ck_binary.read_text().splitlines()
    assert "-v=1" in calls[0].split() and "-seed=3001" in calls[0].split()
    timed = calls[1].split()
    assert "-v=0" in timed and "-seed=3002" in timed and "-repeat=26" in timed  # 100 ms / 3.955
    assert row["calls_per_sample"] == 26 and len(calls) == 1 + row["n_samples"]


@pytest.mark.parametrize(
    ("mode", "status", "reason"),
    [
        ("invalid", "wrong", "CK -v=1 validation failed (valid:n)"),
        ("unsupported", "skipped", "CK: not supported yet"),
        ("other-problem", "error", "ran another problem: h=7 (asked 4)"),
        ("crash", "error", "exit 1: HIP error: out of memory"),
    ],
)
def test_failures_become_rows(rocm, fake_ck_binary, monkeypatch, mode, status, reason):
    monkeypatch.setenv("FAKE_CK_MODE", mode)
    row = measure_point(SMALL, load_all().get("attention", "ck-fmha"), FAKE_MI300X, QUICK)
    assert row["status"] == status and reason in row["reason"], row["reason"]
    assert row.get("latency_ms_median") is None and row.get("tflops") is None
    assert len(fake_ck_binary.read_text().splitlines()) == 1  # never timed


def test_unsupported_problems_are_skipped_before_running(rocm, fake_ck_binary):
    provider = load_all().get("attention", "ck-fmha")
    for problem, why in [
        (AttentionProblem(1, 4, 4, 64, 64, 64, dtype="fp16"), "head_dim 128 only"),
        (AttentionProblem(1, 4, 4, 64, 64, 128, dtype="fp32"), "fp16, bf16 only"),
        (
            AttentionProblem(1, 4, 4, 1, 64, 128, dtype="bf16", kv_layout="paged", page_size=16),
            "dense K/V only",
        ),
    ]:
        row = measure_point(problem, provider, FAKE_MI300X, QUICK)
        assert row["status"] == "skipped" and why in row["reason"]
    assert fake_ck_binary.read_text() == ""


def test_available_reasons(monkeypatch, tmp_path, fake_ck):
    ck = load_all().get("attention", "ck-fmha-register-trick")
    monkeypatch.setattr(torch.version, "hip", None)
    assert "needs a ROCm build of torch" in ck.available()
    monkeypatch.setattr(torch.version, "hip", "6.2.41133")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(ck_fmha, "_gpu_arch", lambda: "gfx90a")
    monkeypatch.setenv("HARNESS_CK_CACHE", str(tmp_path / "empty-cache"))
    monkeypatch.setattr(fmha_build, "find_hipcc", lambda: None)
    assert ck.available() == "no hipcc (install ROCm >= 6.2 or set HIPCC)"
    monkeypatch.setattr(fmha_build, "find_hipcc", lambda: "/opt/rocm/bin/hipcc")
    assert ck.available() == (
        "tile_example_fmha_fwd (register-trick, gfx90a) not built: "
        "python -m harness_kernels.ck.fmha_build --config register-trick --arch gfx90a"
    )
    monkeypatch.setenv("HARNESS_CK_ROOT", str(tmp_path / "nowhere"))
    assert ck.available().startswith("composable_kernel not checked out")


def test_list_on_other_platforms_says_why(capsys):
    from harness.cli import main

    assert main(["list", "--op", "attention", "--device", "cpu"]) == 0
    out = capsys.readouterr().out
    lines = [line for line in out.splitlines() if "| ck-fmha" in line]
    assert len(lines) == 3 and all("unavailable: runs on amd, not cpu" in line for line in lines)
