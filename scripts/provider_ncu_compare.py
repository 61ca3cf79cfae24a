"""Launch chosen providers of any op on one problem, for Nsight Compute.

Why is FA4 ahead of own Triton at the original study's causal shapes (0.865-0.946x per length,
`results/h100/thesis-s101h`)? ncu's per-kernel time, DRAM and L2 bytes, SM and tensor-pipe
throughput and registers say where the time goes. Each provider is prepared as a sweep prepares
it (the registry's prepare: own Triton tunes there, from the disk tune cache where it has one),
checked against the fp32 reference, and only then launched twice inside a CUDA profiler range,
so that `ncu --profile-from-start off` sees those launches and none of the tuning's. The launch
order (which kernels are whose) is printed with each provider's recorded config.

    ncu --csv --page details --profile-from-start off python3 scripts/provider_ncu_compare.py \
        attention batch=1 q_heads=32 kv_heads=8 q_len=4096 kv_len=4096 causal=true dtype=fp16 \
        own-triton flash-attn-4

Problem fields are `key=value` (the op's problem dataclass: `harness list`'s columns); every
other word after the op is a provider (`harness list --op OP`).
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import sys

import torch
import yaml

from harness.device import get_device
from harness.problems import PROBLEM_TYPES
from harness.problems.base import exact_fp32
from harness.providers import load_all
from harness.providers.registry import Unsupported


def problem_of(op: str, fields: list[str]):
    """The op's problem from `key=value` words (values read as YAML: 4096, true, fp16)."""
    if op not in PROBLEM_TYPES:
        raise ValueError(f"op: '{op}'; allowed: {', '.join(sorted(PROBLEM_TYPES))}")
    known = {f.name for f in dataclasses.fields(PROBLEM_TYPES[op])}
    kwargs = {}
    for word in fields:
        key, _, text = word.partition("=")
        if key not in known:
            raise ValueError(f"{word}: '{key}' is not a field of {op}; allowed: {sorted(known)}")
        kwargs[key] = yaml.safe_load(text)
    problem = PROBLEM_TYPES[op](**kwargs)
    problem.validate()
    return problem


@contextlib.contextmanager
def profiled(on_cuda: bool):
    """A CUDA profiler range (what `ncu --profile-from-start off` profiles); nothing on a CPU."""
    if on_cuda:
        torch.cuda.synchronize()
        torch.cuda.cudart().cudaProfilerStart()
    try:
        yield
    finally:
        if on_cuda:
            torch.cuda.synchronize()
            torch.cuda.cudart().cudaProfilerStop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("op", help="attention, gemm, rmsnorm, ...")
    parser.add_argument("words", nargs="+", help="key=value problem fields, then providers")
    parser.add_argument("--device", default="cuda:0", help="cpu: the CPU test's dry run")
    args = parser.parse_args(argv)
    fields = [w for w in args.words if "=" in w]
    providers = [w for w in args.words if "=" not in w]
    try:
        problem = problem_of(args.op, fields)
        if not providers:
            raise ValueError("no provider named; allowed: `harness list --op OP`")
        registered = [load_all().get(args.op, name) for name in providers]
    except (ValueError, TypeError) as e:
        print(f"harness: error: {e}", file=sys.stderr)
        return 2
    device = get_device(args.device)
    inputs = problem.make_inputs(0, "randn", torch.device(args.device))
    with exact_fp32():  # as a sweep checks: a TF32 setting left on must not soften the reference
        ref = problem.reference(inputs)
    prepared, left_out = [], []
    for name, provider in zip(providers, registered, strict=True):
        why = provider.why_not(problem, device)  # not on this machine: said, and the rest go on
        if why:
            left_out.append(f"  {name:26s} skipped: {why}")
            continue
        try:
            p = provider.prepare(problem, inputs, device)
        except Unsupported as e:  # found out only on preparing, as a sweep's skipped row is
            left_out.append(f"  {name:26s} skipped: {e}")
            continue
        if p.external is not None:  # runs as its own program (CK): ncu would see nothing here
            left_out.append(f"  {name:26s} skipped: runs as its own program, not in this process")
            continue
        out = p.output(p.run())
        with exact_fp32():
            check = problem.check(out, ref)  # checked before any profiled launch
        prepared.append((name, p, "ok" if check.ok else f"WRONG: {check.reason}"))
    with profiled(device.type == "cuda"):
        for _, p, _ in prepared:
            for _ in range(2):
                p.run()
    print(f"{args.op} {' '.join(fields)}; each provider launched twice, in this order:")
    for name, p, verdict in prepared:
        print(f"  {name:26s} {verdict:6s} {p.config}")
    for line in left_out:
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
