# Session 85, call 8 (nvidia-h200): call 6's run for M 16384 (all eight weights, one run), the
# device time left permitting; issue 20.3's table takes M 16384 from it only if it is whole.
# Carry `.whl` and `.cache`.
set -u
G='{op: gemm, providers: [cublaslt-fp8, cublaslt-fp8-fastaccum, own-triton], product: {m: [16384]}, fixed: {dtype: fp8_e4m3, layout: nt}, zip: {n: [6144, 4096, 28672, 4096, 10240, 8192, 57344, 8192], k: [4096, 4096, 4096, 14336, 8192, 8192, 8192, 28672]}}'
GPU=h200 bash scripts/gpu_measure.sh ${BUDGET:-280} "gemm_llama_lowp-fp8-m16384-s85 sweep=gemm_llama_lowp 'sweep.groups=[$G]'"
