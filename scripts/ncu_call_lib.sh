# What the Nsight Compute call scripts share (gemm_ncu_call.sh, provider_ncu_call.sh source it):
# the machine's environment, the card's line in $OUT/gpu.txt, and ncu_profile, which runs one
# launcher script under ncu and writes $OUT/ncu-TAG.csv / .err.
#   ncu_profile TAG "EXTRA NCU FLAGS" LAUNCHER.py ARGS...
# Clocks are not locked (--clock-control none) and ncu flushes the caches before each kernel.
t0=$(date +%s)
[ -f .cache/gitid ] || { echo "harness: error: .cache/gitid: missing; allowed: carry .cache after scripts/device_carry.sh" >&2; exit 2; }
. scripts/device_env.sh || exit 1
# a profile's words are split but never globbed (a config or a value with * or ?); set after
# device_env.sh, whose install names its wheels by glob (set before it since f8811ef, session
# 105's first ncu call gave pip the literal '.whl/*.whl' and profiled nothing)
set -f
export TRITON_INTERPRET=0 HARNESS_CACHE_DIR=/tmp/hcache TRITON_CACHE_DIR=/tmp/tcache \
  FLASHINFER_WORKSPACE_BASE=/tmp/fi FLASH_ATTENTION_CUTE_DSL_CACHE_ENABLED=1
export $(cat .cache/gitid)
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
NCU_METRICS="gpu__time_duration.sum,dram__bytes_read.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__cycles_active.avg,sm__cycles_elapsed.avg,launch__grid_size,launch__block_size,launch__registers_per_thread,sm__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_bytes.sum"

ncu_profile() {
  local tag=$1 flags=$2 launcher=$3
  shift 3
  # $flags unquoted on purpose: several ncu options in one word
  timeout 240 ncu --csv --page details --clock-control none $flags --metrics $NCU_METRICS \
    python3 "$launcher" "$@" > "$OUT/ncu-$tag.csv" 2> "$OUT/ncu-$tag.err"
  echo "ncu $tag rc=$? t=$(( $(date +%s) - t0 ))"; grep -A6 "in this order" "$OUT/ncu-$tag.csv"
}
