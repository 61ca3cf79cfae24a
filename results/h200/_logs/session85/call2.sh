# Session 85, call 2 (nvidia-h200): own Triton's fp8 kernel choice in the sweep's own protocol.
# Session 74's tuner chose the Gluon GEMM at 4096x6144x4096, 8192x6144x4096 and 4096x8192x8192
# although its capped re-time had the `tl` kernel ahead (161.4 vs 163.3 us, 335.2 vs 338.2,
# 436.6 vs 444.1): the pair was within kernel_choice.NOISE (2%) at the cap, so a burst pair
# decided, and Gluon is faster per cycle but draws more power. Call 1's capped probe had the
# `tl` pick at 0.974x the fast-accumulation cuBLASLt row at 4096x6144x4096, the best Gluon tile
# at 0.939x. Here own-triton beside its no-gluon rung (the `tl` kernel alone, the same tuning)
# and both cuBLASLt rows, M 2048-8192 at the three weights where the Gluon pick trails.
# Carry `.whl` and `.cache`.
set -u
G='{op: gemm, providers: [cublaslt-fp8, cublaslt-fp8-fastaccum, own-triton, own-triton-no-gluon], product: {m: [2048, 4096, 8192]}, fixed: {dtype: fp8_e4m3, layout: nt}, zip: {n: [6144, 8192, 10240], k: [4096, 8192, 8192]}}'
GPU=h200 bash scripts/gpu_measure.sh ${BUDGET:-500} "gemm_fp8-choice-s85 sweep=gemm_llama_lowp 'sweep.groups=[$G]'"
