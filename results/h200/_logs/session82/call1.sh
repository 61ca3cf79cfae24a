# Session 82, call 1 (nvidia-h200): session 81's owed ncu probe at Llama-3.1-405B's fused QKV GEMM
# (256x2304x16384, own Triton 0.759x cuBLAS in llama3_405b_decode-s81), then the layer_ops preset
# after the RMSNorm change (cbfd991: the weight loaded with x, before the row's sum), to set beside
# layer_ops-r2. Carry `.whl` and `.cache`.
set -u
nvidia-smi --query-gpu=uuid,power.limit,clocks.max.sm --format=csv,noheader
t0=$(date +%s)
bash results/h200/_logs/session81/next-ncu.sh
GPU=h200 bash scripts/gpu_measure.sh $(( ${BUDGET:-540} - ($(date +%s) - t0) )) "layer_ops-s82 sweep=layer_ops"
