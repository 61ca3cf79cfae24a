"""Which tile, K depth, stages, split-K and programs per SM stream a decode GEMM fastest? A probe.

Own Triton's fp8 decode (M 1-32) ran at 0.93x cuBLASLt's fast-accumulation `_scaled_mm` on the
H100 (results/h100/gemm_llama_lowp-fp8-grid; worst 16x4096x4096 0.799x), where own CUTLASS is
at 1.00x. The tuner times a dozen or so configs from fixed lists. This script times a wider
grid of `tl` configs at given shapes (the sweep's operands: randn, per-tensor e4m3 scales, B
column-major), with the tuner's timer (kernels/bench_cold.py: a read flush of 2x L2 and a stream
hold before every launch). It checks every config against the fp32 reference, then re-times the
best few beside the tuner's own pick and the vendor interleaved, ROUNDS rounds, median of the
rounds, so that a gain is read within one burst.

Short bursts, not the sweep's protocol: for choosing what the tuner should offer, not for
citing as a sweep result. The grid is walked best-filling first, and each shape stops
compiling new configs after --seconds.

    python3 scripts/gemm_decode_probe.py 1x4096x4096 16x4096x4096 [--dtype fp8|bf16] [--top 4]
        [--swapped] [--real-swap] [--min-units 32] [--capped]

--capped re-times the contenders with the tuners' capped window (bench_capped: 150 ms of
warm-up, 100 ms of samples) instead of bursts. Each contender's line also gives the SM clock
read after its timings (median over the rounds): in session 76 the bursts timed cuBLASLt
7-10% slower than the sweeps did at 4x28672x4096 and 64x4096x4096, own Triton 2-6% slower,
and a burst after an idle spell may not have reached the clock the sweep runs at.
"""

from __future__ import annotations

import argparse
import functools
import itertools
import statistics
import time
from dataclasses import replace

import torch
from harness_kernels.bench_cold import bench_capped, bench_cold
from harness_kernels.triton.gemm import build_launch, prepare_matmul
from harness_kernels.triton.gemm_configs import GemmConfig, shared_mem_bytes
from harness_kernels.triton.gemm_operands import check_operands
from harness_kernels.triton.gemm_target import kernel_target

from harness.problems.gemm import GemmProblem
from harness.providers.gemm_vendor import _scaled_mm_closure

ROUNDS = 3
BLOCK_MS = (16, 32, 64)
BLOCK_NS = (32, 64, 128, 256)
STAGES = (4, 6, 8, 12, 16)
SPLITS = (1, 2, 4, 8)
PROGRAMS_PER_SM = (1, 2)


def sm_clock_mhz() -> int | None:
    """The GPU's SM clock now (NVML), or None where NVML cannot tell."""
    try:
        import pynvml as nv

        nv.nvmlInit()
        return int(nv.nvmlDeviceGetClockInfo(nv.nvmlDeviceGetHandleByIndex(0), nv.NVML_CLOCK_SM))
    except Exception:  # noqa: BLE001 - no NVML: the times stand without their clock
        return None


def clock_note(readings: list[int | None]) -> str:
    """'1980 MHz' (the median reading), or '' where none was read."""
    got = [r for r in readings if r is not None]
    return f"{statistics.median(got):.0f} MHz" if got else ""


def parse_shape(spec: str) -> tuple[int, int, int]:
    """'16x4096x4096' -> (16, 4096, 4096)."""
    parts = spec.split("x")
    if len(parts) != 3 or not all(p.isdigit() and int(p) > 0 for p in parts):
        raise SystemExit(f"{spec!r}: expected MxNxK, e.g. 16x4096x4096")
    m, n, k = (int(p) for p in parts)
    return m, n, k


