# Session 77, call 7 (nvidia-h200): what the swapped configs are worth at tf32 nn (C^T = B^T A^T,
# B read in place as wgmma's register operand), in one run on one card: own Triton against its
# `no-swap-ab` rung beside cuBLAS, M 128 and 1024 on the 8 Llama weights (owed since session 76).
set -u
nvidia-smi --query-gpu=uuid,power.limit --format=csv,noheader
GPU=h200 bash scripts/gpu_measure.sh 300 \
  "gemm_llama_lowp-tf32nn-swapab-s77 sweep=gemm_llama_lowp 'sweep.groups.0.providers=[hipblaslt]' 'sweep.groups.1.providers=[cublas,own-triton,own-triton-no-swap-ab]' 'sweep.groups.1.product={m:[128,1024],layout:[nn]}'"
