"""Launch cuBLAS and chosen own Triton GEMM configs on one shape, for Nsight Compute to compare.

Why does one own config stream the weights slower than cuBLAS at the same tile count? ncu's
per-kernel counters (DRAM bytes and throughput, SM activity, stall reasons) say; the harness's
timer cannot. Each label launches twice (the first compiles); ncu reports the launches in order,
and this script prints that order with each label's grid so the report can be read back.

    ncu --csv --page raw --metrics <list> python3 scripts/gemm_ncu_compare.py 32 6144 4096 \
        32x128x128s5k2 32x64x128s9 16x64x128s5p2

A config is BMxBNxBK then s<stages>, and optionally k<split_k>, p<programs per SM>, w<warps>.
A Gluon GEMM tile is `gl:` and its name as the Gluon tuner records it (gemm_gluon.config_name:
gl:64x144s6ppk2, gl:128x144s6k4, gl:64x144s6ppk2i for a split summed in place), one of the
candidates at this shape (or the in-place twin of a split one). An own CUTLASS config is `cl:`, its
name and, after a second colon, its run options as provider_config prints them
(cl:sm90-streamk-128x144-c2x1:split-kx4/sw1, .../split-kx4/sw1/nondet); CUTLASS's split-K is
one launch (its peers add their partials in the workspace), so ncu reports one kernel for it.
Inputs are randn bf16 (never zeros: they time faster); B is column-major as in gemm_llama (nt).
With `--fp8` they are quantized to e4m3 with per-tensor scales (bf16 out), and the vendor rows are
cuBLASLt's `_scaled_mm` with and without fast accumulation (the two cublaslt-fp8 providers);
own Triton (`tl` and `gl:` labels) takes the scales as its provider does; `cl:` is bf16 only.
"""

from __future__ import annotations

import argparse
import functools
import re
from collections.abc import Callable

import torch
from harness_kernels.triton.gemm import build_launch
from harness_kernels.triton.gemm_configs import GemmConfig
from harness_kernels.triton.gemm_operands import check_operands
from harness_kernels.triton.gemm_target import kernel_target

CONFIG = re.compile(r"(\d+)x(\d+)x(\d+)s(\d+)(?:k(\d+))?(?:p(\d+))?(?:w(\d+))?(a)?$")


def parse_config(text: str) -> GemmConfig:
    """'32x128x128s5k2p1' -> GemmConfig(32, 128, 128, num_stages=5, split_k=2, ...); a trailing
    'a' (split configs) sums the partials in a second launch (reduce_apart)."""
    found = CONFIG.match(text)
    if found is None:
        raise ValueError(
            f"bad config {text!r}: want BMxBNxBKs<stages>[k<split>][p<per SM>][w<warps>][a]"
        )
    bm, bn, bk, stages, split, per_sm, warps, apart = found.groups()
    return GemmConfig(
        int(bm),
        int(bn),
        int(bk),
        num_warps=int(warps or 4),
        num_stages=int(stages),
        split_k=int(split or 1),
        programs_per_sm=int(per_sm or 1),
        reduce_apart=apart is not None,
    )


def gluon_config(text: str, m: int, n: int, k: int, num_sms: int, in_bytes: int = 2) -> dict:
    """'gl:64x144s6ppk2' -> the Gluon candidate of that name at m x n x k (inputs of `in_bytes`,
    bf16 out): from the tuner's list, a probe's every legal tile, or a split twin's in-place
    twin."""
    from harness_kernels.triton.gemm_gluon import config_name, gluon_gemm_configs, in_place_twins

    listed = gluon_gemm_configs(m, n, k, in_bytes, 2, num_sms)
    listed += gluon_gemm_configs(m, n, k, in_bytes, 2, num_sms, per_schedule=None)
    listed += in_place_twins([c for c in listed if c.get("SPLIT_K", 1) > 1])
    found = [c for c in listed if config_name(c) == text.removeprefix("gl:")]
    if not found:
        names = sorted({config_name(c) for c in listed})
        raise ValueError(f"no Gluon candidate {text!r} at {m}x{n}x{k}: {names}")
    return found[0]


def tuner_per_schedule(
    cfg: dict, m: int, n: int, k: int, num_sms: int, in_bytes: int
) -> int | None:
    """What prepare_gluon_matmul's `per_schedule` must be to take `cfg` pinned: the tuner's
    default where the tuner times it (or it is a split twin's in-place twin), else None (every
    legal tile, as gluon_tile_probe.py pins them: fp8 128x192s4 at 4096x8192x8192, session 85)."""
    from harness_kernels.triton.gemm_gluon import (
        MAX_CANDIDATES,
        gluon_gemm_configs,
        in_place_twins,
    )

    timed = gluon_gemm_configs(m, n, k, in_bytes, 2, num_sms)
    twins = in_place_twins([c for c in timed if c.get("SPLIT_K", 1) > 1])
    return MAX_CANDIDATES if cfg in timed + twins else None


