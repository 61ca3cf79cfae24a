# Session 49, call 5: which short timing method ranks own Triton's large-M contenders as the
# sweep does (scripts/capped_window_probe.py), at the two points the tuner misranked in
# gemm_llama-twins and one mid-size Gluon pick.
set -u
. scripts/device_env.sh || exit 1
export TRITON_INTERPRET=0 HARNESS_CACHE_DIR=/tmp/hcache TRITON_CACHE_DIR=/tmp/tcache
L=results/_scratch/gpu/_logs; mkdir -p $L
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm,driver_version --format=csv,noheader | tee $L/call5-gpu.txt
timeout -s INT 540 python3 scripts/capped_window_probe.py ${SHAPES:-8192x10240x8192 8192x8192x28672 512x10240x8192} \
  --rounds 2 --csv $L/call5-capped_window_probe.csv > $L/call5-capped_window_probe.txt 2>&1
echo "rc=$?"; cp -r $L $OUT/; cat $L/call5-capped_window_probe.txt | grep -v Warning | tail -45
