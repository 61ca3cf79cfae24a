# Session 84, call 6 (nvidia-h200): Nsight Compute over RMSNorm at m 8192, N 16384, where both own
# kernels (one-pass, two-pass) ran at about 3.1 TB/s and torch.compile's at 4.1 (call 5), and at
# N 8192, where the one-pass kernel ran at 4.1: DRAM and L2 bytes, achieved occupancy, grid.
# (A misreading, corrected after the call: the 3.1 TB/s was the headline's, which took the
# two-pass kernel there; the one-pass kernel ran at 4.0 TB/s, 0.99x torch.compile's time at
# m 8192, and 0.88-0.92x at m 512-2048.)
# Caches flushed before each kernel, clocks not locked. Carry `.whl` and `.cache`.
set -u
. scripts/device_env.sh >/dev/null || exit 1
export TRITON_INTERPRET=0 HARNESS_CACHE_DIR=/tmp/hcache TRITON_CACHE_DIR=/tmp/tcache
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm,driver_version --format=csv,noheader | tee $OUT/gpu.txt
M="gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_bytes.sum,sm__warps_active.avg.pct_of_peak_sustained_active,launch__grid_size,launch__block_size,launch__registers_per_thread,launch__occupancy_limit_registers,launch__occupancy_limit_shared_mem"
for spec in "n16k 8192 16384 own-triton-one-pass own-triton-looped torch-compile" "n8k 8192 8192 own-triton-one-pass torch-compile"; do
  set -- $spec; tag=$1; shift
  timeout 150 ncu --csv --page details --clock-control none --metrics $M \
    python3 scripts/layer_op_ncu_compare.py rmsnorm "$@" > $OUT/ncu-$tag.csv 2> $OUT/ncu-$tag.err
  echo "ncu $tag rc=$?"; grep -A5 "in this order" $OUT/ncu-$tag.csv | cut -c1-200
done
