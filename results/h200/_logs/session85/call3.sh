# Session 85, call 3 (nvidia-h200): the new tie rule (kernel_choice.py, ties="tl": a capped tie
# between own Triton's `tl` and Gluon GEMMs goes to `tl`) against the rule before it, kept as the
# rung own-triton-burst-ties, in one run: the points of the H200's fp8 grid (sessions 74-75) and
# bf16 grid (gemm_llama-s61) where a burst pair broke a capped tie for Gluon (fp8 0.976x, bf16
# 0.980x the vendor over those points), with both cuBLASLt rows (fp8) or cuBLAS (bf16).
# Carry `.whl` and `.cache`.
set -u
F='providers: [cublaslt-fp8, cublaslt-fp8-fastaccum, own-triton, own-triton-burst-ties], fixed: {dtype: fp8_e4m3, layout: nt}'
B='providers: [cublas, own-triton, own-triton-burst-ties], fixed: {dtype: bf16, layout: nt}'
G="{op: gemm, $F, product: {m: [4096, 8192]}, zip: {n: [6144, 8192, 28672], k: [4096, 8192, 4096]}}"
G="$G, {op: gemm, $F, product: {m: [256, 1024], n: [57344], k: [8192]}}"
G="$G, {op: gemm, $B, product: {m: [2048, 4096], n: [28672], k: [4096]}}"
G="$G, {op: gemm, $B, product: {m: [16384]}, zip: {n: [6144, 8192], k: [4096, 8192]}}"
GPU=h200 bash scripts/gpu_measure.sh ${BUDGET:-520} "gemm-ties-s85 sweep=gemm_llama_lowp 'sweep.groups=[$G]'"
