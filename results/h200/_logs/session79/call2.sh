# Session 79, call 2 (nvidia-h200): Qwen2.5-7B's five projection GEMMs at M 1-512 with cuBLAS,
# own Triton (the 144-wide Gluon wave tiles offered) and the rung without them, one run.
# Carry `.whl` and `.cache` (bash scripts/device_carry.sh first); resume with results/_scratch.
set -u
nvidia-smi --query-gpu=uuid,power.limit,clocks.max.sm --format=csv,noheader
GPU=h200 bash scripts/gpu_measure.sh ${BUDGET:-470} "qwen2_5_7b_gemm-wave-s79 sweep=gemm_llama \
'sweep.groups.0.providers=[cublas,own-triton,own-triton-no-wave-tiles]' \
'sweep.groups.0.product.m=[1,2,4,8,16,32,64,128,256,512]' \
'sweep.groups.0.zip.n=[4608,3584,37888,3584,152064]' 'sweep.groups.0.zip.k=[3584,3584,3584,18944,3584]'"
