"""Which short timing method ranks a GEMM's contenders as the sweep's protocol does? A probe (GPU).

The own Triton tuner ranks its candidates in 25 ms bursts (kernels/bench_cold.py), re-times the
close ones at the power cap (bench_capped: 150 ms warm-up, 100 ms window; capped_retime.py), and
kernel_choice.choose re-times the tuned `tl` kernel against the tuned Gluon kernel the same way.
On an H100 the capped re-time still misranked large shapes: at 8192x10240x8192 bf16 it chose
Gluon 128x192 ping-pong (capped 2.052 ms against tl 128x256's 2.084), which the sweep timed at
2.13-2.15 ms where tl 128x256 had timed 2.016; at 8192x8192x28672 it chose tl 256x128 (5.75
against 128x256's 5.86), timed by the sweep at 5.81-5.82 ms.

Per shape (bf16, nt, the sweep's inputs), the contenders are the `tl` candidates prepare_matmul
times for rung "full" whose burst is within capped_retime.BAND of the fastest (at most --max-tl),
the tuned Gluon pick, the best Gluon candidate of the other schedule, and cuBLAS as a reference
row. Each is timed by four methods, interleaved per contender, over --rounds rounds (forward
order, then reverse, so a drift cancels to first order): "burst" (bench_cold), "capped"
(bench_capped), "capped-long" (bench_cold with longer windows) and "sweep" (the harness's own
settle_power, then time_cuda_events with its L2 read flush, as measure_point does). The report
says per method how it ranks the own contenders and how many pairwise orders agree with "sweep".

    python3 scripts/capped_window_probe.py 8192x10240x8192 8192x8192x28672 [--rounds 2]
        [--max-tl 4] [--long-warmup-ms 600] [--long-rep-ms 300] [--csv out.csv]
"""

from __future__ import annotations

import argparse
import csv
import functools
import itertools
import statistics
from collections.abc import Callable

import torch
from harness_kernels.bench_cold import bench_capped, bench_cold
from harness_kernels.capped_retime import BAND
from harness_kernels.triton import gemm_gluon
from harness_kernels.triton.gemm import build_launch
from harness_kernels.triton.gemm_candidates import candidate_configs, decode_swap_configs
from harness_kernels.triton.gemm_operands import check_operands
from harness_kernels.triton.gemm_target import kernel_target

from harness.device import get_device
from harness.measure.power_settle import settle_power
from harness.measure.protocol import Protocol
from harness.measure.telemetry import Telemetry
from harness.measure.timer import L2Flusher, time_cuda_events
from harness.problems.gemm import GemmProblem

METHODS = ("burst", "capped", "capped-long", "sweep")
VENDOR = "cuBLAS"


def parse_shape(spec: str) -> tuple[int, int, int]:
    """'8192x10240x8192' -> (8192, 10240, 8192)."""
    parts = spec.split("x")
    if len(parts) != 3 or not all(p.isdigit() and int(p) > 0 for p in parts):
        raise SystemExit(f"{spec!r}: expected MxNxK, e.g. 8192x10240x8192")
    m, n, k = (int(p) for p in parts)
    return m, n, k


def ranking(ms: dict[str, float]) -> list[str]:
    """Names fastest first."""
    return sorted(ms, key=ms.__getitem__)


def pair_agreement(ms: dict[str, float], ref: dict[str, float]) -> tuple[int, int]:
    """(pairs of names that `ms` orders as `ref` does, pairs): a Kendall-style count."""
    pairs = list(itertools.combinations(sorted(ms), 2))
    agree = sum((ms[x] < ms[y]) == (ref[x] < ref[y]) for x, y in pairs)
    return agree, len(pairs)


def tl_name(cfg) -> str:
    """tl 128x256x64 s4 w8, plus the options that are set (split-K, stream-K, ...)."""
    flags = [f"k{cfg.split_k}"] if cfg.split_k > 1 else []
    flags += [f"p{cfg.programs_per_sm}"] if cfg.programs_per_sm > 1 else []
    named = ("stream_k", "warp_specialize", "epilogue_subtile", "swap_ab", "transpose_b")
    flags += [f for f in named if getattr(cfg, f)]
    tile = f"{cfg.block_m}x{cfg.block_n}x{cfg.block_k}"
    return " ".join(["tl", tile, f"s{cfg.num_stages}", f"w{cfg.num_warps}", *flags])


