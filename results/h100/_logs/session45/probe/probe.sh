# Session 45, call 5: the Gluon GEMM at decode shapes beside the tuned tl kernel and cuBLAS
# (scripts/gluon_decode_probe.py), in what device time was left.
set -u
. scripts/device_env.sh || exit 1
export TRITON_INTERPRET=0 HARNESS_CACHE_DIR=/tmp/hcache-probe TRITON_CACHE_DIR=/tmp/tcache
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm,driver_version --format=csv,noheader | tee $OUT/gpu.txt
timeout -s INT 120 python3 scripts/gluon_decode_probe.py 32x6144x4096 64x4096x4096 16x6144x4096 2>&1 \
  | grep -v Warning | tee $OUT/probe.txt | tail -8
exit 0
