"""Every command line in README.md's ```sh blocks is run here, through the installed `harness`
script in a subprocess, so a README example cannot rot. So is every command that results/*/README.md
gives for a committed run (planned on the CPU), and every scripts/ file a README names must exist.

On this CPU-only path a line runs with results and reports under tmp_path, and a `run` or
`ceilings` line with device=cpu dry_run=true (planned and checked, not measured). A line that
cannot run as written even so is in INSTEAD with what runs in its place and why; `pip install`,
`ruff` and `mypy` lines are CI's own commands (.ci/run runs each as written); any other line
fails the test until it is handled here.
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from harness.config import ZIP_EXAMPLE

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
CI_RUN = REPO / ".ci" / "run"
HARNESS = Path(sys.executable).parent / "harness"  # the console script of this environment

# README line -> (what runs instead, why). {tmp} is the test's tmp_path.
INSTEAD = {
    "harness run sweep=fmha_prefill protocol=graph": (
        "harness run --cfg job sweep=fmha_prefill protocol=graph",
        "CUDA-graph replay needs a GPU: the planner refuses it on a CPU even as a dry run, so "
        "the line is composed (preset and protocol group exist, overrides valid) and not planned",
    ),
    "harness run sweep=collectives_graph": (
        "harness run --cfg job sweep=collectives_graph",
        "its protocol replays CUDA graphs, which the planner refuses on a CPU even as a dry run, "
        "so the line is composed",
    ),
    "harness run sweep=gemm_llama devices=all": (
        "harness run --cfg job sweep=gemm_llama devices=all",
        "devices=all needs GPUs: without one the planner refuses it, so the line is composed",
    ),
    "harness compare results/a results/b": (
        "harness compare results/h200/gemm_square-vendor-a results/h200/gemm_square-vendor-b",
        "results/a and results/b stand for any two runs: two committed runs of one sweep",
    ),
    "harness report results/h100 results/h200 results/h200x2 results/h100x2 out=reports/hopper": (
        "harness report results/h100/ceilings results/h200/ceilings results/h200x2 out={tmp}/report",
        "all of the committed runs take over a minute to render on a CPU; their ceilings stand in",
    ),
    "harness inspect": (
        "harness inspect kernels=microbench:stream_read targets=sm_90 results_dir={tmp}/results",
        "compiling every kernel for four targets takes minutes; one kernel for one target runs "
        "the same path",
    ),
    "harness compact results/mine": (
        "harness compact {tmp}/results",
        "results/mine stands for runs of your own: a committed run copied into tmp is compacted "
        "(compacting the committed tree in place would change tracked files)",
    ),
    "python -m harness_kernels.cutlass.prebuild": (
        "python -m harness_kernels.cutlass.prebuild --help",
        "building every library takes minutes on 2 cores; tests/cutlass builds them one by one",
    ),
    "pytest -m gpu": (
        "pytest -m gpu --collect-only -q -p no:cacheprovider",
        "the GPU tests are collected (each is skipped without a GPU)",
    ),
    'pytest -m "not gpu"': (
        'pytest -m "not gpu" --collect-only -q -p no:cacheprovider',
        "this is the suite this test is part of: collected, not run again",
    ),
}
RUNNABLE = ("harness ", "python scripts/", "python -m ", "pytest ")
CI_ONLY = ("pip install ", "ruff ", "mypy")  # lines that .ci/run runs as written
RESULTS_READMES = sorted((REPO / "results").glob("*/README.md"))
# Keys that say where and under which name a run was made, not what it measures: a results
# README's command is planned here without them.
LENT_ONLY = ("run_id=", "results_dir=", "device=", "devices=", "dry_run=", "progress=")


def sh_lines() -> list[str]:
    """The lines of README.md's ```sh blocks as written, without their comments (a word that
    starts with # starts one, as in sh)."""
    lines, inside = [], False
    for line in README.read_text().splitlines():
        if line.startswith("```"):
            inside = line.strip() == "```sh"
        elif inside and (command := re.sub(r"(^|\s)#.*", "", line).strip()):
            lines.append(command)
    return lines


def harness_lines() -> list[str]:
    return [line for line in sh_lines() if line.startswith(RUNNABLE)]


