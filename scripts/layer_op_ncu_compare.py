"""Launch chosen providers of one decoder-layer op (layer_ops) on one shape, for Nsight Compute.

Where does own RMSNorm's time go at Llama-3.1-405B's hidden size? At N 16384, m 512-2048
torch.compile's looped reduction ran 0.88-0.92x the one-pass kernel's time, and the own two-pass
kernel 1.02-1.65x it (results/h200/README.md, session 84); ncu's per-kernel DRAM bytes, L2
bytes and achieved occupancy say whether the bytes or the overlap differ. Each provider is
prepared as a sweep prepares it (the registry's prepare: torch.compile compiles there), then
launched twice; ncu reports the launches in order, and this script prints that order with each
provider's recorded config.

    ncu --csv --page details --metrics <list> python3 scripts/layer_op_ncu_compare.py \
        rmsnorm 8192 16384 own-triton own-triton-looped torch-compile
"""

from __future__ import annotations

import argparse

import torch

from harness.device import get_device
from harness.problems.layer_ops import LAYER_OP_PROBLEMS
from harness.providers import load_all


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("op", choices=["rmsnorm", "add_rmsnorm", "silu_mul"])
    parser.add_argument("m", type=int)
    parser.add_argument("n", type=int)
    parser.add_argument("providers", nargs="+", help="names from `harness list --op OP`")
    parser.add_argument("--device", default="cuda:0", help="cpu: the CPU test's dry run")
    args = parser.parse_args(argv)
    problem = LAYER_OP_PROBLEMS[args.op](args.m, args.n)
    device = get_device(args.device)
    inputs = problem.make_inputs(0, "randn", torch.device(args.device))
    ref = problem.reference(inputs)
    order = []
    for name in args.providers:
        prepared = load_all().get(args.op, name).prepare(problem, inputs, device)
        for _ in range(2):
            out = prepared.run()
        check = problem.check(prepared.output(out), ref)
        order.append((name, prepared.config, "ok" if check.ok else f"WRONG: {check.reason}"))
    if device.type == "cuda":
        torch.cuda.synchronize()
    print(f"{args.op} m {args.m} n {args.n} bf16; each provider launched twice, in this order:")
    for name, config, verdict in order:
        print(f"  {name:26s} {verdict:6s} {config}")


if __name__ == "__main__":
    main()
