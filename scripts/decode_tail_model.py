"""What a split batch's tail alone would cost own decode: a model to read beside the split probe.

A paged decode's work items (one sequence's KV head, or a split of it) land on at most one
persistent CTA per SM. While many CTAs read, they share the HBM read rate; once the short items
are done, the few CTAs left each read at most what one CTA can pull alone, so the batch's last
bytes come in below the read rate. For each point and split count this deals the Gluon decode's
items to its CTAs as its launcher does (item_tiles, longest first), takes each CTA's bytes as the
kernel loads them (a last tile's masked rows included), and prices them with a fluid model: each
of the n CTAs still reading gets min(--cta-gbps, --read-gbps / n), plus a cold read's fixed cost.
What it leaves out (each item's start, the partials and their merge, Q loads) is what the probe
measures over it. CPU only.

    python3 scripts/decode_tail_model.py b16:kv4096:h4:q1:p256:ragged [...]
        [--read-gbps 3112] [--cta-gbps 48] [--fixed-us 4.7] [--sms 132] [--block-n 64]
        [--splits 1,2,3,4]

The defaults are one H100's: the read rate and fixed cost from `results/h100/read_once-s96h`
(4.70 us + bytes / 3,112 GB/s), and one CTA's rate fitted to session 97's probe at its unsplit
ragged point (b16:kv4096:h4:q1:p16:ragged: the longest unit, 2.1 MB, in 48.3 - 4.7 us). That fit
takes in whatever else an unsplit item costs, so the model matches that point by construction.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from harness_kernels.triton.attention_decode_gluon import item_tiles, longest_first, persistent_ctas

from harness.problems.decode_point import problem_of
from harness.problems.dtypes import get_dtype


def shared_read_us(cta_bytes: Sequence[float], read_gbps: float, per_cta_gbps: float) -> float:
    """Microseconds until the last CTA has read its bytes, the read rate shared by the CTAs
    still reading, none faster than per_cta_gbps (GB/s = 1e3 bytes per us)."""
    left = sorted(b for b in cta_bytes if b > 0)
    t = 0.0
    done = 0.0
    for i, b in enumerate(left):
        active = len(left) - i
        rate = min(per_cta_gbps, read_gbps / active) * 1e3  # bytes per us for each CTA
        t += (b - done) / rate
        done = b
    return t


def cta_bytes(item_bytes: Sequence[float], ctas: int, order: Sequence[int] | None) -> list[float]:
    """Each CTA's bytes when CTA c runs slots c, c + ctas, ... of `order` (item indices; None:
    item order), as the persistent kernel deals its items."""
    slots = list(order) if order is not None else list(range(len(item_bytes)))
    loads = [0.0] * ctas
    for slot, item in enumerate(slots):
        loads[slot % ctas] += item_bytes[item]
    return loads


def model_rows(
    spec: str,
    splits: Sequence[int],
    *,
    read_gbps: float,
    cta_gbps: float,
    fixed_us: float,
    sms: int,
    block_n: int,
) -> list[dict]:
    """One row per split count: items, CTAs, bytes, the model's time and the ideal read's."""
    problem = problem_of(spec)
    lens = problem.seq_lens()
    row_bytes = problem.head_dim * 2 * get_dtype(problem.dtype).bytes  # K and V of one key
    rows = []
    for split in splits:
        tiles = item_tiles(lens, problem.kv_heads, split, block_n, max(lens), False)
        items = [t * block_n * row_bytes for t in tiles]
        ctas = persistent_ctas(len(items), sms)
        loads = cta_bytes(items, ctas, longest_first(tiles, ctas))
        total = sum(items)
        rows.append(
            dict(spec=spec, splits=split, items=len(items), ctas=ctas, mb=total / 1e6,
                 busiest_over_mean=max(loads) / (total / ctas),
                 model_us=fixed_us + shared_read_us(loads, read_gbps, cta_gbps),
                 ideal_us=fixed_us + total / (read_gbps * 1e3))
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
    a = ap.parse_args(argv)
    print(
        f"read {a.read_gbps:,.0f} GB/s shared, one CTA at most {a.cta_gbps:g} GB/s, "
        f"fixed {a.fixed_us} us, {a.sms} SMs, {a.block_n}-key tiles"
    )
    print(
        "| point | split | items | CTAs | MB | busiest CTA / mean | model us | ideal read us | tail us |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for spec in a.specs:
        try:
            rows = model_rows(
                spec, a.splits, read_gbps=a.read_gbps, cta_gbps=a.cta_gbps,
                fixed_us=a.fixed_us, sms=a.sms, block_n=a.block_n,
            )  # fmt: skip
        except ValueError as e:
            raise SystemExit(f"decode_tail_model: {e}") from None
        for r in rows:
            print(
                f"| {r['spec']} | {r['splits']} | {r['items']} | {r['ctas']} | {r['mb']:.1f} | "
                f"{r['busiest_over_mean']:.2f} | {r['model_us']:.1f} | {r['ideal_us']:.1f} | "
                f"{r['model_us'] - r['ideal_us']:.1f} |"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
