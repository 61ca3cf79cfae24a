"""Time and energy per GEMM when it runs back to back long enough to sit at the power cap (GPU).

At large M every GEMM provider runs at the board's power limit (700 W on an H100 SXM), so the
clock, and with it the time, is set by the energy each GEMM spends: own CUTLASS at
16384x10240x8192 ran at 1275 MHz where cuBLAS ran at 1410 MHz, both at 700 W (results/h100/
gemm_llama-pp). The harness's rows say *that* (sm_clock_mhz, power_w; `harness gaps` names the
clock as the reason); this probe says *how much* each candidate spends, so a tuner's choice made
in short bursts (kernels/bench_cold.py: 25 ms, before the limiter engages) can be checked
against the one that wins when the cap holds.

Per shape, cuBLAS (x @ w^T), own Triton (its tuned choice) and every own CUTLASS candidate of
gemm_tune.sm90_candidates (plus --extra ones) each run back to back: a warm-up of --warmup s, then
a window of --seconds s timed by one CUDA event pair, its energy read from NVML's total-energy
counter (mJ) before and after, clocks and power sampled meanwhile (harness telemetry). The
candidates are interleaved over --rounds rounds, so drift shows as a round-to-round difference.
Warm L2 and no flush: the operands of these shapes are several times the L2.

    python3 scripts/sustained_energy.py OUT.csv [--shapes 16384x10240x8192,...]
        [--seconds 1.5] [--warmup 0.7] [--rounds 2] [--extra sm90-coop-128x256:data-parallel/sw8]
"""

from __future__ import annotations

import argparse
import csv
import time
from collections.abc import Callable

import torch
from harness_kernels.cutlass import build as cutlass_build
from harness_kernels.cutlass import gemm as cutlass_gemm
from harness_kernels.cutlass.gemm_tune import sm90_candidates
from harness_kernels.triton.gemm import prepare_matmul

from harness.measure.telemetry import Telemetry

DEFAULT_SHAPES = "16384x10240x8192,8192x8192x8192,4096x28672x4096,512x8192x28672"


def nvml_handle(index: int):
    """The NVML handle of torch device `index`, matched by UUID (NVML counts every GPU)."""
    import pynvml  # GPU machines only: this module's helpers are tested without it

    pynvml.nvmlInit()
    try:
        uuid = str(torch.cuda.get_device_properties(index).uuid)
        return pynvml.nvmlDeviceGetHandleByUUID(f"GPU-{uuid}".encode())
    except Exception:
        return pynvml.nvmlDeviceGetHandleByIndex(index)


def sustained(
    fn: Callable[[], object], seconds: float, warmup: float, handle, tele: Telemetry
) -> dict:
    """ms and joules per call of fn run back to back, after `warmup` s of the same."""
    fn()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    fn()
    torch.cuda.synchronize()
    est = max(time.perf_counter() - t0, 1e-5)
    for _ in range(max(1, int(warmup / est))):
        fn()
    torch.cuda.synchronize()
    calls = max(3, int(seconds / est))
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    import pynvml

    tele.start()
    e0 = pynvml.nvmlDeviceGetTotalEnergyConsumption(handle)
    start.record()
    for _ in range(calls):
        fn()
    end.record()
    torch.cuda.synchronize()
    e1 = pynvml.nvmlDeviceGetTotalEnergyConsumption(handle)
    t = tele.stop()
    ms = start.elapsed_time(end) / calls
    return {
        "calls": calls,
        "ms": ms,
        "j_per_call": (e1 - e0) / 1000.0 / calls,
        "sm_mhz": t.sm_clock_mhz,
        "power_w": t.power_w,
        "throttle": t.throttle_reasons,
    }


def cutlass_candidates(m: int, n: int, k: int, extra: list[str]):
    """The tuner's own CUTLASS candidates for this shape, then the --extra ones."""
    cands = sm90_candidates(m, n, k, "bf16")
    return cands + [
        (cutlass_gemm.CONFIGS[name], cutlass_gemm.RunOptions.parse(opts))
        for name, _, opts in (e.partition(":") for e in extra)
    ]


def candidates(m: int, n: int, k: int, x: torch.Tensor, w: torch.Tensor, extra: list[str]):
    """(name, launch) of cuBLAS, own Triton and each own CUTLASS candidate that plans here."""
    b = w.t()
    out = [("cublas", lambda: x @ b)]
    tri = prepare_matmul(x, b)
    out.append((f"own-triton {tri.config.get('block_m')}x{tri.config.get('block_n')}", tri))
    cands = cutlass_candidates(m, n, k, extra)
    ref = (x.float() @ b.float()).flatten()
    for config, options in cands:
        name = f"{config.name}:{options}"
        try:
            launch = cutlass_gemm.prepare_gemm(x, b, config, options=options)
            got = launch().float().flatten()
        except Exception as e:  # a config that does not build or plan here is reported, skipped
            print(f"  skip {name}: {type(e).__name__}: {str(e)[:120]}")
            continue
        err = (torch.linalg.vector_norm(got - ref) / torch.linalg.vector_norm(ref)).item()
        if err > 3e-2:
            print(f"  skip {name}: rel. error {err:.3g}")
            continue
        out.append((name, launch))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--shapes", default=DEFAULT_SHAPES, help="MxNxK,... (x [M,K] @ w[N,K]^T)")
    ap.add_argument("--seconds", type=float, default=1.5)
    ap.add_argument("--warmup", type=float, default=0.7)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--extra", default="", help="config:options,... timed beside the candidates")
    args = ap.parse_args()
    extra = [e for e in args.extra.split(",") if e]
    import pynvml

    handle = nvml_handle(0)
    tele = Telemetry("nvidia", pynvml.nvmlDeviceGetIndex(handle))  # the same GPU as the energy
    shapes = [tuple(map(int, s.split("x"))) for s in args.shapes.split(",")]
    # every library first, in parallel (nvcc on all cores), not one by one at its first plan
    specs = {c.spec("bf16", True) for s in shapes for c, _ in cutlass_candidates(*s, extra)}
    for spec, result in cutlass_build.build_many(specs).items():
        if isinstance(result, Exception):
            print(f"build {spec.label}: {str(result).splitlines()[0]}")
    rows = []
    for m, n, k in shapes:
        torch.manual_seed(0)
        x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        w = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
        launches = candidates(m, n, k, x, w, extra)
        for rnd in range(args.rounds):
            for name, fn in launches:
                r = sustained(fn, args.seconds, args.warmup, handle, tele)
                r.update(m=m, n=n, k=k, candidate=name, round=rnd)
                r["tflops"] = 2 * m * n * k / r["ms"] / 1e9
                r["gflop_per_j"] = 2 * m * n * k / r["j_per_call"] / 1e9
                rows.append(r)
                print(
                    f"{m}x{n}x{k} r{rnd} {name:<48} {r['ms']:8.4f} ms {r['tflops']:6.1f} TF/s "
                    f"{r['j_per_call']:7.4f} J {r['gflop_per_j']:6.0f} GF/J {r['sm_mhz']} MHz "
                    f"{r['power_w']} W",
                    flush=True,
                )
    fields = ["m", "n", "k", "round", "candidate", "calls", "ms", "tflops", "j_per_call"]
    fields += ["gflop_per_j", "sm_mhz", "power_w", "throttle"]
    with open(args.out, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=fields)
        writer.writeheader()
        writer.writerows({key: r[key] for key in fields} for r in rows)
    print(f"{torch.cuda.get_device_name()}: {len(rows)} rows -> {args.out}")


if __name__ == "__main__":
    main()
