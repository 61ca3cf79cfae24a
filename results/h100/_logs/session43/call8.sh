# Session 43, call 8 (fresh nvidia-h100-x1): the tune pass A/B/A, each run with an empty tune
# cache (so every own point tunes in the run): M 4096 of gemm_llama, cuBLAS and own CUTLASS.
set -u
t0=$(date +%s); C=call8
. scripts/device_env.sh || exit 1
export TRITON_INTERPRET=0 HARNESS_CACHE_DIR=/tmp/hcache TRITON_CACHE_DIR=/tmp/tcache
export $(cat .cache/gitid)
R=results/_scratch/gpu; L=$R/_logs; mkdir -p $L
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm,driver_version --format=csv,noheader | tee $L/$C-gpu.txt
run() {  # run <seconds left at least> <run_id> <overrides...>
  local left=$(( 570 - ($(date +%s) - t0) )); [ $left -gt $1 ] || { echo "skip $2: ${left}s left"; return; }
  local id=$2; shift 2
  HARNESS_CACHE_DIR=/tmp/hcache-$id timeout -s INT $left python3 -m harness.cli run "$@" results_dir=$R run_id=$id progress=false > $L/$id-$C.txt 2>&1
  echo "$id rc=$? t=$(( $(date +%s) - t0 )): $(grep 'tune pass' $L/$id-$C.txt) $(tail -1 $L/$id-$C.txt)"
}
G="sweep=gemm_llama sweep.groups.0.providers=[cublas,own-cutlass] sweep.groups.0.product.m=[4096]"
run 60 tunepass-on-1 $G
run 60 tunepass-off $G protocol.tune_first=false
run 60 tunepass-on-2 $G
tar czf $OUT/results.tgz $R
for r in tunepass-on-1 tunepass-off tunepass-on-2; do echo "== $r"; python3 scripts/gemm_ratio_table.py $R/$r 2>&1 | grep "geomean"; done