def tl_contenders(a, b, is_wrong, max_tl: int) -> dict[str, Callable[[], object]]:
    """prepare_matmul's rung-"full" candidate list, built as it builds it for column-major B
    (its transpose_b and swap_ab twins are for tf32 with row-major B only), each checked and
    timed in one burst; those within BAND of the fastest, at most max_tl, fastest first."""
    dev = kernel_target(a.device)
    p = check_operands(a, b, None, None, None, "tf32", dev)
    (m, n, k), in_b, out_b = p.mnk, a.element_size(), p.out_bytes
    cands = candidate_configs("full", m, n, k, in_b, out_b, dev)
    swaps = decode_swap_configs("full", m, n, k, in_b, out_b, dev) if p.b_is_nk else []
    cands = cands + [c for c in swaps if c not in cands]
    timed: dict[str, tuple[float, Callable[[], object]]] = {}
    for i, cfg in enumerate(cands):
        name = tl_name(cfg)
        name += f" #{i}" if name in timed else ""  # twins differing in an unnamed field
        try:
            launch = build_launch(p, cfg, dev)
            launch.bind_compiled()  # as the tuner's pick is launched: directly
            bad = is_wrong(launch())
        except Exception as e:  # noqa: BLE001 - a config that does not build is just not timed
            print(f"  {name}: {type(e).__name__}: {str(e)[:100]}, skipped")
            continue
        if bad:
            print(f"  {name}: wrong result, skipped")
            continue
        timed[name] = (bench_cold(launch, a.device), launch)
    if not timed:
        raise SystemExit(f"{m}x{n}x{k}: no tl candidate ran")
    best = min(ms for ms, _ in timed.values())
    close = sorted((ms, name) for name, (ms, _) in timed.items() if ms <= best * BAND)
    return {name: timed[name][1] for _, name in close[:max_tl]}


def gluon_contenders(a, b) -> dict[str, Callable[[], object]]:
    """The tuned Gluon pick, and the best-tuned candidate of the other schedule (from the
    pick's tune_timings_ms; absent where a cached decision did not keep them)."""
    pick = gemm_gluon.prepare_gluon_matmul(a, b)
    c = pick.config
    out = {f"gluon {c['block_m']}x{c['block_n']} s{c['num_stages']} {c['schedule']} (pick)": pick}
    timings = c.get("tune_timings_ms", {})
    (m, k), n = a.shape, b.shape[1]
    num_sms = torch.cuda.get_device_properties(a.device).multi_processor_count
    cands = gemm_gluon.gluon_gemm_configs(m, n, k, a.element_size(), a.element_size(), num_sms)
    other = [g for g in cands if g["PINGPONG"] != (c["schedule"] == "ping-pong")]
    other = [g for g in other if gemm_gluon.config_name(g) in timings]
    if other:
        g = min(other, key=lambda g: timings[gemm_gluon.config_name(g)])
        sched = "ping-pong" if g["PINGPONG"] else "cooperative"
        name = f"gluon {g['BLOCK_M']}x{g['BLOCK_N']} s{g['STAGES']} {sched}"
        out[name] = gemm_gluon.prepare_gluon_matmul(a, b, config=g)
    return out


def sweep_time(fn, flush: L2Flusher, telemetry: Telemetry) -> tuple[float, float | None]:
    """(median ms, median SM MHz in the window) by the sweep's protocol, as measure_point times
    a cuda-events point alone: settle the power limiter, then 300 ms warm-up and 0.5-2 s of
    samples, each after the read flush and behind the stream hold (no spread-guard retry)."""
    protocol = Protocol()
    settle_power(fn, flush, protocol, telemetry, torch.cuda.synchronize)
    timing = time_cuda_events(fn, protocol, flush, on_start=telemetry.start)
    return statistics.median(timing.samples_ms), telemetry.stop().sm_clock_mhz


def contenders(problem: GemmProblem, inputs: dict, max_tl: int) -> tuple[dict, list[str]]:
    """({name: launch} of the own contenders and cuBLAS, each checked against the fp32
    reference; the own names)."""
    a, b = inputs["a"], inputs["b"]
    ref, tol = problem.reference(inputs), problem.tolerance()
    is_wrong = lambda out: ((out.float() - ref).norm() / ref.norm()).item() > tol
    fns = tl_contenders(a, b, is_wrong, max_tl) | gluon_contenders(a, b)
    own = list(fns)  # ranked below; cuBLAS is a reference row, never a tuner's choice
    fns[VENDOR] = functools.partial(torch.matmul, a, b)  # the sweep's cublas row
    for name, fn in fns.items():
        assert not is_wrong(fn()), f"{name}: wrong result"
    return fns, own


