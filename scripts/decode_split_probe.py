"""Where own decode's fixed cost goes, by split count and merge: a probe.

Fit over the serving grid's KV lengths, own's batch-16 decode costs 2.3-7.8 us more than one cold
read of the same bytes (`scripts/decode_serving_table.py --read-once`, docs/decode_scheduling.md),
while its streaming rate is within 3-9% of the read's. At equal lengths the GQA-4 points run one
unit per (sequence, KV head) and carry 2.3 us of that; the GQA-8 points split each unit in two
and carry 5.5 us (H200). This times, at each given point, own's tuned decode with the split count
forced to each of --splits, each merge the split count allows (the tuner's pick among the
merges too), and the harness's cold read of the same number of bytes (`triton-stream`'s kernel),
all interleaved on one card, so the extra time of a split and of each merge reads directly
against the read. Every launch is checked against the fp32 reference first.

Short bursts (kernels/bench_cold.py: a 2x-L2 read flush and a stream hold before every launch,
median of --rounds alternating rounds): for deciding what to build, not for citing as a sweep
result.

    python3 scripts/decode_split_probe.py b16:kv4096:h4:q1:p256 [b16:kv4096:h4:q1:p16:ragged ...]
        [--splits 1,2,3,4] [--rounds 3]

Where the fixed cost lies: the same batch at several KV lengths with --splits 1 (a line in KV
whose intercept over the read's is the per-launch cost, whose slope is the streaming rate), and
p0 (a dense cache, no block table) beside a paged point of the same bytes. With split 1 among
--splits it also times the Gluon kernel's row split (each unit's rows over 2-8 CTAs, each
reading the whole KV range) where the units fill at most half the SMs.
"""

from __future__ import annotations

import argparse
from typing import Any

import torch
from harness_kernels.bench_cold import alternating_medians
from harness_kernels.triton import microbench
from harness_kernels.triton.attention_decode import REDUCES, prepare_decode, row_splits
from harness_kernels.triton.attention_decode_gluon import gluon_decode_configs

from harness.problems.attention import AttentionProblem
from harness.problems.decode_point import problem_of
from harness.providers.microbench import PROGRAMS_PER_SM


def launches(inputs: dict, splits: list[int]) -> dict[str, Any]:
    """{name: launch}: own's decode per forced split count (the tuner's merge, then each merge
    for a split), named by what ran; a split count the kernels refuse is left out, said why."""
    if "block_table" in inputs:  # paged
        args = (inputs["q"], inputs["k_cache"], inputs["v_cache"])
    else:  # a dense cache (page 0 in the spec)
        args = (inputs["q"], inputs["k"], inputs["v"])
    kw = dict(cache_seqlens=inputs["cache_seqlens"], block_table=inputs.get("block_table"))
    out: dict[str, Any] = {}
    for s in splits:
        for way in (None, *REDUCES) if s > 1 else (None,):
            try:
                launch = prepare_decode(*args, **kw, num_splits=s, reduce=way)
            except (ValueError, RuntimeError) as e:  # a merge this config cannot take
                print(f"  split {s} reduce {way or 'tuned'}: not run ({e})"[:160])
                continue
            c = launch.config
            name = f"split {s} {c.get('impl')} {c['BLOCK_N']}s{c['num_stages']}"
            out[name + (f" {c.get('reduce')}" if s > 1 else "") + ("" if way else " (tuned)")] = (
                launch
            )
    if 1 in splits:  # the Gluon kernel's row split (unsplit; each tile timed, the best kept)
        q, paged = inputs["q"], "block_table" in inputs
        h_kv = args[1].shape[2 if paged else 1]  # [pages, page, Hkv, D] or [B, Hkv, S, D]
        rows_per_unit = q.shape[1] // h_kv * q.shape[2]  # G x Sq
        sms = torch.cuda.get_device_properties(q.device).multi_processor_count if q.is_cuda else 132
        page = args[1].shape[1] if paged else None
        for rows in row_splits(rows_per_unit, q.shape[0] * h_kv, sms):
            cands = [dict(c, ROWS=rows) for c in gluon_decode_configs(q.shape[-1], page, 16)]
            try:
                launch = prepare_decode(*args, **kw, num_splits=1, configs=cands)
            except (ValueError, RuntimeError) as e:
                print(f"  row split {rows}: not run ({e})"[:160])
                continue
            c = launch.config
            out[f"split 1 rows {rows} gluon {c['BLOCK_N']}s{c['num_stages']} (tuned)"] = launch
    return out


def read_blocks(nbytes: int, programs: int) -> int:
    """The count of the read kernel's 16 KiB blocks to read for `nbytes`: within 0.5% of it, the
    count whose grid runs the most programs (then the nearest). The kernel runs a divisor of the
    block count as its grid (every block read once), so a count with no divisor near `programs`
    starves it: session 95's first H100 probe read 134.5 MB in 1,367 us, on a handful of
    programs, where a cold read of that size takes 48."""
    n = max(1, round(nbytes / microbench.BLOCK_BYTES))
    near = range(max(1, n - n // 200), n + n // 200 + 1)
    return max(near, key=lambda c: (microbench._read_grid(c, 1, programs), -abs(c - n)))


def probe(problem: AttentionProblem, splits: list[int], rounds: int) -> list[str]:
    device = torch.device("cuda")
    inputs = problem.make_inputs(0, "randn", device)
    ref = problem.reference(inputs)
    own = launches(inputs, splits)
    wrong = [name for name, launch in own.items() if not problem.check(launch(), ref).ok]
    nbytes = problem.min_bytes()
    programs = PROGRAMS_PER_SM * torch.cuda.get_device_properties(device).multi_processor_count
    blocks = read_blocks(nbytes, programs)
    read_bytes = blocks * microbench.BLOCK_BYTES
    x = torch.randn(read_bytes // 4, device=device)  # fp32 randn (never zeros)
    read = microbench.stream_read(x, x.numel(), programs)
    ms = alternating_medians({"cold read": read.run, **own}, device, rounds)
    # the read's time scaled to the point's bytes (they differ by at most 0.5%)
    base = ms.pop("cold read") * nbytes / read_bytes
    lines = [
        f"{problem.label()}: {nbytes / 1e6:,.1f} MB, cold read {base * 1e3:.1f} us "
        f"({read_bytes / 1e6:,.1f} MB read on {read.config['programs']} programs, scaled)"
    ]
    for name, t in sorted(ms.items(), key=lambda kv: kv[1]):
        flag = " WRONG" if name in wrong else ""
        lines.append(f"  {name}: {t * 1e3:.1f} us, {(t - base) * 1e3:+.1f} us over the read{flag}")
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "points", nargs="+", help="b<batch>:kv<len>:h<kv heads>:q<q_len>:p<page, 0: dense>[:ragged]"
    )
    ap.add_argument("--splits", default="1,2,3,4", help="split counts to force")
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    try:  # every spec checked before the GPU
        problems = [problem_of(spec) for spec in a.points]
    except ValueError as e:
        raise SystemExit(f"decode_split_probe: {e}") from None
    if not torch.cuda.is_available():
        raise SystemExit("decode_split_probe times on a CUDA GPU; none here")
    splits = [int(s) for s in a.splits.split(",")]
    print(f"{torch.cuda.get_device_name()}; burst timer, median of {a.rounds} alternating rounds")
    for problem in problems:
        print("\n".join(probe(problem, splits, a.rounds)), flush=True)


if __name__ == "__main__":
    main()
