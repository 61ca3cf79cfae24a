"""What a split batch's tail alone would cost own decode: the model beside the split probe.

For each point and split count: the work items the Gluon decode would make (its item_tiles,
dealt longest first as its launcher deals them), each CTA's bytes as the kernel loads them (a
last tile's masked rows included), and the time harness.report.decode_tail's fluid model gives
(the read rate shared by the CTAs still reading, none above one SM's rate) plus a cold read's
fixed cost. Set against scripts/decode_split_probe.py's times at the same points, what is left
over the model is the merge, the partials and each item's start, not the tail. CPU only.

    python3 scripts/decode_tail_model.py b16:kv4096:h4:q1:p256:ragged [...]
        [--read-gbps 3112] [--cta-gbps 48] [--fixed-us 4.7] [--sms 132] [--block-n 64]
        [--splits 1,2,3,4]

The defaults are one H100's (session 97's probe card and session 96's read-once fit): the read
rate and fixed cost from `results/h100/read_once-s96h` (4.70 us + bytes / 3,112 GB/s), one CTA's
rate from the probe's unsplit ragged point (a 2.1 MB unit in 48.3 - 4.7 us: 48 GB/s).
"""

from __future__ import annotations

import argparse

from harness_kernels.triton.attention_decode_gluon import item_tiles, longest_first, persistent_ctas

from harness.problems.decode_point import problem_of
from harness.problems.dtypes import get_dtype
from harness.report.decode_tail import cta_bytes, shared_read_us


def model_rows(spec: str, args: argparse.Namespace) -> list[dict]:
    """One row per split count: items, CTAs, bytes, the model's time and the ideal read's."""
    problem = problem_of(spec)
    lens = problem.seq_lens()
    row_bytes = problem.head_dim * 2 * get_dtype(problem.dtype).bytes  # K and V of one key
    rows = []
    for splits in args.splits:
        tiles = item_tiles(lens, problem.kv_heads, splits, args.block_n, max(lens), False)
        items = [t * args.block_n * row_bytes for t in tiles]
        ctas = persistent_ctas(len(items), args.sms)
        loads = cta_bytes(items, ctas, longest_first(tiles, ctas))
        total = sum(items)
        model = args.fixed_us + shared_read_us(loads, args.read_gbps, args.cta_gbps)
        ideal = args.fixed_us + total / (args.read_gbps * 1e3)
        rows.append(
            dict(spec=spec, splits=splits, items=len(items), ctas=ctas, mb=total / 1e6,
                 busiest_over_mean=max(loads) / (total / ctas), model_us=model, ideal_us=ideal)
        )  # fmt: skip
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "specs", nargs="+", help="b<batch>:kv<len>:h<kv heads>:q<q_len>:p<page>[:ragged]"
    )
    ap.add_argument("--read-gbps", type=float, default=3112.0)
    ap.add_argument("--cta-gbps", type=float, default=48.0)
    ap.add_argument("--fixed-us", type=float, default=4.7)
    ap.add_argument("--sms", type=int, default=132)
    ap.add_argument("--block-n", type=int, default=64)
    ap.add_argument("--splits", type=lambda s: [int(x) for x in s.split(",")], default=[1, 2, 3, 4])
    args = ap.parse_args(argv)
    print(
        f"read {args.read_gbps:,.0f} GB/s shared, one CTA at most {args.cta_gbps:g} GB/s, "
        f"fixed {args.fixed_us} us, {args.sms} SMs, {args.block_n}-key tiles"
    )
    print(
        "| point | split | items | CTAs | MB | busiest CTA / mean | model us | ideal read us | tail us |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for spec in args.specs:
        for r in model_rows(spec, args):
            print(
                f"| {r['spec']} | {r['splits']} | {r['items']} | {r['ctas']} | {r['mb']:.1f} | "
                f"{r['busiest_over_mean']:.2f} | {r['model_us']:.1f} | {r['ideal_us']:.1f} | "
                f"{r['model_us'] - r['ideal_us']:.1f} |"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
