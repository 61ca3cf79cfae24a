"""What dealing the Gluon decode's work items longest first is worth: a probe.

At batch 64 with ragged lengths (the serving grid's: KV down to half the longest, shuffled)
there are more work items than SMs (64 sequences x 4 KV heads: 256 on 132), and the persistent
CTAs take items c, c + 132, ... whatever their lengths, so the last CTA to finish holds two long
sequences: own decode ran at 0.81-0.86 of the H200's HBM read ceiling there against 0.90-0.97
at equal lengths (results/h200/fmha_decode_serving-b64-s67). This times one Gluon config (the
tile the tuner picked there, one split) launched in item order (rung no-longest-first) and
longest first, alternating, after checking both against the fp32 reference, with the tuners'
timer (kernels/bench_cold.py: a 256 MB read flush and a stream hold before every launch).

Short bursts, not the sweep's protocol: for deciding, not for citing as a sweep result (the
sweep's A/B is own-triton against own-triton-no-longest-first).

    python3 scripts/decode_order_probe.py b64:kv4096:p16:h4 b64:kv4096:p16:h8 [--rounds 3]
"""

from __future__ import annotations

import argparse
import re

import torch
from harness_kernels.bench_cold import alternating_medians
from harness_kernels.triton.attention_decode import prepare_decode

from harness.problems.attention import AttentionProblem

CEILING_GBPS = {"H200": 4628.0, "H100": 3100.0}  # measured HBM read ceilings (results/*/)


def problem_of(spec: str) -> AttentionProblem:
    """b64:kv4096:p16:h4 -> batch 64, KV 4k, pages of 16, 4 KV heads (GQA 8 of 32 query
    heads), q_len 1 (or :q<n>), ragged, D 128, bf16, causal."""
    parts = [re.fullmatch(r"(b|kv|p|h|q)(\d+)", part) for part in spec.split(":")]
    f = {m.group(1): int(m.group(2)) for m in parts if m}
    if None in parts or not {"b", "kv", "p", "h"} <= set(f):
        raise SystemExit(f"{spec!r}: expected b<batch>:kv<len>:p<page>:h<kv heads>[:q<q_len>]")
    return AttentionProblem(
        batch=f["b"],
        q_heads=32,
        kv_heads=f["h"],
        q_len=f.get("q", 1),
        kv_len=f["kv"],
        head_dim=128,
        dtype="bf16",
        causal=True,
        kv_layout="paged",
        page_size=f["p"],
        ragged=True,
    )


def probe(problem: AttentionProblem, rounds: int, ceiling: float | None) -> str:
    device = torch.device("cuda")
    inputs = problem.make_inputs(0, "randn", device)
    ref = problem.reference(inputs)
    args = (inputs["q"], inputs["k_cache"], inputs["v_cache"])
    kw = dict(cache_seqlens=inputs["cache_seqlens"], block_table=inputs["block_table"])
    cfg = dict(impl="gluon", BLOCK_N=128, num_warps=4, num_stages=2, options={})
    launches = {
        rung: prepare_decode(*args, **kw, configs=[cfg], num_splits=1, tune=False, rung=rung)
        for rung in ("no-longest-first", "full")
    }
    verdicts = {rung: problem.check(launch(), ref) for rung, launch in launches.items()}
    ms = alternating_medians(launches, device, rounds)
    gbps = problem.min_bytes() / 1e6
    cells = [problem.label(), launches["full"].config["item_order"] or "-"]
    for rung in launches:
        frac = f" ({gbps / ms[rung] / ceiling:.3f})" if ceiling else ""
        ok = "" if verdicts[rung].ok else " WRONG"
        cells.append(f"{ms[rung] * 1e3:.1f} us{frac}{ok}")
    cells.append(f"{ms['no-longest-first'] / ms['full']:.3f}x")
    return " | ".join(cells)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("points", nargs="+")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    name = torch.cuda.get_device_name()
    ceiling = next((v for k, v in CEILING_GBPS.items() if k in name), None)
    print(
        f"{name}; Gluon 128-key tile, 2 stages, one split; burst timer (bench_cold), "
        f"median of {args.rounds} alternating rounds; fraction of {ceiling} GB/s"
    )
    print("point | order | item order | longest first | speed-up")
    for spec in args.points:
        print(probe(problem_of(spec), args.rounds, ceiling), flush=True)


if __name__ == "__main__":
    main()
