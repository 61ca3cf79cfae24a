# Session 45, call 3 (asked for nvidia-h200, ran on an H100, GPU-26a21ab6): the GPU tests session 44 added for tuned_on, then Nsight Compute on
# cuBLAS and own Triton configs at the two worst own-Triton points of gemm_llama-deep.
set -u
t0=$(date +%s)
. scripts/device_env.sh || exit 1
export TRITON_INTERPRET=0 HARNESS_CACHE_DIR=/tmp/hcache TRITON_CACHE_DIR=/tmp/tcache
export $(cat .cache/gitid)
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm,driver_version --format=csv,noheader | tee $OUT/gpu.txt
timeout 240 python3 -m pytest -q -n 0 -p no:cacheprovider tests/gpu/test_gpu_spine.py tests/cutlass/test_gpu_cutlass.py \
  -k "tune_cache_names or (tuned_provider and bf16)" > $OUT/gpu-tests.txt 2>&1
echo "gpu tests rc=$? t=$(( $(date +%s) - t0 )): $(tail -1 $OUT/gpu-tests.txt)"
M="gpu__time_duration.sum,dram__bytes_read.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__cycles_active.avg,sm__cycles_elapsed.avg,launch__grid_size,launch__block_size,launch__registers_per_thread,launch__shared_mem_per_block_dynamic,sm__throughput.avg.pct_of_peak_sustained_elapsed,smsp__inst_executed.sum,lts__t_bytes.sum,smsp__cycles_active.avg,gpc__cycles_elapsed.avg.per_second"
prof() {  # $1 label, rest: script args
  local tag=$1; shift
  timeout 150 ncu --csv --page details --clock-control none --section WarpStateStats --section SpeedOfLight \
    --metrics $M python3 scripts/gemm_ncu_compare.py "$@" > $OUT/ncu-$tag.csv 2> $OUT/ncu-$tag.err
  echo "ncu $tag rc=$? t=$(( $(date +%s) - t0 ))"; grep -A6 "in this order" $OUT/ncu-$tag.csv
}
prof 32x6144 32 6144 4096 32x128x128s5k2 32x64x128s9 16x64x128s5p2
prof 128x4096 128 4096 4096 64x128x64s8k2 64x64x64s13
exit 0
