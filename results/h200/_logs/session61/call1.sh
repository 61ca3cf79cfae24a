# Session 61, call 1 (GPU=h200): does the power cap rank the Gluon GEMM tiles as the sweep does?
# scripts/gluon_tile_probe.py --capped at the two bf16 shapes where the H100's burst winner lost
# (2048x57344x8192, 1024x10240x8192) and three fp8 shapes; then the whole gemm_llama grid (cuBLAS,
# own CUTLASS, own Triton: 360 points) as gemm_llama-s61, whose tune pass is the first to use the
# Gluon tuner's capped re-time on a GPU; resumed by the next calls (resume.sh).
set -u
t0=$(date +%s)
export TRITON_INTERPRET=0 TRITON_CACHE_DIR=/tmp/tcache
export $(cat .cache/gitid)
. scripts/device_env.sh || exit 1
L=results/_scratch/$GPU/_logs; mkdir -p $L
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm,driver_version --format=csv,noheader | tee $L/call1-gpu.txt
timeout 150 python3 scripts/gluon_tile_probe.py 2048x57344x8192 1024x10240x8192 --top 4 --capped \
  > $L/gluon-tile-probe-capped.txt 2>&1
echo "bf16 capped probe rc=$? t=$(( $(date +%s) - t0 ))"
timeout 150 python3 scripts/gluon_tile_probe.py --fp8 1024x8192x28672 2048x28672x4096 8192x8192x8192 \
  --top 4 --capped > $L/gluon-tile-probe-fp8-capped.txt 2>&1
echo "fp8 capped probe rc=$? t=$(( $(date +%s) - t0 ))"
grep -v WRONG $L/gluon-tile-probe-capped.txt $L/gluon-tile-probe-fp8-capped.txt | cut -c1-110 | tail -60
bash scripts/gpu_measure.sh $(( ${BUDGET:-540} - ($(date +%s) - t0) )) \
  "gemm_llama-s61 sweep=gemm_llama 'sweep.groups.0.providers=[cublas,own-cutlass,own-triton]' max_points=360"
grep -h "tune pass\|prebuild\|built" $L/gemm_llama-s61.txt | cut -c1-200 | head
echo "t=$(( $(date +%s) - t0 ))"
exit 0
