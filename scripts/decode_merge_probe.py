"""What merging the Gluon decode's splits inside the kernel, or launching the merge as a
programmatic dependent, is worth: a probe.

At batch 16 the serving grid's Gluon decode splits each sequence in 2-4 (64-128 units on 132
SMs), and until session 71 a second kernel merged the splits. That launch and its ramp cost a
few microseconds, against decodes of 28-60 us at KV 4k (0.70-0.78 of the H200's HBM read
ceiling at GQA 8, session 66). The fused merge (FUSED_REDUCE) lets each unit's last split to
finish do the merge instead; the "pdl" merge keeps the reduction kernel but launches it as the
split kernel's programmatic dependent, so its launch overlaps the split kernel's tail. This
takes the own-triton rows of committed runs whose pick was a Gluon split config, rebuilds each
point, pins that config, checks the three merges against the fp32 reference and times them
alternating, with the tuners' timer (kernels/bench_cold.py: a 256 MB read flush and a stream
hold before every launch).

Short bursts, not the sweep's protocol: for deciding, not for citing as a sweep result (the
sweep tunes the merge per point and records it in provider_config's `reduce`).

    python3 scripts/decode_merge_probe.py results/h200/fmha_decode_serving-b16-ragged-s70 \
        [--kv 4096] [--limit 8] [--rounds 3]
"""

from __future__ import annotations

import argparse
import json

import torch
from harness_kernels.bench_cold import alternating_medians
from harness_kernels.triton.attention_decode import prepare_decode

from harness.problems.attention import AttentionProblem
from harness.store import read_rows

CEILING_GBPS = {"H200": 4628.0, "H100": 3100.0}  # measured HBM read ceilings (results/*/)
WAYS = ("kernel", "fused", "pdl")  # the reduction kernel first: the speed-ups are over it
FIELDS = ("batch", "q_heads", "kv_heads", "q_len", "kv_len", "head_dim", "causal", "page_size")


def gluon_split_points(runs: list[str], kv: int | None) -> list[tuple[AttentionProblem, dict]]:
    """(problem, pinned config) of each own-triton row picked as a Gluon per-item split."""
    df = read_rows(*runs)
    df = df[(df["provider"] == "own-triton") & (df["status"] == "ok")]
    points = []
    for _, row in df.iterrows():
        cfg = json.loads(row["provider_config"])
        if cfg.get("impl") != "gluon" or cfg["num_splits"] < 2 or cfg["split_by"] == "balanced":
            continue
        if kv is not None and int(row["kv_len"]) != kv:
            continue
        problem = AttentionProblem(
            **{f: row[f].item() if hasattr(row[f], "item") else row[f] for f in FIELDS},
            dtype=row["dtype"],
            kv_layout="paged",
            ragged=bool(row["ragged"]),
        )
        pinned = dict(impl="gluon", BLOCK_N=cfg["BLOCK_N"], num_warps=cfg["num_warps"])
        pinned.update(num_stages=cfg["num_stages"], options=dict(cfg["options"]))
        if cfg["split_by"] == "longest":
            pinned["split_by"] = "longest"
        points.append((problem, dict(config=pinned, splits=cfg["num_splits"])))
    return points


def merge_launches(inputs: dict, pick: dict) -> dict:
    """{merge: launch} of the pinned config over these inputs, one per way of merging."""
    args = (inputs["q"], inputs["k_cache"], inputs["v_cache"])
    kw = dict(cache_seqlens=inputs["cache_seqlens"], block_table=inputs["block_table"])
    return {
        way: prepare_decode(
            *args,
            **kw,
            configs=[pick["config"]],
            num_splits=pick["splits"],
            tune=False,
            reduce=way,
        )
        for way in WAYS
    }


def probe(problem: AttentionProblem, pick: dict, rounds: int, ceiling: float | None) -> str:
    device = torch.device("cuda")
    inputs = problem.make_inputs(0, "randn", device)
    ref = problem.reference(inputs)
    launches = merge_launches(inputs, pick)
    verdicts = {way: problem.check(launch(), ref) for way, launch in launches.items()}
    ms = alternating_medians(launches, device, rounds)
    gbps = problem.min_bytes() / 1e6
    c = pick["config"]
    cells = [
        problem.label(),
        f"{c['BLOCK_N']} s{c['num_stages']} split {pick['splits']} {c.get('split_by', 'length')}",
    ]
    for way in launches:
        frac = f" ({gbps / ms[way] / ceiling:.3f})" if ceiling else ""
        ok = "" if verdicts[way].ok else " WRONG"
        cells.append(f"{ms[way] * 1e3:.1f} us{frac}{ok}")
    cells += [f"{ms['kernel'] / ms[way]:.3f}x" for way in WAYS[1:]]
    return " | ".join(cells)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("runs", nargs="+", help="committed run folders with own-triton rows")
    parser.add_argument("--kv", type=int, default=None, help="only points of this KV length")
    parser.add_argument("--limit", type=int, default=8, help="at most this many points")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    name = torch.cuda.get_device_name()
    ceiling = next((v for k, v in CEILING_GBPS.items() if k in name), None)
    points = gluon_split_points(args.runs, args.kv)
    print(
        f"{name}; {len(points)} Gluon split picks, {min(len(points), args.limit)} probed; burst "
        f"timer (bench_cold), median of {args.rounds} alternating rounds; fraction of {ceiling} "
        "GB/s"
    )
    print("point | pinned config | reduction kernel | fused | pdl | fused speed-up | pdl speed-up")
    for problem, pick in points[: args.limit]:
        print(probe(problem, pick, args.rounds, ceiling), flush=True)


if __name__ == "__main__":
    main()
