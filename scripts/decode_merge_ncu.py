"""Launch the Gluon decode's split merges at one committed point each, for Nsight Compute.

The tuner's timings say the fused merge (each unit's last split to finish merges) beats the
reduction kernel at equal lengths (1.023x, session 72) and mostly loses at ragged ones (0.980x,
session 73). Its timer sees one number per merge; ncu's per-kernel counters say where the time
goes: how long the split kernel runs with and without the merge inside it, how long the
reduction kernel runs after it, and the DRAM bytes and SM activity of each. For each point this
takes the first own-triton row of the run picked as a Gluon split (decode_merge_probe's
reading), checks every merge against the fp32 reference, launches each twice (the first
compiles), and then once inside an NVTX range named `ncu`, which ncu's filter keeps:

    ncu --nvtx --nvtx-include "ncu/" --set full --clock-control none -o merge \
        python3 scripts/decode_merge_ncu.py results/h200/fmha_decode_serving-b16-ragged-s73 \
        results/h200/fmha_decode_serving-b16-equal-s72 --kv 4096

(scripts/decode_merge_ncu.sh runs it so on a lent GPU and prints the counters.)

It prints the order of the profiled launches so the report can be read back. Not a timer: ncu
replays each kernel with its caches flushed, one kernel at a time (so the "pdl" overlap is gone).
"""

from __future__ import annotations

import argparse

import torch
from decode_merge_probe import gluon_split_points, merge_launches

from harness.problems.attention import AttentionProblem


def first_picks(runs: list[str], kv: int | None) -> list[tuple[str, AttentionProblem, dict]]:
    """(run, problem, pinned pick) of the first own-triton Gluon split pick of each run at this
    KV length; a run with none is left out."""
    out = []
    for run in runs:
        points = gluon_split_points([run], kv)
        if points:
            out.append((run, *points[0]))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "runs", nargs="+", help="committed runs: the first Gluon split pick of each"
    )
    parser.add_argument("--kv", type=int, default=None, help="only points of this KV length")
    args = parser.parse_args()
    device = torch.device("cuda")
    picks = first_picks(args.runs, args.kv)
    for run in set(args.runs) - {run for run, _, _ in picks}:
        print(f"{run}: no Gluon split pick at kv {args.kv}")
    order = []
    for _, problem, pick in picks:
        inputs = problem.make_inputs(0, "randn", device)
        ref = problem.reference(inputs)
        for way, launch in merge_launches(inputs, pick).items():
            verdict = problem.check(launch(), ref)
            launch()
            torch.cuda.synchronize()
            torch.cuda.nvtx.range_push("ncu")
            launch()
            torch.cuda.synchronize()
            torch.cuda.nvtx.range_pop()
            c = pick["config"]
            order.append(
                f"{problem.label()} | {c['BLOCK_N']} s{c['num_stages']} split {pick['splits']} "
                f"{c.get('split_by', 'length')} | {way} | {'ok' if verdict.ok else 'WRONG'}"
            )
    print("profiled launches in order (kernel and pdl: the split kernel, then the reduction):")
    print("\n".join(order))


if __name__ == "__main__":
    main()
