"""Which kernel cuBLAS runs for each gemm_llama shape, with its grid and block (GPU only).

The own GEMMs' mid band (M 64-1024) trails cuBLAS (issue 20); cuBLAS's kernel names (nvjet
and sm90_xmma names carry the tile, the cluster and the split) say what it does there that
the own candidate lists do not. torch.profiler records each launch's name, grid and block;
timings here are the profiler's, warm L2, one call: for reading shapes, not for citing.

    python3 scripts/cublas_kernels.py OUT.csv [--m 64,128,256,512,1024] [--dtype bf16|fp8]

--dtype fp8 profiles torch._scaled_mm on e4m3 inputs with per-tensor scales, bf16 out and fast
accumulation (the cublaslt-fp8-fastaccum provider's call).
"""

from __future__ import annotations

import argparse
import csv
import json
import tempfile
from collections.abc import Callable
from pathlib import Path

import torch
from torch.profiler import ProfilerActivity, profile

# (N, K) of the Llama-3-8B and -70B projections, as sweeps/gemm_llama.yaml zips them.
LLAMA_NK = [
    (6144, 4096),
    (4096, 4096),
    (28672, 4096),
    (4096, 14336),
    (10240, 8192),
    (8192, 8192),
    (57344, 8192),
    (8192, 28672),
]


def _product(m: int, n: int, k: int, dtype: str) -> Callable[[], torch.Tensor]:
    """x @ w^T (w [N, K], layout nt, as gemm_llama and gemm_llama_lowp run it)."""
    x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
    if dtype == "bf16":
        return lambda: x @ w.t()
    x8, w8 = x.to(torch.float8_e4m3fn), w.to(torch.float8_e4m3fn)
    one = torch.ones((), device="cuda")
    return lambda: torch._scaled_mm(
        x8, w8.t(), scale_a=one, scale_b=one, out_dtype=torch.bfloat16, use_fast_accum=True
    )


def kernels_of(m: int, n: int, k: int, dtype: str = "bf16") -> list[dict]:
    """The GPU kernels of one x @ w^T in `dtype` (bf16, or fp8 e4m3 through _scaled_mm)."""
    run = _product(m, n, k, dtype)
    for _ in range(3):  # cuBLAS picks its algorithm (and loads its module) on the first call
        run()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        run()
        torch.cuda.synchronize()
    with tempfile.TemporaryDirectory() as tmp:
        trace = Path(tmp) / "trace.json"
        prof.export_chrome_trace(str(trace))
        events = json.loads(trace.read_text())["traceEvents"]
    return [
        {
            "dtype": dtype,
            "m": m,
            "n": n,
            "k": k,
            "kernel": e["name"],
            "grid": "x".join(map(str, e["args"].get("grid", []))),
            "block": "x".join(map(str, e["args"].get("block", []))),
            "regs": e["args"].get("registers per thread"),
            "smem": e["args"].get("shared memory"),
            "us": round(float(e.get("dur", 0.0)), 1),
        }
        for e in events
        if e.get("cat") == "kernel"
    ]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", help="CSV to write")
    ap.add_argument("--m", default="64,128,256,512,1024", help="comma-separated M values")
    ap.add_argument("--dtype", default="bf16", choices=("bf16", "fp8"))
    args = ap.parse_args()
    ms = map(int, args.m.split(","))
    rows = [row for m in ms for n, k in LLAMA_NK for row in kernels_of(m, n, k, args.dtype)]
    with open(args.out, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    print(f"{torch.cuda.get_device_name()}: {len(rows)} kernels -> {args.out}")
    for r in rows:
        print(
            f"{r['m']:>5} {r['n']:>6} {r['k']:>6} {r['us']:>8} grid {r['grid']:<10} {r['kernel'][:90]}"
        )


if __name__ == "__main__":
    main()
