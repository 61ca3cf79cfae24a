# Session 61, calls 2+ (GPU=h200): resume gemm_llama-s61 (the carried scratch folder, tune cache
# and CUTLASS libraries), within BUDGET seconds.
set -u
t0=$(date +%s)
export TRITON_INTERPRET=0 TRITON_CACHE_DIR=/tmp/tcache
export $(cat .cache/gitid)
L=results/_scratch/$GPU/_logs; mkdir -p $L
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm,driver_version --format=csv,noheader | tee $L/${CALL:-call2}-gpu.txt
bash scripts/gpu_measure.sh ${BUDGET:-540} \
  "gemm_llama-s61 sweep=gemm_llama 'sweep.groups.0.providers=[cublas,own-cutlass,own-triton]' max_points=360"
grep -h "tune pass\|prebuild\|built" $L/gemm_llama-s61.txt | cut -c1-200 | head
echo "t=$(( $(date +%s) - t0 ))"
exit 0
