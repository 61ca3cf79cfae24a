# Session 85, call 1 (nvidia-h200): where own Triton's fp8 trails cuBLASLt (issue 20.3, the
# weakest points of the 120-shape table, ratio-fp8-own-triton-120-shapes.txt of session 77):
# the N 6144 column (256x 0.918, 128x 0.938, 4096x 0.939, 8192x 0.949), 4096x8192x8192 (0.958)
# and 512x10240x8192 (0.936). First the Gluon tiles pinned beside both `_scaled_mm` rows at the
# power cap (gluon_tile_probe --fp8 --capped: is a faster tile in the space, and does the tuner
# time it?), then Nsight Compute at 4096x6144x4096, where cuBLASLt runs 256x128 tiles in 1x2
# clusters (fp8-explore/cublas_kernels_fp8.csv): DRAM and L2 bytes, SM throughput of each.
# Carry `.whl` and `.cache`.
set -u
t0=$(date +%s)
. scripts/device_env.sh >/dev/null || exit 1
export TRITON_INTERPRET=0 HARNESS_CACHE_DIR=/tmp/hcache TRITON_CACHE_DIR=/tmp/tcache
export $(cat .cache/gitid)
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm,driver_version --format=csv,noheader | tee $OUT/gpu.txt
timeout 330 python3 scripts/gluon_tile_probe.py 4096x6144x4096 256x6144x4096 512x10240x8192 \
  8192x6144x4096 128x6144x4096 4096x8192x8192 --fp8 --capped --top 4 --stages 6,8 \
  > $OUT/fp8-probe-capped.txt 2>&1
echo "probe rc=$? t=$(( $(date +%s) - t0 ))"
M="gpu__time_duration.sum,dram__bytes_read.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__cycles_active.avg,launch__grid_size,launch__block_size,launch__cluster_dim_x,launch__cluster_dim_y,launch__registers_per_thread,sm__throughput.avg.pct_of_peak_sustained_elapsed,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_elapsed,lts__t_bytes.sum,smsp__warps_issue_stalled_barrier_per_warp_active.pct,smsp__warps_issue_stalled_long_scoreboard_per_warp_active.pct"
timeout 150 ncu --csv --page details --clock-control none --metrics $M \
  python3 scripts/gemm_ncu_compare.py --fp8 4096 6144 4096 gl:128x192s4 gl:256x128s4 gl:128x256s4 \
  > $OUT/ncu-fp8-4096x6144.csv 2> $OUT/ncu-fp8-4096x6144.err
echo "ncu rc=$? t=$(( $(date +%s) - t0 ))"; grep -A6 "in this order" $OUT/ncu-fp8-4096x6144.csv
cat $OUT/fp8-probe-capped.txt | tail -80
