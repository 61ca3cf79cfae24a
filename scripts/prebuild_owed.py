"""Build here, on the CPU, the own CUTLASS libraries that the owed runs will load, so that a
lent GPU call finds them in the carried .cache/cutlass.tar.xz instead of building them itself:

    HARNESS_CUTLASS_CACHE=<dir> python scripts/prebuild_owed.py [results/<gpu>/owed.specs ...]

(`CUTLASS=1 bash scripts/device_carry.sh` runs it over both GPUs' lists and packs the archive.)

Why: a fresh GPU machine builds them inside the call, on the call's clock. Session 111's first
H200 call (a fresh checkout: nothing carried) spent about 330 s of its 560 s budget building the
fp8 grid's 42 libraries, before anything was tuned or timed. This box's nvcc is the GPU image's
(13.0.88), and a library's cache key (kernels/cutlass/build.py, full_key) holds its sources,
flags and the CUTLASS and nvcc versions, nothing of the machine: the library built here for
`gemm-sm90-coop-128x256-fp8_e4m3-nt` had the key of the one the H200 built. Linked here
against Debian 12's glibc 2.36 and GCC 12's libstdc++, it loads on the image (Ubuntu 24.04:
glibc 2.39, GCC 13). One library takes about 80 s of one core here: 42 on this box's 2 cores,
about half an hour.

A spec's libraries are the ones the runner would build for it (harness.runner.prebuild_jobs):
its sweep expanded with its overrides, built by the runner's own builder.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from take_back import owed_specs  # noqa: E402 - a sibling script, not a package

ROOT = Path(__file__).resolve().parents[1]


def cutlass_job(overrides: list[str]) -> tuple:
    """(builder, library specs) of the own CUTLASS libraries one gpu_measure.sh spec's run will
    load (its overrides, the run id dropped), as the runner gathers them (runner.prebuild_jobs);
    (None, []) where it loads none."""
    from harness.config import compose_run_config
    from harness.plan import plan
    from harness.providers import load_all
    from harness.runner import prebuild_jobs

    points, _ = plan(compose_run_config(overrides))
    for build, (what, specs) in prebuild_jobs(points, load_all()).items():
        if what == "CUTLASS libraries":
            return build, list(dict.fromkeys(specs))
    return None, []


def libraries_of(overrides: list[str]) -> list:
    """The CUTLASS library specs one spec's run will load, in the runner's order."""
    return cutlass_job(overrides)[1]


def main(argv: list[str] | None = None) -> int:
    from harness_kernels.cutlass import build

    lists = [Path(a) for a in (argv if argv is not None else sys.argv[1:])]
    lists = lists or sorted((ROOT / "results").glob("*/owed.specs"))
    if why := build.toolchain_problem():
        print(f"prebuild_owed: {why}", file=sys.stderr)
        return 2
    builder, wanted = None, []
    for listed in lists:
        for words in owed_specs(listed):
            if words[1:2] == ["ceilings"]:  # `harness ceilings` (gpu_measure.sh): no CUTLASS
                continue
            try:
                job, found = cutlass_job(words[1:])
            except ValueError as e:  # ConfigError too; a sweep that plans on a GPU only
                print(f"warning: {listed}: {words[0]}: {e}; its libraries not built here")
                continue
            print(f"{listed}: {words[0]}: {len(found)} CUTLASS libraries")
            builder, wanted = job or builder, wanted + found
    wanted = list(dict.fromkeys(wanted))
    if builder is None or not wanted:
        print("prebuild_owed: no owed run loads a CUTLASS library")
        return 0
    report = builder(
        wanted
    )  # the runner's builder: {label: 'cached' | 'built in N s' | 'error: ...'}
    built = [label for label, status in report.items() if status.startswith("built")]
    failed = {label: status for label, status in report.items() if status.startswith("error")}
    for label, status in failed.items():
        print(f"{label}: {status}", file=sys.stderr)
    print(
        f"prebuild_owed: {len(report)} libraries under {build.cache_dir()}: {len(built)} built "
        f"now, {len(report) - len(built) - len(failed)} there already, {len(failed)} failed"
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