def grid(
    m: int,
    n: int,
    k: int,
    in_bytes: int,
    num_sms: int,
    max_smem: int,
    block_ms: tuple[int, ...] = BLOCK_MS,
    block_ns: tuple[int, ...] = BLOCK_NS,
    min_units: int | None = None,
    max_rounds: int = 1,
) -> list[GemmConfig]:
    """Persistent 4-warp TMA configs whose units (tiles x split) fill between half a wave (or
    `min_units`) and `max_rounds` rounds of the grid (one or two programs per SM), that fit
    shared memory (per program at two per SM), with at least two K tiles per split;
    best-filling first (then fewer bytes read per unit). BLOCK_M stays within M (rounded up to
    a power of two), except the smallest of `block_ms`."""
    block_ks = (64, 128, 256) if in_bytes == 2 else (128, 256, 512)
    m_cap = max(16, 1 << max(m - 1, 0).bit_length())
    ranked = []
    for bm, bn, bk, st, split, pps in itertools.product(
        block_ms, block_ns, block_ks, STAGES, SPLITS, PROGRAMS_PER_SM
    ):
        if bm > m_cap and bm > min(block_ms):
            continue
        k_tiles = -(-k // bk)
        units = -(-m // bm) * -(-n // bn) * split
        if split > 1 and k_tiles < 2 * split or st > -(-k_tiles // split):
            continue
        fewest = num_sms // 2 if min_units is None else min_units
        if not fewest <= units <= num_sms * pps * max_rounds:
            continue
        cfg = GemmConfig(bm, bn, bk, 4, st, split_k=split, programs_per_sm=pps)
        if shared_mem_bytes(cfg, in_bytes, 2) * pps > max_smem:
            continue
        fill = units / (num_sms * pps)
        ranked.append(((-min(fill, 1.0), (bm + bn) * k / split, -st), cfg))
    ranked.sort(key=lambda rc: rc[0])
    return [c for _, c in ranked]


def _name(cfg: GemmConfig) -> str:
    return (
        f"{'swap ' if cfg.swap_ab else ''}{cfg.block_m}x{cfg.block_n}x{cfg.block_k} "
        f"s{cfg.num_stages} k{cfg.split_k} p{cfg.programs_per_sm}"
    )


def _time_grid(ops, cfgs, dev, is_wrong, seconds):
    """({config: ms} of one burst each, configs that failed, ones wrong, start time)."""
    timed: dict[GemmConfig, float] = {}
    failed, wrong, t0 = 0, 0, time.monotonic()
    for cfg in cfgs:
        if time.monotonic() - t0 > seconds:
            break
        try:
            launch = build_launch(ops, cfg, dev)
            launch.bind_compiled()  # as the tuner's pick is: direct launches
            bad = is_wrong(launch())
        except Exception:  # noqa: BLE001 - a config that does not compile is just not timed
            failed += 1
            continue
        if bad:
            wrong += 1
            continue
        timed[cfg] = bench_cold(launch, ops.a.device) * 1e3
    return timed, failed, wrong, t0


def probe(
    m: int,
    n: int,
    k: int,
    dtype: str,
    top: int,
    seconds: float,
    every: bool = False,
    swapped: bool = False,
    real_swap: bool = False,
    min_units: int | None = None,
    capped: bool = False,
) -> list[str]:
    """The report lines for one shape."""
    device = torch.device("cuda")
    problem = GemmProblem(m=m, n=n, k=k, dtype=dtype, layout="nt")
    inputs = problem.make_inputs(seed=0, fill="randn", device=device)
    a, b = inputs["a"], inputs["b"]
    sa, sb = inputs.get("a_scale"), inputs.get("b_scale")
    ref = problem.reference(inputs)
    tol = problem.tolerance()

    def err(out: torch.Tensor) -> float:
        return ((out.float() - ref).norm() / ref.norm()).item()

    # the sweeps' own launches of cublaslt-fp8-fastaccum and cublas
    fp8 = dtype == "fp8_e4m3"
    vendor_name = "cuBLASLt fast-accum" if fp8 else "cuBLAS"
    vendor = (
        _scaled_mm_closure(inputs, fast_accum=True).run
        if fp8
        else functools.partial(torch.matmul, a, b)
    )
    pick = prepare_matmul(a, b, a_scale=sa, b_scale=sb)
    pick_cfg = GemmConfig(
        **{f: pick.config[f] for f in GemmConfig.__dataclass_fields__ if f in pick.config}
    )
    dev = kernel_target(device)
    ops = check_operands(a, b, None, sa, sb, "tf32", dev)
    cfgs = grid(m, n, k, a.element_size(), dev.num_sms, dev.max_shared_mem, min_units=min_units)
    timed, failed, wrong, t0 = _time_grid(ops, cfgs, dev, lambda out: err(out) > tol, seconds)
    best = sorted(timed, key=timed.get)[:top]
    contenders = {"pick " + _name(pick_cfg): pick, vendor_name: vendor}
    for cfg in best:
        if cfg != pick_cfg:
            contenders[_name(cfg)] = launch = build_launch(ops, cfg, dev)
            launch.bind_compiled()
    swap_note = ""
    token_tiles = (16, 32, 64) if m > 32 else (16, 32)  # M 33-128: 64-wide token tiles too
    if swapped:
        # C^T = W A^T: the weight's rows fill wgmma's 64-row tiles, the tokens are its N (both
        # operands K-major, so TMA reads both). Written here as a contiguous [N, M]: an upper
        # bound for a kernel that stores C^T into C's layout.
        w = b.t()
        ops_t = check_operands(w, a.t(), None, sb, sa, "tf32", dev)
        cfgs_t = grid(
            n, m, k, a.element_size(), dev.num_sms, dev.max_shared_mem, (64, 128), token_tiles
        )
        timed_t, f_t, w_t, _ = _time_grid(
            ops_t, cfgs_t, dev, lambda out: err(out.t()) > tol, seconds
        )
        swap_note = f"; swapped: {len(timed_t)} of {len(cfgs_t)} ({f_t} failed, {w_t} wrong)"
        for cfg in sorted(timed_t, key=timed_t.get)[:top]:
            contenders["swap C^T " + _name(cfg)] = launch = build_launch(ops_t, cfg, dev)
            launch.bind_compiled()
    if real_swap:
        # The kernel the tuner runs (swap_ab: C^T stored into C's layout by pointers), over a
        # wider grid than decode_swap_configs offers: split 1 at fewer units than half a wave
        # (cuBLASLt's fp8 decode kernel at 4096x4096 runs 64 CTAs), more stages, 2 per SM,
        # 128-row weight tiles, and up to 4 rounds of the persistent grid (N 28672: 448 tiles
        # of 64 rows, where cuBLASLt runs 128-row tiles).
        cfgs_r = [
            replace(c, swap_ab=True)
            for c in grid(
                n,
                m,
                k,
                a.element_size(),
                dev.num_sms,
                dev.max_shared_mem,
                (64, 128),
                token_tiles,
                min_units=min_units,
                max_rounds=4,
            )
        ]
        timed_r, f_r, w_r, _ = _time_grid(ops, cfgs_r, dev, lambda out: err(out) > tol, seconds)
        swap_note += f"; real swap_ab: {len(timed_r)} of {len(cfgs_r)} ({f_r} failed, {w_r} wrong)"
        for cfg in sorted(timed_r, key=timed_r.get)[:top]:
            if cfg != pick_cfg:
                contenders[_name(cfg)] = launch = build_launch(ops, cfg, dev)
                launch.bind_compiled()
    for name, fn in contenders.items():
        got = fn()
        assert err(got.t() if name.startswith("swap C^T") else got) <= tol, f"{name} wrong"
    rounds: dict[str, list[float]] = {name: [] for name in contenders}
    clocks: dict[str, list[int | None]] = {name: [] for name in contenders}
    timer = bench_capped if capped else bench_cold
    for _ in range(ROUNDS):
        for name, fn in contenders.items():
            rounds[name].append(timer(fn, device) * 1e3)
            clocks[name].append(sm_clock_mhz())
    us = {name: statistics.median(t) for name, t in rounds.items()}
    lines = [
        f"{m}x{n}x{k} {dtype}: {len(timed)} of {len(cfgs)} configs timed in "
        f"{time.monotonic() - t0:.0f} s ({failed} failed to build or run, {wrong} wrong)"
        f"{swap_note}; us, median of {ROUNDS} rounds of "
        f"{'capped readings (bench_capped)' if capped else 'bursts (bench_cold)'}:"
    ]
    for name in sorted(us, key=lambda name: us[name]):
        ratio = f"({us[vendor_name] / us[name]:.3f}x vendor)"
        lines.append(f"  {name:32s} {us[name]:8.2f}  {ratio}  {clock_note(clocks[name])}".rstrip())
    if every:  # the grid's single burst per config, fastest first
        lines.append("  every config timed, one burst each:")
        lines += [f"    {_name(c):30s} {timed[c]:8.2f}" for c in sorted(timed, key=timed.get)]
    return lines


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("shapes", nargs="+", help="MxNxK (B column-major, nt)")
    parser.add_argument("--dtype", choices=("fp8", "bf16"), default="fp8")
    parser.add_argument("--top", type=int, default=4, help="grid configs re-timed beside the pick")
    parser.add_argument("--seconds", type=float, default=120, help="per shape, for the grid")
    parser.add_argument("--every", action="store_true", help="also list every config's time")
    parser.add_argument("--swapped", action="store_true", help="also time C^T = W A^T's grid")
    parser.add_argument(
        "--real-swap", action="store_true", help="also time the swap_ab kernel's own grid"
    )
    parser.add_argument(
        "--min-units", type=int, default=None, help="fewest units a grid config may have"
    )
    parser.add_argument(
        "--capped", action="store_true", help="re-time the contenders at the power cap"
    )
    a = parser.parse_args(argv)
    dtype = "fp8_e4m3" if a.dtype == "fp8" else "bf16"
    shapes = [parse_shape(s) for s in a.shapes]
    props = torch.cuda.get_device_properties(0)
    print(f"{props.name}, {props.multi_processor_count} SMs", flush=True)
    for m, n, k in shapes:
        print(
            "\n".join(
                probe(
                    m,
                    n,
                    k,
                    dtype,
                    a.top,
                    a.seconds,
                    a.every,
                    a.swapped,
                    a.real_swap,
                    a.min_units,
                    a.capped,
                )
            ),
            flush=True,
        )


if __name__ == "__main__":
    main()
