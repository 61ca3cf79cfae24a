# A lent-GPU call's Nsight Compute pass over GEMM configs (scripts/gemm_ncu_compare.py launches
# them): the machine's environment, then one ncu report per profile, written to $OUT.
#   bash scripts/gemm_ncu_call.sh "TAG M N K CONFIG..." ["TAG M N K CONFIG..." ...]
# e.g. "qkv256 256 2304 16384 128x128x128s3k3w8 128x256x64s4k7w8". Each profile's CSV and stderr
# come back as $OUT/ncu-TAG.csv / .err; the launch order (which kernel is which) is printed.
# Clocks are not locked (--clock-control none) and ncu flushes the caches before each kernel.
set -u
t0=$(date +%s)
. scripts/device_env.sh || exit 1
export TRITON_INTERPRET=0 HARNESS_CACHE_DIR=/tmp/hcache TRITON_CACHE_DIR=/tmp/tcache
export $(cat .cache/gitid)
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm,driver_version --format=csv,noheader | tee $OUT/gpu.txt
M="gpu__time_duration.sum,dram__bytes_read.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__cycles_active.avg,sm__cycles_elapsed.avg,launch__grid_size,launch__block_size,launch__registers_per_thread,sm__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_bytes.sum"
for profile in "$@"; do
  set -- $profile
  tag=$1; shift
  timeout 150 ncu --csv --page details --clock-control none --section SpeedOfLight \
    --metrics $M python3 scripts/gemm_ncu_compare.py "$@" > $OUT/ncu-$tag.csv 2> $OUT/ncu-$tag.err
  echo "ncu $tag rc=$? t=$(( $(date +%s) - t0 ))"; grep -A6 "in this order" $OUT/ncu-$tag.csv
done
exit 0
