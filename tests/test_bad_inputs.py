"""Every bad input, for every command, exits 2 with one line naming the key and the allowed
values, no traceback (issue 17.7); so do a full disk and an unwritable path met while writing,
and Ctrl-C prints one line and exits 130."""

import errno
import os
import signal
import subprocess
import sys
import time

import pytest

from harness import store
from harness.cli import main

# A dry run composes and plans (every input check) without measuring.
RUN = ["run", "sweep=smoke", "device=cpu", "dry_run=true"]
WET = ["run", "sweep=smoke", "device=cpu", "providers=[torch-cpu]", "progress=false"]
G = "sweep.groups"
# (argv, what the one line must contain); {tmp} is a fresh folder holding a file 'afile'.
BAD = [
    # a sweep group's keys and the shape of their values
    ([*RUN, f"{G}.0.zip.mm=[1,33]"], f"{G}.0.zip.mm: unknown axis 'mm' here; allowed: m, n, k"),
    ([*RUN, f"{G}.0.zip.m=1"], f"{G}[0].zip.m: 1 is not a list; allowed: a list, e.g. "),
    ([*RUN, f"{G}.0.product.dtype=fp32"], "product.dtype: 'fp32' is not a list; allowed: "),
    ([*RUN, f"{G}.0.product.dtype=[]"], "product.dtype: empty list; allowed: one or more"),
    ([*RUN, f"{G}.1.fixed.kv_heads=[1,2]"], "fixed.kv_heads: [1, 2] is a list; allowed: one"),
    ([*RUN, f"{G}.0.zip=5"], f"{G}[0].zip: 5 is not a mapping; allowed: "),
    ([*RUN, f"{G}.0=foo"], f"{G}[0]: 'foo' is not a group; allowed: a mapping"),
    ([*RUN, f"{G}=foo"], f"{G}: 'foo' is not a list; allowed: a list"),
    ([*RUN, f"{G}=[]"], f"{G}: empty (would measure nothing); allowed: "),
    ([*RUN, f"{G}.5.zip.m=[1]"], f"{G}.5: no group '5' in this sweep; allowed: group indices 0..2"),
    ([*RUN, f"{G}.x.op=gemm"], f"{G}.x: no group 'x' in this sweep; allowed: group indices 0..2"),
    ([*RUN, f"{G}.0.bogus=1"], f"{G}.0.bogus: unknown key; allowed: op, providers, product"),
    ([*RUN, f"{G}.0.providers=torch-cpu"], "providers: 'torch-cpu' is not a list; allowed: "),
    # providers=
    ([*RUN, "providers=own-triton"], "providers: 'own-triton' is not a list; allowed: a list"),
    ([*RUN, "providers=[]"], "providers: [] would measure nothing; allowed: a list of names"),
    (
        [*RUN, "sweep=gemm_square", "providers=[sdpa-flash]"],
        "providers: ['sdpa-flash'] leaves no point of this sweep (would measure nothing); "
        "allowed: cublas",
    ),
    (
        [*RUN, "sweep=gemm_square", "providers=[cublas,sdpa-flash]"],
        "providers: sdpa-flash in no group of this sweep (would measure nothing); allowed: ",
    ),
    # keys Hydra lets through: added with +/++, removed with ~
    ([*RUN, "+no_such_key=1"], "no_such_key: unknown key; allowed: sweep, protocol, "),
    ([*RUN, "++protocol.zzz=1"], "protocol.zzz: unknown key; allowed: timer, l2, fill"),
    ([*RUN, "+sweep.zzz=1"], "sweep.zzz: unknown key; allowed: name, description"),
    ([*RUN, "~results_dir"], "results_dir: removed (~results_dir); allowed: results_dir="),
    ([*RUN, "~protocol.seed"], "protocol.seed: cannot be removed; allowed: protocol.seed="),
    ([*RUN, "results_dir=null"], "results_dir: null is not allowed; allowed: "),
    # values out of range or of the wrong type
    ([*RUN, "point_timeout_s=-1"], "point_timeout_s: -1.0 must be > 0; allowed: seconds > 0"),
    ([*RUN, "point_timeout_s=0"], "point_timeout_s: 0.0 must be > 0; allowed: "),
    ([*RUN, "point_timeout_s=abc"], "point_timeout_s: Value 'abc' of type 'str' could not be"),
    ([*RUN, "max_points=0"], "max_points: 0 must be >= 1; allowed: 1, 2, ..."),
    ([*RUN, "shard_count=0"], "shard_count: 0 must be >= 1; allowed: 1, 2, ..."),
    ([*RUN, "shard_index=-1", "shard_count=2"], "shard_index: -1 outside 0..1; allowed: "),
    ([*RUN, "rerun_failed=maybe"], "rerun_failed: Value 'maybe' is not a valid bool"),
    ([*RUN, "allow_mixed=maybe"], "allow_mixed: Value 'maybe' is not a valid bool"),
    ([*RUN, "protocol.warmup_ms=-1"], "protocol.warmup_ms: -1.0 is negative; allowed: >= 0"),
    ([*RUN, "protocol.max_time_s=0"], "protocol.max_time_s: 0.0 must be > 0; allowed: > 0"),
    ([*RUN, "protocol.max_spread=0.5"], "protocol.max_spread: 0.5, but p90/p10 is at least 1"),
    (
        [*RUN, "protocol.min_samples=50", "protocol.max_samples=10"],
        "protocol.min_samples: 50 exceeds protocol.max_samples 10; allowed: ",
    ),
    ([*RUN, "sweep=[a]"], "sweep: unknown 'a'; allowed: ceilings, "),
    ([*RUN, "devices=[cpu,9]"], "devices: unknown '9'; allowed: "),
    ([*RUN, "run_id=../x"], "run_id: '../x' is not a single folder name; allowed: "),
    # where a run writes (not a dry run: that writes nothing)
    ([*WET, "results_dir={tmp}/afile"], "results_dir: '{tmp}/afile' is a file; allowed: a folder"),
    (
        [*WET, "results_dir={tmp}/afile/sub"],
        "results_dir: '{tmp}/afile/sub' is under '{tmp}/afile', a file; allowed: ",
    ),
    ([*WET, "results_dir=/sys/harness-x"], "results_dir: cannot write '/sys/harness-x' ("),
    (["main", "device=cpu", "report_dir={tmp}/afile"], "report_dir: '{tmp}/afile' is a file"),
    (["main", "device=cpu", "providers=[]"], "providers: [] would measure nothing"),
    # report, compare, gaps
    (["report", "{tmp}", "out={tmp}/afile"], "out: '{tmp}/afile' is a file; allowed: a folder"),
    (["report", "{tmp}/nope"], "path: '{tmp}/nope' does not exist; allowed: run folders"),
    (["report"], "report: the following arguments are required: paths; allowed: "),
    (["report", "{tmp}", "bogus=1"], "report: unknown key 'bogus'; allowed: out"),
    (
        ["compare", "{tmp}", "markdown={tmp}/afile/x.md"],
        "markdown: '{tmp}/afile/x.md' is under '{tmp}/afile', a file; allowed: a file name",
    ),
    (["compare", "{tmp}", "markdown={tmp}"], "markdown: '{tmp}' is a folder; allowed: a file"),
    (["compare", "{tmp}", "threshold=2"], "threshold: 2.0; allowed: between 0 and 1"),
    (["compare", "{tmp}", "threshold=abc"], "threshold: invalid float value"),
    (["compare", "{tmp}", "n_boot=10"], "n_boot: 10; allowed: >= 100"),
    (["compare", "{tmp}", "{tmp}", "{tmp}"], "compare: 3 runs given; allowed: "),
    (["compare", "{tmp}/nope"], "path: '{tmp}/nope' does not exist; allowed: "),
    (["gaps", "{tmp}", "worst=0"], "worst: 0; allowed: >= 1"),
    (["gaps", "{tmp}", "worst=abc"], "worst: invalid int value: 'abc'"),
    (["gaps", "{tmp}"], "path: no rows under {tmp}; allowed: run folders"),
    # ceilings, crosscheck, inspect, list, the command itself
    (["ceilings", "show={tmp}/nope"], "show: '{tmp}/nope' does not exist; allowed: run folders"),
    (["ceilings", "show=,"], "show: no folder given; allowed: show=DIR[,DIR...]"),
    (["ceilings", "device=cpu", "point_timeout_s=-1"], "point_timeout_s: -1.0 must be > 0"),
    (["crosscheck", "device=cpu", "devices=[cpu,cpu]"], "devices: crosscheck runs on one GPU"),
    (["crosscheck", "nvbench_timeout_s=abc"], "nvbench_timeout_s: invalid float value"),
    (["crosscheck", "device=cpu", "+no_such_key=1"], "no_such_key: unknown key; allowed: "),
    (["inspect", "targets=sm_99"], "targets: unknown 'sm_99'; allowed: sm_80, sm_90"),
    (["inspect", "write=maybe"], "write: 'maybe' is not a boolean; allowed: true, false"),
    (["inspect", "jobs=0"], "jobs: '0' is not a positive integer; allowed: 1, 2, ..."),
    (["inspect", "results_dir={tmp}/afile"], "results_dir: '{tmp}/afile' is a file; allowed: "),
    (["inspect", "out=x"], "inspect: unknown argument 'out=x'; allowed: targets="),
    (["list", "--device", "tpu"], "device: unknown 'tpu'; allowed: auto, cpu"),
    (["list", "--op", "conv"], "list: argument --op: invalid choice: 'conv'"),
    (["frobnicate"], "command: unknown 'frobnicate'; allowed: main, run"),
]


