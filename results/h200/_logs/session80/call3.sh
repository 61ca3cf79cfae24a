# Session 80, call 3 (nvidia-h200): own Triton's tiny-N tiles (gemm_candidates.tiny_n_configs,
# for an MoE router's gate: Mixtral's N 8) on a GPU: every tile against fp32 (bf16, fp8), then
# the router GEMM at the Mixtral preset's M 1-512 beside cuBLAS, one run.
# Carry `.whl` and `.cache`.
set -u
nvidia-smi --query-gpu=uuid,power.limit,clocks.max.sm --format=csv,noheader
. scripts/device_env.sh >/dev/null || exit 1
L=results/_scratch/h200/_logs; mkdir -p $L
TRITON_INTERPRET=0 timeout 150 python3 -m pytest -q -s -m gpu -n 0 tests/gpu/test_tiny_n_gemm_gpu.py > $L/tiny-n-gpu-tests.txt 2>&1
tail -3 $L/tiny-n-gpu-tests.txt
DEVICE_ENV=0 GPU=h200 bash scripts/gpu_measure.sh ${BUDGET:-200} "mixtral_router-s80 sweep=gemm_llama \
'sweep.groups.0.providers=[cublas,own-triton]' \
'sweep.groups.0.product.m=[1,2,4,8,16,32,64,128,256,512]' \
'sweep.groups.0.zip.n=[8]' 'sweep.groups.0.zip.k=[4096]'"
