# Session 77, call 6 (nvidia-h200): M 64 on all 8 Llama weights, fp8 and bf16, with the
# transposed partner's two wide-K twins offered (7f3064a), each dtype in one run on one card.
set -u
nvidia-smi --query-gpu=uuid,power.limit --format=csv,noheader
GPU=h200 bash scripts/gpu_measure.sh 480 \
  "gemm_llama_lowp-fp8-m64b-s77 sweep=gemm_llama_lowp 'sweep.groups.0.providers=[cublaslt-fp8,cublaslt-fp8-fastaccum,own-triton]' 'sweep.groups.0.product.m=[64]' 'sweep.groups.1.providers=[hipblaslt]'" \
  "gemm_llama-m64b-s77 sweep=gemm_llama 'sweep.groups.0.providers=[cublas,own-triton]' 'sweep.groups.0.product.m=[64]'"
