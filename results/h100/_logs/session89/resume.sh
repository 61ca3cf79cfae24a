# Session 89, calls 2 and on (GPU=h100): resume gemm_llama-s89h (call1.sh) within the budget.
# A warm machine keeps the run's folder and the tune cache in /tmp; a fresh one gets both from
# `.cache` (take_back.py packs the unfinished run into .cache/resume/ and the tune cache into
# .cache/tune-h100.tgz). Carry `.whl` and `.cache`.
set -u
t0=$(date +%s)
. scripts/device_env.sh >/dev/null || exit 1
export TRITON_INTERPRET=0 HARNESS_CACHE_DIR=/tmp/hcache TRITON_CACHE_DIR=/tmp/tcache
export $(cat .cache/gitid)
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm,driver_version --format=csv,noheader | tee $OUT/gpu.txt
GPU=h100 bash scripts/gpu_measure.sh $(( ${BUDGET:-540} - $(date +%s) + t0 )) \
  "gemm_llama-s89h sweep=gemm_llama 'sweep.groups.0.providers=[cublas,own-cutlass,own-triton]' max_points=360"
python3 scripts/gemm_ratio_table.py results/_scratch/h100/gemm_llama-s89h 2>&1 | tail -12
echo "t=$(( $(date +%s) - t0 ))"
