"""One own-CUTLASS bf16 nt GEMM config at 1024x10240x8192 (the shape the N-split 128x320 tile was
written for), launched under an NVTX range `probe` for ncu to profile: three warm launches, one
profiled, then the output checked against an fp32 product. Usage: coopn_probe.py CONFIG_NAME"""

import sys

import torch
from harness_kernels.cutlass.gemm import CONFIGS, prepare_gemm

name = sys.argv[1]
M, N, K = 1024, 10240, 8192
torch.manual_seed(0)
a = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
b = torch.randn(N, K, device="cuda", dtype=torch.bfloat16).t()  # [K, N] column-major: weights
launch = prepare_gemm(a, b, CONFIGS[name])
for _ in range(3):
    launch()
torch.cuda.synchronize()
torch.cuda.nvtx.range_push("probe")
out = launch()
torch.cuda.nvtx.range_pop()
torch.cuda.synchronize()
ref = a.float() @ b.float()
err = ((out.float() - ref).abs().max() / ref.abs().max()).item()
print(f"{name}: max abs err / max |ref| = {err:.2e}", flush=True)
