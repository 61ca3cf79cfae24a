# Session 86, call 3 (nvidia-h200): what the device time left buys after gemm_llama-s86.
# 1. the capped Gluon tile probe at gemm_llama-s86's two worst M >= 2048 points (4096x8192x28672
#    0.963x, 4096x57344x8192 0.973x cuBLAS): is a tile the tuner did not pick faster at the cap?
# 2. Qwen2.5-7B's prefill preset (GEMMs, attention and the layer ops), first run; resumable.
# Carry `.whl` and `.cache`.
set -u
t0=$(date +%s)
. scripts/device_env.sh >/dev/null || exit 1
export TRITON_INTERPRET=0 HARNESS_CACHE_DIR=/tmp/hcache TRITON_CACHE_DIR=/tmp/tcache
export $(cat .cache/gitid)
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm,driver_version --format=csv,noheader | tee $OUT/gpu.txt
timeout 120 python3 scripts/gluon_tile_probe.py 4096x8192x28672 4096x57344x8192 --capped --top 3 \
  > $OUT/gluon-probe-bf16-worst-large-m.txt 2>&1
echo "probe rc=$? t=$(( $(date +%s) - t0 ))"
left=$(( ${BUDGET:-540} - $(date +%s) + t0 ))
GPU=h200 bash scripts/gpu_measure.sh $left "qwen2_5_7b_prefill-s86 sweep=qwen2_5_7b_prefill"
tail -25 $OUT/gluon-probe-bf16-worst-large-m.txt
