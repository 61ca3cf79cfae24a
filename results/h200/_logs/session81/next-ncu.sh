# Owed after session 81 (nvidia-h200; carry `.whl`, `.cache`): Nsight Compute at Llama-3.1-405B's
# fused QKV GEMM, 256x2304x16384 nt, where own Triton ran 0.759x cuBLAS (`llama3_405b_decode-s81`).
# Question: is the `tl` kernel's split-K reduction (the last unit of a tile sums every partial)
# where the time goes? cuBLAS's split-K GEMM and its splitKreduce kernel show as two kernels;
# each own split config is set beside the same tile at whole K / split (K 4096 = 16384 / 4,
# K 5504 ~ 16384 / 3), which does one unit's main loop with no partials and no reduction.
set -u
t0=$(date +%s)
. scripts/device_env.sh || exit 1
export TRITON_INTERPRET=0 HARNESS_CACHE_DIR=/tmp/hcache TRITON_CACHE_DIR=/tmp/tcache
export $(cat .cache/gitid)
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm,driver_version --format=csv,noheader | tee $OUT/gpu.txt
M="gpu__time_duration.sum,dram__bytes_read.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__cycles_active.avg,sm__cycles_elapsed.avg,launch__grid_size,launch__block_size,launch__registers_per_thread,sm__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_bytes.sum"
prof() {  # $1 label, rest: scripts/gemm_ncu_compare.py's args
  local tag=$1; shift
  timeout 150 ncu --csv --page details --clock-control none --section SpeedOfLight \
    --metrics $M python3 scripts/gemm_ncu_compare.py "$@" > $OUT/ncu-$tag.csv 2> $OUT/ncu-$tag.err
  echo "ncu $tag rc=$? t=$(( $(date +%s) - t0 ))"; grep -A6 "in this order" $OUT/ncu-$tag.csv
}
prof qkv256 256 2304 16384 128x128x128s3k3w8 128x256x64s4k4w8 128x256x64s4k7w8
prof qkv256-k4096 256 2304 4096 128x256x64s4w8
prof qkv256-k5504 256 2304 5504 128x128x128s3w8
exit 0