def on_cpu(line: str, tmp: Path) -> list[str]:
    """The argv that runs a README line here: INSTEAD's line if it has one, writes redirected
    into tmp, and a run or ceilings sweep planned on the CPU without measuring."""
    line = INSTEAD[line][0] if line in INSTEAD else line
    tokens = shlex.split(line.replace("{tmp}", str(tmp)))
    if tokens[0] == "python":
        return [sys.executable, *tokens[1:]]
    if tokens[0] == "pytest":
        return [sys.executable, "-m", "pytest", *tokens[1:]]
    command = tokens[1]
    measures = command in ("run", "main") or (
        command == "ceilings" and not any(t.startswith("show=") for t in tokens)
    )
    if measures:
        redirected = ("results_dir=", "device=", "dry_run=")
        tokens = [t for t in tokens if not t.startswith(redirected)]
        tokens += [f"results_dir={tmp / 'results'}", "device=cpu", "dry_run=true"]
    if command == "report" and not any(t.startswith("out=") for t in tokens):
        tokens.append(f"out={tmp / 'report'}")
    return [str(HARNESS), *tokens[1:]]


def test_every_sh_line_is_run_or_listed():
    other = [line for line in sh_lines() if not line.startswith((*RUNNABLE, *CI_ONLY))]
    assert not other, f"README command lines this test neither runs nor lists: {other}"
    stale = set(INSTEAD) - set(sh_lines())
    assert not stale, f"INSTEAD names lines no longer in README.md: {sorted(stale)}"


def test_ci_lines_are_ci_commands():
    """CI installs, tests, lints and type-checks exactly as the README says: its pip, ruff and
    mypy lines are in .ci/run."""
    pip_lines = [line for line in sh_lines() if line.startswith("pip install ")]
    assert len(pip_lines) >= 2
    checks = [line for line in sh_lines() if line.startswith(("ruff ", "mypy"))]
    assert {"ruff check .", "ruff format --check .", "mypy"} <= set(checks)
    ci = CI_RUN.read_text().splitlines()
    for line in pip_lines + checks:
        assert line in ci, f".ci/run does not run the README's `{line}`"


def test_help_shows_the_readme_zip_example():
    """`harness run --help` shows the README's zip override; the README line runs below."""
    assert ZIP_EXAMPLE in harness_lines()


@pytest.mark.parametrize("line", harness_lines())
def test_readme_line_runs(line, tmp_path):
    assert HARNESS.exists(), f"{HARNESS}: install the package (pip install -e .) first"
    argv = on_cpu(line, tmp_path)
    if argv[1:2] == ["compact"]:
        shutil.copytree(REPO / "results/h200/ceilings", tmp_path / "results/ceilings")
    out = subprocess.run(argv, cwd=REPO, capture_output=True, text=True, timeout=600)
    shown = f"{shlex.join(argv)}\n{out.stdout[-2000:]}\n{out.stderr[-2000:]}"
    assert out.returncode == 0, shown
    assert out.stdout.strip() and "Traceback" not in out.stderr, shown
    if "--cfg" in argv:  # the composed config, as YAML
        assert "\nprotocol:\n" in out.stdout and "\nresults_dir: " in out.stdout, shown
    elif "dry_run=true" in argv:  # the planned points, then their count
        assert " points on cpu:" in out.stdout.splitlines()[-1], shown


def test_named_scripts_exist():
    """A README or a docs/ page names only scripts that are there (issue 18.7 removed the
    one-off ones; their jobs are written out in the results READMEs)."""
    readmes = [README, REPO / "reports" / "README.md", *RESULTS_READMES]
    readmes += sorted((REPO / "docs").glob("*.md"))
    missing = [
        f"{readme.relative_to(REPO)}: {name}"
        for readme in readmes
        # not preceded by a path part: kernels/ck/scripts/x.sh is not the repository's scripts/
        for name in re.findall(
            r"(?<![\w./-])scripts/[\w.-]+\.(?:sh|py)(?![\w-]|\.\w)", readme.read_text()
        )
        if not (REPO / name).is_file()
    ]
    assert not missing, f"README names scripts that do not exist: {missing}"


