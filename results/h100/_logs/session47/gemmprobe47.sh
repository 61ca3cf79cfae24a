# Session 47: scripts/gemm_decode_probe.py at own Triton's worst fp8 decode shapes (issue 20.3:
# M 1-32 at 0.93x cuBLASLt on the H100, results/h100/gemm_llama_lowp-fp8-grid).
set -u
. scripts/device_env.sh || exit 1
export TRITON_INTERPRET=0 HARNESS_CACHE_DIR=/tmp/hcache TRITON_CACHE_DIR=/tmp/tcache
export $(cat .cache/gitid)
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm,driver_version --format=csv,noheader | tee $OUT/gpu.txt
case "$(cat $OUT/gpu.txt)" in *H100*) mkdir -p /tmp/hcache && tar xzf .cache/tune-fp8-h100.tgz -C /tmp/hcache;; esac
timeout -s INT 540 python3 scripts/gemm_decode_probe.py $SHAPES --seconds ${SECS:-60} --top 3 --every ${SWAP:+--swapped} 2>&1 | tee $OUT/gemm_decode_probe.txt | grep -v "Warning\|^    "
exit 0
