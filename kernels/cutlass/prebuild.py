"""Build every own-CUTLASS library a sweep may need, in parallel, before anything is timed.

python -m harness_kernels.cutlass.prebuild                      # bf16 GEMM (nt, nn) + every FMHA kernel
python -m harness_kernels.cutlass.prebuild --gemm bf16:nt --fmha bf16:128 --fmha bf16:256
HARNESS_CUTLASS_CACHE=/some/dir python -m harness_kernels.cutlass.prebuild   # a carryable cache
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Iterable

from . import build
from .fmha import KERNELS, fmha_spec, head_dims
from .gemm import CONFIGS

DEFAULT_GEMM = ("bf16:nt", "bf16:nn")
DEFAULT_FMHA = ("bf16:128", "bf16:64")


def gemm_specs(
    dtype: str, layout: str, configs: Iterable[str] | None = None
) -> list[build.KernelSpec]:
    """Libraries of the GEMM configs (all by default) that take `dtype` in `layout` (nt | nn)."""
    chosen = [CONFIGS[c] for c in configs] if configs is not None else list(CONFIGS.values())
    b_col = layout == "nt"
    return [c.spec(dtype, b_col) for c in chosen if c.unbuildable(dtype, b_col) is None]


def prebuild(specs: Iterable[build.KernelSpec], max_workers: int | None = None) -> dict[str, str]:
    """{label: 'cached' | 'built in N s' | 'error: ...'} after building every spec in parallel."""
    report = {}
    for spec, result in build.build_many(specs, max_workers).items():
        if isinstance(result, Exception):
            # the first line of the message; the type where it has none (a bare AssertionError)
            report[spec.label] = f"error: {(str(result).splitlines() or [repr(result)])[0]}"
        elif result.cache_hit:
            report[spec.label] = "cached"
        else:
            report[spec.label] = f"built in {result.manifest.get('compile_s')} s"
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gemm", action="append", help="dtype:layout, e.g. bf16:nt (repeatable)")
    parser.add_argument(
        "--fmha", action="append", help="dtype:head_dim, e.g. bf16:128 (repeatable)"
    )
    parser.add_argument(
        "--config",
        action="append",
        help="only this GEMM config of kernels/cutlass/gemm.py CONFIGS (repeatable; default all)",
    )
    parser.add_argument("--jobs", type=int, default=None, help="parallel nvcc processes")
    parser.add_argument(
        "--prune", action="store_true", help="then delete cached builds not in this set"
    )
    args = parser.parse_args(argv)
    if why := build.toolchain_problem():
        print(f"prebuild: {why}", file=sys.stderr)
        return 2
    specs: list[build.KernelSpec] = []
    for item in args.gemm or (DEFAULT_GEMM if not args.fmha else ()):
        dtype, layout = item.split(":")
        specs += gemm_specs(dtype, layout, args.config)
    for item in args.fmha or (DEFAULT_FMHA if not args.gemm else ()):
        dtype, head_dim = item.split(":")
        specs += [
            # fa3's tile depends on the mask and the length (fmha.fa3_tile_rule): every choice
            fmha_spec(dtype, int(head_dim), kernel, causal=causal, q_len=q_len)
            for kernel in KERNELS
            if int(head_dim) in head_dims(kernel)  # head_dim 256: the warp-specialized kernel
            for causal in (False, True)
            for q_len in (1024, None)
        ]
    specs = list(dict.fromkeys(specs))
    t0 = time.perf_counter()
    report = prebuild(specs, args.jobs)
    for label, status in report.items():
        print(f"{label:48s} {status}")
    print(f"{len(report)} libraries in {time.perf_counter() - t0:.0f} s under {build.cache_dir()}")
    if args.prune:
        keep = {built.path.parent for built in map(build.lookup, specs) if built is not None}
        for entry in build.cache_dir().iterdir():
            if entry.is_dir() and entry not in keep and not entry.name.startswith(".build-"):
                build._discard(entry)
                print(f"pruned {entry.name}")
    return 1 if any(s.startswith("error") for s in report.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
