"""Whether a change to the CUTLASS/CuTe sources left the machine code as it was, without a GPU.

    python scripts/sass_same.py                      # every FMHA library (bf16), against HEAD
    python scripts/sass_same.py --base HEAD~3 --gemm bf16:nt --fmha fp16 --jobs 4
    python scripts/sass_same.py --only fmha-sm90-bf16-d64       # one library

A refactor of kernels/cutlass (a helper moved to a shared header, a loop written once) changes
nothing a GPU could measure when nvcc emits the same SASS for it. This compiles each library's
device code (`nvcc -cubin`, one target arch at a time, the library's own flags and defines as
kernels/cutlass/fmha.py and gemm.py give them today) twice: from the sources at `--base` (a
temporary git worktree) and from this working tree, dumps both with cuobjdump (Triton's wheel
ships it) and compares the two texts byte for byte. Every FMHA kernel of fmha.KERNELS at each
of its head dims, plain and causal at 1k and 4k tokens (the problems that pick the
warp-specialized kernel's tiles), deduplicated by defines; GEMM configs only when asked.

Prints one line per (library, arch) and a count. Exit status 0: every one identical; 1: some
differ (a GPU run must then show what the change did); 2: a compile failed on either side.
Session 104 proved its shared-helper refactor of the cp.async FMHA kernels this way: 33 of 33
identical.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

import triton
from harness_kernels.cutlass import build, fmha
from harness_kernels.cutlass.prebuild import gemm_specs

REPO = Path(__file__).resolve().parents[1]
CUOBJDUMP = Path(triton.__file__).parent / "backends" / "nvidia" / "bin" / "cuobjdump"


@contextmanager
def worktree(repo: Path, rev: str, tmp: Path) -> Iterator[Path]:
    """A detached git worktree of `repo` at `rev` under `tmp`, removed afterwards."""
    path = tmp / "base"
    subprocess.run(
        ["git", "-C", str(repo), "worktree", "add", "-q", "--detach", str(path), rev], check=True
    )
    try:
        yield path
    finally:
        subprocess.run(["git", "-C", str(repo), "worktree", "remove", "--force", str(path)])


def fmha_specs(dtypes: list[str]) -> list[build.KernelSpec]:
    """Every FMHA library of `dtypes`: each kernel, head dim, mask and tile choice once."""
    specs: dict[tuple, build.KernelSpec] = {}
    for dtype in dtypes:
        for kernel in fmha.KERNELS:
            for head_dim in fmha.head_dims(kernel):
                for causal in (False, True):
                    for q_len in (1024, 4096):
                        spec = fmha.fmha_spec(dtype, head_dim, kernel, causal=causal, q_len=q_len)
                        specs.setdefault((spec.source, spec.defines, spec.archs), spec)
    return list(specs.values())


def sass(spec: build.KernelSpec, arch: str, sources: Path, out: Path) -> str:
    """cuobjdump's SASS of `spec`'s device code for `arch`, compiled from `sources`."""
    headers, nvcc = build.find_headers(), build.find_nvcc()
    assert headers is not None and nvcc is not None
    flags = [f for f in spec.device_flags() if not f.startswith("-gencode")]
    with tempfile.NamedTemporaryFile(suffix=".cubin", dir=out, delete=False) as f:
        cubin = Path(f.name)
    cmd = [
        str(nvcc),
        *flags,
        f"-gencode=arch=compute_{arch[3:]},code={arch}",
        "-cubin",
        f"-I{headers.include}",
        f"-I{sources}",
        str(sources / spec.source),
        "-o",
        str(cubin),
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"{spec.label} {arch}: nvcc failed: {proc.stderr.strip()[-400:]}")
    dump = subprocess.run([str(CUOBJDUMP), "-sass", str(cubin)], capture_output=True, text=True)
    cubin.unlink()
    return dump.stdout


def report(results: list[tuple[str, bool | str]], base: str) -> int:
    """Print one line per (name, outcome: True same, False differs, str the failure) and the
    count; the exit status: 0 all identical, 1 some differ, 2 some failed to compile."""
    failed = [r for r in results if isinstance(r[1], str)]
    differ = [r for r in results if r[1] is False]
    for name, outcome in results:
        word = "identical" if outcome is True else "DIFFERS" if outcome is False else outcome
        print(f"{word}  {name}")
    print(
        f"{len(results) - len(failed) - len(differ)} of {len(results)} identical against "
        f"{base}; {len(differ)} differ; {len(failed)} failed to compile"
    )
    return 2 if failed else 1 if differ else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", default="HEAD", help="the git revision to compare against")
    parser.add_argument("--fmha", action="append", help="an FMHA dtype (repeatable; default bf16)")
    parser.add_argument("--gemm", action="append", help="dtype:layout, e.g. bf16:nt (repeatable)")
    parser.add_argument("--only", help="only the libraries whose label contains this")
    parser.add_argument(
        "--repo", type=Path, default=REPO, help="the checkout whose kernels/cutlass is compared"
    )
    parser.add_argument("--jobs", type=int, default=2, help="parallel nvcc processes")
    args = parser.parse_args(argv)
    if problem := build.toolchain_problem():
        print(f"harness: error: toolchain: {problem}", file=sys.stderr)
        return 2
    specs = fmha_specs(args.fmha or ["bf16"])
    for item in args.gemm or []:
        dtype, layout = item.split(":")
        specs += gemm_specs(dtype, layout)
    specs = [spec for spec in specs if args.only is None or args.only in spec.label]
    jobs = [(spec, arch) for spec in specs for arch in spec.archs]
    if not jobs:
        print(f"harness: error: --only: {args.only!r} names no library", file=sys.stderr)
        return 2
    here = args.repo / "kernels" / "cutlass"
    with tempfile.TemporaryDirectory() as tmp, worktree(args.repo, args.base, Path(tmp)) as base:

        def pair(job: tuple[build.KernelSpec, str]) -> tuple[str, bool | str]:
            spec, arch = job
            name = f"{spec.label} {arch} " + " ".join(f"{k}={v}" for k, v in spec.defines)
            try:
                same = sass(spec, arch, base / "kernels" / "cutlass", Path(tmp)) == sass(
                    spec, arch, here, Path(tmp)
                )
            except RuntimeError as e:
                return name, str(e)
            return name, same

        with ThreadPoolExecutor(args.jobs) as pool:
            results = list(pool.map(pair, jobs))
    return report(results, args.base)


if __name__ == "__main__":
    raise SystemExit(main())
