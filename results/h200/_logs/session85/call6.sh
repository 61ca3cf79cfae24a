# Session 85, call 6 (nvidia-h200): own Triton's fp8 at M 2048 and 4096 over all eight weights in
# one run with both of today's changes (a capped tie goes to `tl`; the Gluon GEMM's 128x256 and
# 256x128 tiles stage C by halves), beside both cuBLASLt rows: issue 20.3's table takes these two
# M from this run (session 74's gemm_llama_lowp-fp8-gluon-s74 held them before).
# Carry `.whl` and `.cache` (the tune cache of calls 2-5).
set -u
G='{op: gemm, providers: [cublaslt-fp8, cublaslt-fp8-fastaccum, own-triton], product: {m: [2048, 4096]}, fixed: {dtype: fp8_e4m3, layout: nt}, zip: {n: [6144, 4096, 28672, 4096, 10240, 8192, 57344, 8192], k: [4096, 4096, 4096, 14336, 8192, 8192, 8192, 28672]}}'
GPU=h200 bash scripts/gpu_measure.sh ${BUDGET:-540} "gemm_llama_lowp-fp8-mid2-s85 sweep=gemm_llama_lowp 'sweep.groups=[$G]'"
