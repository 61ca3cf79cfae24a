"""Which (tile, stages, warps, KV splits) streams a paged decode fastest? A probe.

Own Triton's decode tuner picks a (tile, split count) pair from short lists. At batch 16, KV 4k
(128 programs of 8 KV heads) it reached 77-80% of the HBM read ceiling on the H200 and 86-88%
on the H100 (results/*/fmha_decode_paged-r2), and FlashAttention-4 ran 6% ahead at pages of 256
on the H200. This script times a wider grid of configs x split counts at given points with the
tuner's timer (kernels/bench_cold.py: a 256 MB read flush and a stream hold before every
launch), checks every pair against the fp32 reference, and prints the tuner's own pick beside
the best of the grid; gains are against the grid's own time of the pick's pair where the grid
has it (one timing of a pair moves by about 0.6% between runs). Session 46 found with it that
the two-stage tuner of then never timed the winning pairs (results/h100/README.md).

Short bursts, not the sweep's protocol: for choosing what the tuner should offer, not for
citing as a sweep result.

    python3 scripts/decode_probe.py b16:kv4096:p256 b64:kv16384:p16 [--ceiling 4650] [--top 6]
        [--beyond-model]
"""

from __future__ import annotations

import argparse
import itertools
import re

import torch
from harness_kernels.bench_cold import bench_cold
from harness_kernels.triton.attention_configs import _cfg, keep_decode_config
from harness_kernels.triton.attention_decode import prepare_decode

from harness.problems.attention import AttentionProblem

BLOCK_NS = (32, 64, 128)
STAGES = (2, 3, 4, 6, 8, 10, 12)
DEEP_STAGES = (14, 16)  # with --beyond-model only
# 8 warps ran within 0.4% of 4 at the H200's best pairs (results/h200/_logs/session47), and
# the tuner's lists use 4: half the pairs, so three points fit one call.
WARPS = (4,)
SPLITS = (1, 2, 3, 4, 6, 8, 16)


def problem_of(spec: str) -> AttentionProblem:
    """b16:kv4096:p256 -> the fmha_decode_paged point (32/8 heads, D 128, q_len 1, causal)."""
    parts = [re.fullmatch(r"(b|kv|p)(\d+)", part) for part in spec.split(":")]
    f = {m.group(1): int(m.group(2)) for m in parts if m}
    if None in parts or set(f) != {"b", "kv", "p"}:
        raise SystemExit(
            f"{spec!r}: expected b<batch>:kv<kv_len>:p<page_size>, e.g. b16:kv4096:p256"
        )
    return AttentionProblem(
        batch=f["b"],
        q_heads=32,
        kv_heads=8,
        q_len=1,
        kv_len=f["kv"],
        head_dim=128,
        causal=True,
        kv_layout="paged",
        page_size=f["p"],
    )


def grid(page_size: int, beyond_model: bool = False) -> list[dict]:
    """Every config that keep_decode_config's shared-memory model admits (D 128, bf16, 16 rows:
    sm90_decode_smem_bytes, a bound of what Triton 3.6 and 3.9 allocate);
    `beyond_model` adds the ones it rejects (those Triton cannot fit fail to compile and are
    reported), to see whether the model keeps the tuner from something faster."""
    stages = STAGES + (DEEP_STAGES if beyond_model else ())
    cfgs = [_cfg(16, bn, w, st) for bn, st, w in itertools.product(BLOCK_NS, stages, WARPS)]
    target = ("cuda", 90)
    admitted = [
        c for c in cfgs if keep_decode_config(c | {"BLOCK_M": 16}, target, 128, 2, page_size)
    ]
    return cfgs if beyond_model else admitted


def probe(
    problem: AttentionProblem, top: int, ceiling: float | None, beyond_model: bool = False
) -> list[str]:
    device = torch.device("cuda")
    inputs = problem.make_inputs(0, "randn", device)
    ref = problem.reference(inputs)
    args = (inputs["q"], inputs["k_cache"], inputs["v_cache"])
    kw = dict(cache_seqlens=inputs["cache_seqlens"], block_table=inputs["block_table"])
    gbps = problem.min_bytes() / 1e6  # GB/s = bytes / (ms * 1e6)

    def timed(launch) -> tuple[float, bool]:
        ok = problem.check(launch(), ref).ok
        return bench_cold(launch, device), ok

    tuned = prepare_decode(*args, **kw)
    t_tuned, ok_tuned = timed(tuned)
    c = tuned.config
    lines = [
        f"{problem.label()}: tuner's pick {c['BLOCK_N']} s{c['num_stages']} w{c['num_warps']} "
        f"split {c['num_splits']}: {gbps / t_tuned:,.0f} GB/s"
        + ("" if ok_tuned else " WRONG")
        + (f" ({gbps / t_tuned / ceiling:.1%} of {ceiling:,.0f})" if ceiling else "")
    ]
    results = []
    failed: set[tuple] = set()  # configs that did not build: reported once, not per split count
    for cfg, splits in itertools.product(grid(problem.page_size, beyond_model), SPLITS):
        if splits > 1 and problem.kv_len // splits < cfg["BLOCK_N"]:
            continue
        # the split kernel and the whole-KV one are separate builds (SPLIT is a constexpr)
        name = (cfg["BLOCK_N"], cfg["num_stages"], cfg["num_warps"], splits > 1)
        if name in failed:
            continue
        try:
            launch = prepare_decode(*args, **kw, configs=[cfg], num_splits=splits, tune=False)
            t, ok = timed(launch)
        except Exception as exc:  # a config that does not compile or launch is reported
            failed.add(name)
            kind = "split" if name[3] else "whole"
            lines.append(f"  {name[0]} s{name[1]} w{name[2]} {kind}: {exc!r}"[:160])
            continue
        results.append((t, ok, cfg, splits))
    wrong = [r for r in results if not r[1]]
    results = sorted((r for r in results if r[1]), key=lambda r: r[0])
    pick = (c["BLOCK_N"], c["num_stages"], c["num_warps"], c["num_splits"])
    same = [
        t for t, _, g, sp in results if (g["BLOCK_N"], g["num_stages"], g["num_warps"], sp) == pick
    ]
    base = same[0] if same else t_tuned
    lines.append(
        f"  the pick's pair in the grid: {gbps / base:,.0f} GB/s"
        if same
        else "  (the pick's pair is not in the grid)"
    )
    for t, _, cfg, splits in results[:top]:
        lines.append(
            f"  {cfg['BLOCK_N']:>3} s{cfg['num_stages']} w{cfg['num_warps']} split {splits:>2}: "
            f"{gbps / t:,.0f} GB/s, {base / t:.3f}x the tuner's pick"
        )
    lines.append(f"  {len(results)} (config, split count) pairs ok, {len(wrong)} wrong")
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("points", nargs="+", help="b<batch>:kv<kv_len>:p<page_size>")
    ap.add_argument("--top", type=int, default=6)
    ap.add_argument("--ceiling", type=float, default=None, help="HBM read ceiling, GB/s")
    ap.add_argument(
        "--beyond-model",
        action="store_true",
        help="also configs the tuner's shared-memory model rejects (deeper stages, wider tiles)",
    )
    a = ap.parse_args()
    for spec in a.points:
        print("\n".join(probe(problem_of(spec), a.top, a.ceiling, a.beyond_model)), flush=True)


if __name__ == "__main__":
    main()
