"""CLI: bad input exits 2 with one line naming the key and the allowed values, no traceback."""

import re
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
    (
        ["run", "sweep=gemm_square", "sweep.groups.0.zip.m=[4096,8192]"],
        "zip: lists differ in length (m: 2, n: 5, k: 5); allowed: lists of one length, "
        "overridden together as 'sweep.groups.0.zip={m:[...],n:[...],k:[...]}'",
    ),
    (["run", "--cfg", "hydra"], "run: argument --cfg/-c: invalid choice: 'hydra'"),
    (["run", "--frobnicate"], "run: unrecognized arguments: --frobnicate"),
    (["ceilings", "show=results", "device=cpu"], "show: prints stored rows, measures nothing"),
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


HELP = {  # command -> what its help shows besides its usage line
    "run": ["results_dir=results/_scratch", "protocol.warmup_ms=", "gemm_square", "quick"],
    "main": ["report_dir=null", "results_dir=results/_scratch", "main_gpu"],
    "ceilings": ["show=null", "here: microbench_smoke", "dry_run=false"],
    "list": ["--op", "--device"],
    "report": ["out=reports/_scratch"],
    "compare": ["threshold=0.02", "n_boot=2000", "--aa"],
    "crossgpu": ["out=null", "files=md,tex", "points=false", "n_boot=200"],
    "gaps": ["worst=15", "against=null"],
    "inspect": ["targets=[sm_80,sm_90,gfx90a,gfx942]", "write=true"],
}


@pytest.mark.parametrize("flag", ["--help", "-h"])
@pytest.mark.parametrize("command", list(HELP))
def test_every_command_has_help(command, flag, capsys):
    assert main([command, flag]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"usage: harness {command} ")
    for text in HELP[command]:
        assert text in out, text
    assert main(["help", command]) == 0 and capsys.readouterr().out == out


def test_run_help_reads_defaults_from_the_config(capsys):
    """Every RunConfig key with its default, the protocol groups and every preset."""
    from dataclasses import fields

    from harness.cliargs import show_value
    from harness.config import ZIP_EXAMPLE, RunConfig, sweep_names

    assert main(["run", "--help"]) == 0
    out = capsys.readouterr().out
    for f in fields(RunConfig):
        if f.name not in ("sweep", "protocol"):
            assert re.search(rf"\n  {re.escape(f.name)}={re.escape(show_value(f.default))}\s", out)
    for name in (*sweep_names(), "default", "graph", "hot", "quick"):
        assert f"\n  {name} " in out, name
    assert ZIP_EXAMPLE in out


def test_run_help_shows_the_values_of_its_overrides(capsys):
    argv = ["run", "sweep=gemm_square", "protocol=graph", "max_points=70", "providers=[cublas]"]
    assert main([*argv, "-h"]) == 0
    out = capsys.readouterr().out
    assert "protocol.timer=cuda-graph" in out and "here: gemm_square" in out
    assert "providers=[cublas] " in out
    assert "max_points=70 " in out and "protocol.warmup_ms=300.0" in out


def test_cfg_job_prints_the_composed_config(capsys):
    import yaml

    argv = ["run", "--cfg", "job", "sweep=gemm_square", "providers=[cublas]", "device=cpu"]
    assert main(argv) == 0
    cfg = yaml.safe_load(capsys.readouterr().out)
    assert cfg["sweep"]["name"] == "gemm_square" and cfg["providers"] == ["cublas"]
    assert cfg["protocol"]["timer"] == "auto" and cfg["dry_run"] is False
    assert main(["main", "device=cpu", "--cfg", "job"]) == 0
    cfg = yaml.safe_load(capsys.readouterr().out)
    assert cfg["sweep"]["name"] == "smoke" and cfg["run_id"].startswith("main-smoke-cpu-")


def test_zip_example_of_the_help_runs(capsys):
    import shlex

    from harness.config import ZIP_EXAMPLE

    assert main([*shlex.split(ZIP_EXAMPLE)[1:], "device=cpu"]) == 0
    out = capsys.readouterr().out
    assert "own-triton | gemm 8192x8192x8192 bf16 nn" in out and "23 points on cpu" in out
