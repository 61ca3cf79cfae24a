"""CLI: bad input exits 2 with one line naming the key and the allowed values, no traceback."""

import subprocess
import sys

import pytest

from harness.cli import main

BAD = [
    (["run", "sweep=nope"], "sweep: unknown 'nope'; allowed: "),
    (["run", "providers=[nope]"], "providers: unknown 'nope'; allowed: "),
    (["run", "sweep.groups.0.product.dtype=[fp64]"], "dtype: unknown 'fp64'; allowed: "),
    (["run", "sweep.groups.0.product.layout=[tt]"], "layout: unknown 'tt'; allowed: nn, nt"),
    (["run", "sweep.groups.0.zip.m=[0,33]"], "m: must be a positive integer"),
    (["run", "sweep.groups.0.zip.k=[-4,48]"], "k: must be a positive integer"),
    (["run", "sweep.groups.1.fixed.kv_heads=3"], "q_heads: 4 is not divisible by kv_heads=3"),
    (["run", "sweep.groups.1.fixed.head_dim=100"], "head_dim: unknown 100; allowed: "),
    (["run", "+sweep.groups.0.fixed.foo=1"], "unknown axis 'foo' for gemm; allowed: m, n, k"),
    (["run", "foo=1"], "foo: unknown key; allowed: sweep, protocol"),
    (["run", "protocol.foo=2"], "protocol.foo: unknown key; allowed: timer, l2"),
    (["run", "protocol.l2=warm"], "protocol.l2: unknown 'warm'; allowed: cold, hot"),
    (["run", "protocol.fill=ones"], "protocol.fill: unknown 'ones'; allowed: randn"),
    (["run", "protocol.min_samples=abc"], "protocol.min_samples: Value 'abc'"),
    (["run", "protocol=nope"], "protocol: unknown 'nope'; allowed: default, graph"),
    (["run", "device=tpu"], "device: unknown 'tpu'; allowed: auto, cpu"),
    (
        ["run", "device=cpu", "protocol.timer=cuda-events"],
        "protocol.timer: 'cuda-events' needs a GPU",
    ),
    (["run", "max_points=2"], "max_points: sweep 'smoke' has"),
    (["run", "sweep"], "sweep: cannot parse"),
    (
        ["run", "sweep.groups.0.op=conv"],
        "sweep.groups[0].op: unknown 'conv'; allowed: gemm, attention",
    ),
    (["frobnicate"], "command: unknown 'frobnicate'; allowed: main, run, list"),
    (["list", "--op", "conv"], "list: "),
]


@pytest.mark.parametrize(("argv", "expected"), BAD, ids=[" ".join(a) for a, _ in BAD])
def test_bad_input_exits_2_with_one_line(argv, expected, capsys):
    if argv[0] == "run":
        argv = (
            [*argv, "dry_run=true", "device=cpu"]
            if "device=" not in " ".join(argv)
            else [*argv, "dry_run=true"]
        )
        argv = (
            ["run", "sweep=smoke", *argv[1:]]
            if not any(a.startswith("sweep=") for a in argv)
            else argv
        )
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert err[0].startswith("harness: error: ") and expected in err[0], err[0]
    assert "allowed" in err[0] or "must be" in err[0] or "needs" in err[0]


def test_console_script_prints_no_traceback():
    out = subprocess.run(
        [sys.executable, "-m", "harness.cli", "run", "sweep=nope", "device=cpu"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 2
    assert "Traceback" not in out.stderr and out.stderr.count("\n") == 1


def test_list_shows_every_provider_with_availability(capsys):
    assert main(["list", "--device", "cpu"]) == 0
    text = capsys.readouterr().out
    assert "unavailable: runs on nvidia, not cpu" in text
    for name in ("cublas", "sdpa-cudnn", "flash-attn", "own-triton", "torch-cpu"):
        assert f" {name} " in text


def test_dry_run_lists_points(capsys):
    assert main(["run", "sweep=smoke", "device=cpu", "dry_run=true", "providers=[torch-cpu]"]) == 0
    out = capsys.readouterr().out
    assert "8 points on cpu" in out and "torch-cpu | gemm 1x64x64 fp32 nn" in out


def test_help_and_no_args():
    assert main(["--help"]) == 0
    assert main([]) == 2