def probe(m: int, n: int, k: int, args, rows: list[list]) -> list[str]:
    """Time every contender of one shape by every method, appending a row per measurement to
    `rows`; the report lines."""
    info = get_device("cuda")
    device, shape = info.torch_device, f"{m}x{n}x{k}"
    problem = GemmProblem(m=m, n=n, k=k, dtype="bf16", layout="nt")
    inputs = problem.make_inputs(seed=0, fill="randn", device=device)  # as the sweep fills them
    fns, own = contenders(problem, inputs, args.max_tl)
    flush = L2Flusher(device, info.flush_bytes, Protocol().l2_flush)  # as runner.py builds it
    telemetry = Telemetry(info.vendor, info.index)  # as runner.py: settle_power reads its limiter
    bench: dict[str, Callable] = {
        "burst": lambda fn: bench_cold(fn, device),
        "capped": lambda fn: bench_capped(fn, device),
        "capped-long": lambda fn: bench_cold(fn, device, args.long_warmup_ms, args.long_rep_ms),
        "sweep": lambda fn: sweep_time(fn, flush, telemetry),
    }
    ms: dict[tuple[str, str], list[float]] = {(c, t): [] for c in fns for t in METHODS}
    mhz: dict[str, list[float]] = {c: [] for c in fns}
    for rnd in range(1, args.rounds + 1):
        # odd rounds forward, even reverse: a drift over a round (heat, clock) cancels in the
        # mean; a contender's methods back to back in one order, so each meets the same state
        # every time (the burst: a GPU left at the cap by the previous contender's sweep)
        order = list(fns) if rnd % 2 else list(fns)[::-1]
        for name, method in itertools.product(order, METHODS):
            got = bench[method](fns[name])
            t, clock = got if method == "sweep" else (got, None)
            mhz[name] += [clock] if clock is not None else []
            ms[name, method].append(t)
            rows.append([shape, name, method, rnd, round(t, 5), clock])
    mean = {key: statistics.fmean(v) for key, v in ms.items()}
    clocks = {c: statistics.fmean(v) if v else float("nan") for c, v in mhz.items()}
    return report(shape, own, mean, clocks, args.rounds)


def report(shape: str, own: list[str], mean, clocks, rounds: int) -> list[str]:
    """The table of mean ms (and the sweep window's SM clock), then each method's ranking of the
    own contenders (cuBLAS left out) against the sweep's."""
    lines = [f"{shape} bf16 nt, mean ms over {rounds} round(s):"]
    lines.append(f"  {'contender':44s}" + "".join(f"{t:>12s}" for t in METHODS) + "  sweep MHz")
    for name in [*own, VENDOR]:
        row = "".join(f"{mean[name, t]:12.4f}" for t in METHODS)
        lines.append(f"  {name:44s}{row}  {clocks[name]:9.0f}")
    sweep = {c: mean[c, "sweep"] for c in own}
    for method in METHODS:
        got = {c: mean[c, method] for c in own}
        agree, pairs = pair_agreement(got, sweep)
        same = "same winner" if ranking(got)[0] == ranking(sweep)[0] else "OTHER winner"
        lines.append(
            f"  {method:12s} {same:12s} pairs {agree}/{pairs}: " + " < ".join(ranking(got))
        )
    return lines


def write_csv(path: str, rows: list[list]) -> None:
    """Every measurement so far (rewritten after each shape: a run cut short keeps its rows)."""
    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["shape", "contender", "method", "round", "ms", "sm_mhz"])
        writer.writerows(rows)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("shapes", nargs="+", help="MxNxK (bf16, B column-major: nt)")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--max-tl", type=int, default=4, help="tl candidates kept (within BAND)")
    parser.add_argument("--long-warmup-ms", type=float, default=600)
    parser.add_argument("--long-rep-ms", type=float, default=300)
    parser.add_argument("--csv", help="every measurement: shape, contender, method, round, ms")
    args = parser.parse_args(argv)
    shapes = [parse_shape(s) for s in args.shapes]
    props = torch.cuda.get_device_properties(0)
    print(f"{props.name}, {props.multi_processor_count} SMs", flush=True)
    rows: list[list] = []
    for m, n, k in shapes:
        print("\n".join(probe(m, n, k, args, rows)), flush=True)
        if args.csv:
            write_csv(args.csv, rows)
    if args.csv:
        print(f"{len(rows)} measurements -> {args.csv}")


if __name__ == "__main__":
    main()
