# Session 43, call 6 (the H100 of calls 4-5, warm): the power settle A/B/A on one machine, M 4096
# of gemm_llama (8 shapes) with cuBLAS and own CUTLASS: default settle, settle off, default again.
set -u
t0=$(date +%s); C=call6
. scripts/device_env.sh || exit 1
export TRITON_INTERPRET=0 HARNESS_CACHE_DIR=/tmp/hcache TRITON_CACHE_DIR=/tmp/tcache
export $(cat .cache/gitid)
R=results/_scratch/gpu; L=$R/_logs; mkdir -p $L
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm,driver_version --format=csv,noheader | tee $L/$C-gpu.txt
run() {  # run <seconds left at least> <run_id> <overrides...>
  local left=$(( 570 - ($(date +%s) - t0) )); [ $left -gt $1 ] || { echo "skip $2: ${left}s left"; return; }
  local id=$2; shift 2
  timeout -s INT $left python3 -m harness.cli run "$@" results_dir=$R run_id=$id progress=false > $L/$id-$C.txt 2>&1
  echo "$id rc=$? t=$(( $(date +%s) - t0 )): $(tail -1 $L/$id-$C.txt)"
}
G="sweep=gemm_llama sweep.groups.0.providers=[cublas,own-cutlass] sweep.groups.0.product.m=[4096]"
run 60 settle-ab-a1 $G
run 60 settle-ab-b $G protocol.power_settle_ms=0
run 60 settle-ab-a2 $G
tar czf $OUT/results.tgz $R
for r in settle-ab-a1 settle-ab-b settle-ab-a2; do echo "== $r"; python3 scripts/gemm_ratio_table.py $R/$r 2>&1 | grep "geomean"; done
