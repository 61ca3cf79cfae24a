"""Own CUTLASS configs under chosen run options beside cuBLAS at one GEMM shape: a probe (GPU).

The own CUTLASS tuner times its candidates (kernels/cutlass/gemm_tune.py) under the options it
offers. This script pins `config:options` pairs the tuner may not offer (a split count, a raster,
the split-K peers' reduction: RunOptions, printed as in provider_config's run_options) so that
one call shows what an option is worth before the tuner offers it. Session 84: at Llama-3.1-405B's
fused QKV (256x2304x16384) the 2x1-cluster split-K config ran 0.847x cuBLAS in the sweep; its
four peers per tile add their partials in turn (CUTLASS's deterministic reduction), and
`.../nondet` adds them at once.

Each kernel is checked against an fp32 reference first (a wrong one is reported, not timed) and
launched three times more to say whether its output keeps the same bits (the atomic reduction
need not). Then all are timed interleaved with the tuners' timer (kernels/bench_cold.py: a read
flush of 2x L2 and a stream hold before every launch), ROUNDS rounds, median of the rounds;
`--capped` takes each reading at the power cap instead (bench_capped). Bursts for choosing what
the tuner offers, not sweep results to cite.

    python3 scripts/cutlass_option_probe.py 256x2304x16384 \
        sm90-streamk-128x144-c2x1:split-kx4/sw1 sm90-streamk-128x144-c2x1:split-kx4/sw1/nondet
"""

from __future__ import annotations

import argparse
import statistics
from collections.abc import Callable
from typing import Any

import torch
from harness_kernels.bench_cold import bench_capped, bench_cold
from harness_kernels.cutlass.gemm import CONFIGS, GemmConfig, RunOptions, prepare_gemm

ROUNDS = 5
MAX_REL_ERR = 1e-2  # bf16 out, fp32 accumulation (tests/cutlass/test_gpu_cutlass.py's bound)


def parse_spec(text: str) -> tuple[GemmConfig, RunOptions]:
    """'sm90-streamk-128x144-c2x1:split-kx4/sw1/nondet' -> (its config, its options); a bare
    config name runs under the default options."""
    name, _, options = text.partition(":")
    if name not in CONFIGS:
        raise ValueError(f"unknown own CUTLASS config {name!r}")
    return CONFIGS[name], RunOptions.parse(options) if options else RunOptions()


def rel_err(out: torch.Tensor, ref: torch.Tensor) -> float:
    return float((out.float() - ref).norm() / ref.norm())


def probe(
    m: int,
    n: int,
    k: int,
    specs: list[str],
    timer: Callable[[Callable[[], Any], torch.device], float] = bench_cold,
) -> list[tuple[str, float | str, str]]:
    """[(label, median us or why it was not timed, whether its bits repeat)] for one shape:
    cuBLAS first, then each spec in the given order."""
    gen = torch.Generator(device="cuda").manual_seed(0)
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16, generator=gen)
    w = torch.randn(n, k, device="cuda", dtype=torch.bfloat16, generator=gen)
    b = w.t()  # column-major B (nt), as gemm_llama's weights
    ref = a.float() @ w.float().t()
    kernels: dict[str, Callable[[], Any]] = {"cublas": lambda: torch.matmul(a, b)}
    for spec in specs:
        config, options = parse_spec(spec)
        kernels[f"{config.name}:{options}"] = prepare_gemm(a, b, config, options=options)
    wrong: dict[str, str] = {}
    repeats: dict[str, str] = {}
    for label, fn in kernels.items():
        first = fn().clone()
        err = rel_err(first, ref)
        if not err < MAX_REL_ERR:
            wrong[label] = f"WRONG (rel err {err:.3g})"
            continue
        same = all(torch.equal(fn(), first) for _ in range(3))
        repeats[label] = "same bits" if same else "bits differ"
    times: dict[str, list[float]] = {label: [] for label in kernels if label not in wrong}
    for _ in range(ROUNDS):
        for label in times:
            times[label].append(timer(kernels[label], a.device) * 1e3)
    return [
        (label, wrong.get(label) or statistics.median(times[label]), repeats.get(label, ""))
        for label in kernels
    ]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("shape", help="MxNxK, B column-major (nt)")
    parser.add_argument("specs", nargs="+", help="config:options, e.g. name:split-kx4/sw1/nondet")
    parser.add_argument("--capped", action="store_true", help="time at the power cap")
    args = parser.parse_args(argv)
    m, n, k = (int(x) for x in args.shape.split("x"))
    props = torch.cuda.get_device_properties(0)
    how = "capped readings (bench_capped)" if args.capped else "bursts (bench_cold)"
    print(f"{props.name}, {props.multi_processor_count} SMs; {args.shape} bf16 nt; us, median of "
          f"{ROUNDS} rounds of {how}; ratio = cuBLAS time over the row's")  # fmt: skip
    rows = probe(m, n, k, args.specs, bench_capped if args.capped else bench_cold)
    base = rows[0][1]
    for label, us, bits in rows:
        if isinstance(us, str) or isinstance(base, str):
            cell = str(us)
        else:
            cell = f"{us:8.2f} us  {base / us:.3f}x cuBLAS"
        print(f"  {label:48s} {cell}  {bits}", flush=True)


if __name__ == "__main__":
    main()
