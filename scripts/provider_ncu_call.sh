# A lent-GPU call's Nsight Compute pass over providers of one op on one problem
# (scripts/provider_ncu_compare.py prepares, checks and launches them): the machine's environment,
# then one ncu report per profile, written to $OUT.
#   bash scripts/provider_ncu_call.sh "TAG OP key=value... PROVIDER..." ["TAG ..." ...]
# e.g. "c4k attention batch=1 q_heads=32 kv_heads=8 q_len=4096 kv_len=4096 causal=true
# dtype=fp16 own-triton flash-attn-4" (FA4 needs its wheels: scripts/decode_serving_call.sh's two
# parts, joined on the warm machine). Each profile's CSV and stderr come back as
# $OUT/ncu-TAG.csv / .err; the launch order (which kernels are whose) is printed. Only the
# launches after each provider's tuning and check are profiled (--profile-from-start off).
# Clocks are not locked (--clock-control none) and ncu flushes the caches before each kernel.
set -u
t0=$(date +%s)
. scripts/device_env.sh || exit 1
export TRITON_INTERPRET=0 HARNESS_CACHE_DIR=/tmp/hcache TRITON_CACHE_DIR=/tmp/tcache \
  FLASHINFER_WORKSPACE_BASE=/tmp/fi FLASH_ATTENTION_CUTE_DSL_CACHE_ENABLED=1
export $(cat .cache/gitid)
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm,driver_version --format=csv,noheader | tee $OUT/gpu.txt
M="gpu__time_duration.sum,dram__bytes_read.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__cycles_active.avg,sm__cycles_elapsed.avg,launch__grid_size,launch__block_size,launch__registers_per_thread,sm__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_bytes.sum"
for profile in "$@"; do
  set -- $profile
  tag=$1; shift
  timeout 240 ncu --csv --page details --clock-control none --profile-from-start off \
    --section SpeedOfLight --section Occupancy --metrics $M \
    python3 scripts/provider_ncu_compare.py "$@" > $OUT/ncu-$tag.csv 2> $OUT/ncu-$tag.err
  echo "ncu $tag rc=$? t=$(( $(date +%s) - t0 ))"; grep -A6 "in this order" $OUT/ncu-$tag.csv
done
exit 0
