# Session 48: scripts/gemm_decode_probe.py --dtype bf16 --swapped (issue 20.1: does the swap
# C^T = W A^T that won fp8 decode also win bf16 decode?)
set -u
. scripts/device_env.sh || exit 1
export TRITON_INTERPRET=0 HARNESS_CACHE_DIR=/tmp/hcache TRITON_CACHE_DIR=/tmp/tcache
export $(cat .cache/gitid)
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm,driver_version --format=csv,noheader | tee $OUT/gpu.txt
timeout -s INT 540 python3 scripts/gemm_decode_probe.py $SHAPES --seconds ${SECS:-60} --top 3 --every --dtype ${DTYPE:-bf16} ${SWAP:+--swapped} 2>&1 | tee $OUT/gemm_decode_probe.txt | grep -v "Warning\|^    "
exit 0
