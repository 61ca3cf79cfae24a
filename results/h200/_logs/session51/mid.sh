# Session 51 (ID=<run>): own CUTLASS's mid band (M 128-1024, 32 shapes) beside cuBLAS after the
# 128x64 wave-fill tiles (sm90-coop-128x64 and its 2x1 twin). The machine builds the two new
# libraries from the carried include tree; the rest come in the carried .cache/cutlass.tar.xz.
# The change to kernels/cutlass/gemm.py re-tunes every own CUTLASS point, so the tune pass runs.
set -u
t0=$(date +%s); ID=${ID:-gemm_llama_mid-c64}
. scripts/device_env.sh || exit 1
export TRITON_INTERPRET=0 TRITON_CACHE_DIR=/tmp/tcache
export $(cat .cache/gitid)
R=results/_scratch/gpu; L=$R/_logs; mkdir -p $L
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm,driver_version --format=csv,noheader | tee $L/$ID-gpu.txt
left=$(( ${BUDGET:-540} - ($(date +%s) - t0) ))
timeout -s INT $left python3 -m harness.cli run sweep=gemm_llama 'sweep.groups.0.providers=[cublas,own-cutlass]' \
  'sweep.groups.0.product.m=[128,256,512,1024]' results_dir=$R run_id=$ID progress=false > $L/$ID.txt 2>&1
echo "$ID rc=$? t=$(( $(date +%s) - t0 )): $(grep -h 'tune pass' $L/$ID.txt $R/$ID/_workers/*.log 2>/dev/null | tail -1) $(tail -1 $L/$ID.txt)"
cp $R/$ID/_workers/worker-0.log $L/$ID-worker.log 2>/dev/null
tar czf $OUT/results.tgz $R; tar czf $OUT/tune-cache.tgz -C $HARNESS_CACHE_DIR tune 2>/dev/null
[ -d /tmp/cutlass-cache ] && tar cJf $OUT/cutlass.tar.xz -C /tmp/cutlass-cache . 2>/dev/null
python3 scripts/gemm_ratio_table.py $R/$ID 2>&1 | grep -E "^(128|256|512|1024) |^own|bands|clock|below"
exit 0
