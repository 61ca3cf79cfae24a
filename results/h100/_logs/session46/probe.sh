# Session 46: scripts/decode_probe.py on a lent GPU (POINTS, CEIL from the environment).
set -u
. scripts/device_env.sh || exit 1
export TRITON_INTERPRET=0 HARNESS_CACHE_DIR=/tmp/hcache TRITON_CACHE_DIR=/tmp/tcache
export $(cat .cache/gitid)
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm,driver_version --format=csv,noheader | tee $OUT/gpu.txt
timeout -s INT 560 python3 scripts/decode_probe.py $POINTS --ceiling $CEIL --top 8 2>&1 | tee $OUT/decode_probe.txt
exit 0
