# Session 80, call 1 (nvidia-h200): session 79's owed GEMM runs with the final wave-tile code
# (3ddb90c: both deep twins timed). Qwen2.5-7B's five projection GEMMs at M 1-512, bf16, with
# cuBLAS, own Triton and the rung without the 144-wide tiles; then fp8 e4m3 at M 128-512 (where
# the wave tiles are offered) beside both cuBLASLt rows. One run each, on one card.
# Carry `.whl` and `.cache` (bash scripts/device_carry.sh first); resume with results/_scratch.
set -u
nvidia-smi --query-gpu=uuid,power.limit,clocks.max.sm --format=csv,noheader
Z="'sweep.groups.0.zip.n=[4608,3584,37888,3584,152064]' 'sweep.groups.0.zip.k=[3584,3584,3584,18944,3584]'"
GPU=h200 bash scripts/gpu_measure.sh ${BUDGET:-540} "qwen2_5_7b_gemm-wave-s80 sweep=gemm_llama \
'sweep.groups.0.providers=[cublas,own-triton,own-triton-no-wave-tiles]' \
'sweep.groups.0.product.m=[1,2,4,8,16,32,64,128,256,512]' $Z" \
"qwen2_5_7b_gemm-fp8-wave-s80 sweep=gemm_llama_lowp \
'sweep.groups.0.providers=[cublaslt-fp8,cublaslt-fp8-fastaccum,own-triton,own-triton-no-wave-tiles]' \
'sweep.groups.0.product.m=[128,256,512]' $Z 'sweep.groups.1.providers=[hipblaslt]'"