@pytest.mark.parametrize(("argv", "expected"), BAD, ids=[" ".join(a[1:]) or a[0] for a, _ in BAD])
def test_bad_input_exits_2_with_one_line(argv, expected, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)  # main's report and inspect's results go under here
    (tmp_path / "afile").write_text("not a folder")
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert err[0].startswith("harness: error: "), err[0]
    assert expected.replace("{tmp}", str(tmp_path)) in err[0], err[0]
    assert "allowed" in err[0], err[0]


def test_an_error_without_a_message_still_exits_2_with_one_line(monkeypatch, capsys):
    """A ValueError() raised bare (no message) is reported by its name, not an IndexError."""
    import harness.cli as cli

    def bare(_args):
        raise ValueError()

    monkeypatch.setattr(cli, "_command", lambda name: bare)
    assert main(["list"]) == 2
    assert capsys.readouterr().err.strip().splitlines() == ["harness: error: ValueError"]


def test_at_least_30_bad_inputs():
    assert len(BAD) >= 30


def test_unwritable_results_dir_is_found_before_measuring(tmp_path, monkeypatch, capsys):
    """A read-only folder (as root, only a probe write tells: os.access says yes)."""
    import harness.outputs

    def refuse(*args, **kwargs):
        raise OSError(errno.EROFS, "Read-only file system")

    monkeypatch.setattr(harness.outputs.tempfile, "mkstemp", refuse)
    assert main([*WET, f"results_dir={tmp_path}", "run_id=ro"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        f"harness: error: results_dir: cannot write '{tmp_path}' (read-only file system); "
        "allowed: a folder you can write (an existing one or a new one)"
    ]
    assert not (tmp_path / "ro").exists()  # nothing measured, nothing written


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        (errno.ENOSPC, "harness: error: disk: no space left on device writing '"),
        (errno.EACCES, "harness: error: path: permission denied writing '"),
    ],
)
def test_full_disk_mid_sweep_is_one_line_and_the_run_resumes(
    code, expected, tmp_path, monkeypatch, capsys
):
    """The disk fills (or a folder turns unwritable) after three rows: one line, exit 2; the
    three rows stay whole and a resume measures the other five."""
    write = store._atomic_write_bytes
    written = []

    def filling(path, data):
        if path.parent.name == "rows" and len(written) == 3:
            raise OSError(code, os.strerror(code), str(path))
        write(path, data)
        written.append(path) if path.parent.name == "rows" else None

    monkeypatch.setattr(store, "_atomic_write_bytes", filling)  # in this process: isolate=false
    args = [*WET, "isolate=false", f"results_dir={tmp_path}", "run_id=full"]
    assert main(args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(expected), err
    assert "allowed: " in err[0]
    assert len(store.read_rows(tmp_path / "full")) == 3
    monkeypatch.setattr(store, "_atomic_write_bytes", write)
    assert main(args) == 0
    assert "3 already done, 5 measured now" in capsys.readouterr().out
    assert len(store.read_rows(tmp_path / "full")) == 8


def test_ctrl_c_mid_sweep_prints_one_line_exits_130_and_resumes(tmp_path):
    """A real SIGINT to a sweep: 'harness: interrupted', status 130, no traceback; the rows
    written stay whole and the same command finishes the run."""
    fast = [
        "sweep=smoke",
        "device=cpu",
        "providers=[torch-cpu,sdpa-math,sdpa-paged-gather]",
        "progress=false",
        f"results_dir={tmp_path}",
        "run_id=c",
        # each point samples for ~0.3 s, so the signal lands mid-sweep
        "protocol.rse_target=1e-9",
        "protocol.max_time_s=0.3",
        "protocol.max_samples=100000",
    ]
    cmd = [sys.executable, "-m", "harness.cli", "run", *fast]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    rows = tmp_path / "c" / "rows"
    deadline = time.time() + 120
    while time.time() < deadline and len(list(rows.glob("*.parquet"))) < 2:
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert err.strip().splitlines() == ["harness: interrupted"], err  # no traceback
    done = len(list(rows.glob("*.parquet")))
    assert 2 <= done < 13, "the signal should land mid-sweep"
    assert main(["run", *fast]) == 0
    df = store.read_rows(tmp_path / "c")
    assert len(df) == 13 and df.point_key.is_unique


def test_a_measuring_childs_one_line_error_is_the_runs(tmp_path, capsys):
    """With isolation (the default) a full disk is met in the measuring child, which says it in
    one line and exits 2: the parent does not restart it and says that same line, exit 2."""
    from harness import shard

    log = tmp_path / "worker-0.log"
    log.write_text(
        "| some | table |\nharness: error: disk: no space left on device writing "
        "'x'; allowed: free some space, then run the same command again\n"
    )
    w = shard._Worker(0, "cpu", log, "child process on cpu")
    run = shard._Run("r", tmp_path / "r", {})
    assert shard._on_exit(w, 2, run, None, None, sys.stderr) is False  # not started again
    assert w.gave_up and w.error.startswith("disk: no space left on device")
    assert capsys.readouterr().err == ""  # the parent's cli says it, once