def cutlass_spec(text: str) -> tuple:
    """'cl:sm90-streamk-128x144-c2x1:split-kx4/sw1/nondet' -> (the own CUTLASS config, its
    RunOptions); without options, the defaults. An unknown config name is refused."""
    from harness_kernels.cutlass.gemm import CONFIGS, RunOptions

    name, _, options = text.removeprefix("cl:").partition(":")
    if name not in CONFIGS:
        raise ValueError(f"no own CUTLASS config {name!r}")
    return CONFIGS[name], RunOptions.parse(options) if options else RunOptions()


def vendor_launches(
    a: torch.Tensor, w: torch.Tensor, sa: torch.Tensor | None, sb: torch.Tensor | None
) -> list[tuple[str, Callable[[], torch.Tensor]]]:
    """[(label, launch)]: cuBLAS's matmul for bf16; for fp8 (scales given) cuBLASLt's
    `_scaled_mm` with and without fast accumulation, as the two cublaslt-fp8 providers call it."""
    if sa is None or sb is None:
        return [("cublas", lambda: torch.matmul(a, w.t()))]
    return [
        (
            label,
            functools.partial(
                torch._scaled_mm,
                a,
                w.t(),
                scale_a=sa,
                scale_b=sb,
                out_dtype=torch.bfloat16,
                use_fast_accum=fast,
            ),
        )
        for label, fast in (("cublaslt-fp8", False), ("cublaslt-fp8-fastaccum", True))
    ]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("m", type=int)
    parser.add_argument("n", type=int)
    parser.add_argument("k", type=int)
    parser.add_argument("configs", nargs="*", help="own Triton configs, e.g. 32x64x128s9")
    parser.add_argument("--fp8", action="store_true", help="e4m3 inputs, per-tensor scales")
    args = parser.parse_args(argv)
    if args.fp8 and any(text.startswith("cl:") for text in args.configs):
        raise SystemExit("cl: labels launch bf16 only")  # before anything launches under ncu
    gen = torch.Generator(device="cuda").manual_seed(0)
    a = torch.randn(args.m, args.k, device="cuda", dtype=torch.bfloat16, generator=gen)
    w = torch.randn(args.n, args.k, device="cuda", dtype=torch.bfloat16, generator=gen)
    sa = sb = None
    if args.fp8:
        from harness.problems.gemm import quantize_fp8

        (a, sa), (w, sb) = quantize_fp8(a.float()), quantize_fp8(w.float())
        ref = (a.float() * sa) @ (w.float() * sb).t()
    else:
        ref = a.float() @ w.float().t()
    dev = kernel_target(a.device)
    p = check_operands(a, w.t(), torch.bfloat16 if args.fp8 else None, sa, sb, "tf32", dev)
    order = []
    for label, vendor in vendor_launches(a, w, sa, sb):
        for _ in range(2):
            out = vendor()
        order.append((label, "torch._scaled_mm" if args.fp8 else "torch.matmul", out))
    sms = torch.cuda.get_device_properties(a.device).multi_processor_count
    for text in args.configs:
        if text.startswith("cl:"):
            from harness_kernels.cutlass.gemm import prepare_gemm

            config, options = cutlass_spec(text)
            launch = prepare_gemm(a, w.t(), config, options=options)
        elif text.startswith("gl:"):
            from harness_kernels.triton.gemm_gluon import prepare_gluon_matmul

            cfg = gluon_config(text, args.m, args.n, args.k, sms, a.element_size())
            per_schedule = tuner_per_schedule(cfg, args.m, args.n, args.k, sms, a.element_size())
            launch = prepare_gluon_matmul(
                a, w.t(), a_scale=sa, b_scale=sb, config=cfg, per_schedule=per_schedule
            )
        else:
            launch = build_launch(p, parse_config(text), dev)
        for _ in range(2):
            out = launch()
        rec = launch.config
        if "run_options" in rec:  # own CUTLASS: its clusters and scheduler options
            grid = f"{rec['cluster']} clusters, {rec['run_options']}"
        else:  # the `tl` kernel records its units; a Gluon tile records tiles and its split
            units = rec.get("units") or rec.get("tiles", 0) * rec.get("split_k", 1)
            grid = f"{rec.get('num_programs')} programs, {units} units"
        order.append((text, grid, out))
    torch.cuda.synchronize()
    dtype = "fp8 e4m3" if args.fp8 else "bf16"
    print(f"{args.m}x{args.n}x{args.k} {dtype} nt; each label launched twice, in this order:")
    for label, how, out in order:
        err = ((out.float() - ref).norm() / ref.norm()).item()
        print(f"  {label:50s} {how:32s} rel err {err:.2e}")


if __name__ == "__main__":
    main()