def test_named_tests_exist():
    """A README or a docs/ page that cites a test file (or a test in it) cites one that is there,
    so a claim's "held by" cannot outlive the test."""
    pages = [README, REPO / "reports" / "README.md", *RESULTS_READMES]
    pages += sorted((REPO / "docs").glob("*.md"))
    # a path not inside another (kernels/ck/tests/...), the test its last ::part (a class's too)
    cited = r"(?<![\w./-])(tests/[\w/-]+\.py)(?![\w-]|\.\w)(?:::(?:\w+::)*(\w+))?"
    missing = []
    for page in pages:
        for path, test in re.findall(cited, page.read_text()):
            file = REPO / path
            if not file.is_file() or (test and f"def {test}(" not in file.read_text()):
                missing.append(f"{page.relative_to(REPO)}: {path}{'::' + test if test else ''}")
    assert not missing, f"pages cite tests that do not exist: {missing}"


def gpu_measure_commands(text: str) -> list[str]:
    """The harness command of each "<run_id> [ceilings] <overrides>" spec that a fenced
    `scripts/gpu_measure.sh` line runs (what the script evals, less results_dir and run_id), and
    each fenced `python3 -m harness.cli run ...` up to its redirection."""
    commands, inside = [], False
    for line in text.replace("\\\n", " ").splitlines():
        if line.strip().startswith("```"):
            inside = not inside
        elif inside and (direct := re.search(r"python3 -m harness\.cli (run [^>]*)", line)):
            commands.append(f"harness {direct.group(1).strip()}")
        elif inside and "scripts/gpu_measure.sh" in line:
            tokens = shlex.split(line)
            at = next(i for i, t in enumerate(tokens) if t.endswith("scripts/gpu_measure.sh"))
            for spec in tokens[at + 2 :]:
                overrides = spec.partition(" ")[2]
                if overrides.startswith("ceilings"):
                    commands.append(f"harness ceilings{overrides.removeprefix('ceilings')}")
                else:
                    commands.append(f"harness run {overrides}")
    return commands


def results_commands() -> list[str]:
    """Each distinct command the results READMEs give for a run: `harness run|ceilings ...` in a
    table row, and each gpu_measure.sh spec; without the keys that only name where it ran."""
    commands = []
    for readme in RESULTS_READMES:
        text = readme.read_text()
        for line in text.splitlines():
            if line.startswith("|"):
                commands += re.findall(r"`(harness (?:run|ceilings) [^`]*)`", line)
        commands += gpu_measure_commands(text)
    planned = {
        shlex.join(t for t in shlex.split(c) if not t.startswith(LENT_ONLY))
        for c in commands
        if " show=" not in c
    }
    return sorted(planned)


def test_results_readmes_give_commands():
    """The lent-machine calls of all three GPUs are written out (a regex gone blind would pass
    the test below with nothing to run)."""
    assert len(results_commands()) >= 20
    for readme in RESULTS_READMES:
        assert gpu_measure_commands(readme.read_text()), f"{readme}: no gpu_measure.sh call"


def gpu_timer_preset(command: str) -> bool:
    """Whether the command's preset names a GPU timer in its protocol (collectives_graph:
    cuda-graph), which the planner refuses on a CPU even as a dry run."""
    import yaml

    found = re.search(r"\bsweep=([\w-]+)", command)
    if not found:
        return False
    preset = yaml.safe_load((REPO / "sweeps" / f"{found.group(1)}.yaml").read_text())
    return (preset.get("protocol") or {}).get("timer") in ("cuda-events", "cuda-graph")


@pytest.mark.parametrize("command", results_commands())
def test_results_command_plans(command, tmp_path, capsys, monkeypatch):
    """A committed run's command, planned on the CPU as a dry run: its preset, overrides and
    point limit are valid today (device and devices are the lent machine's, left out here).
    A preset whose protocol names a GPU timer is composed instead (`run --cfg job`). Planned in
    this process through harness.cli.main (the README lines above go through the console
    script; a subprocess per command here cost CI ~4 minutes of interpreter starts)."""
    from harness.cli import main

    monkeypatch.chdir(REPO)
    tokens = shlex.split(command)
    composed = gpu_timer_preset(command)
    where = [f"results_dir={tmp_path}"] + ([] if composed else ["device=cpu", "dry_run=true"])
    argv = [tokens[1], *(["--cfg", "job"] if composed else []), *tokens[2:], *where]
    rc = main(argv)
    out = capsys.readouterr()
    shown = f"harness {shlex.join(argv)}\n{out.out[-2000:]}\n{out.err[-2000:]}"
    assert rc == 0, shown
    if composed:
        assert "\nprotocol:\n" in out.out and "timer: cuda-" in out.out, shown
    else:
        assert " points on cpu:" in out.out.splitlines()[-1], shown
