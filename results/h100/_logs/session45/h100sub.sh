# Session 45, call 4 (H100): M 16, 32, 64 and 128 of gemm_llama (32 shapes), where the deep Triton
# configs and the half-width CUTLASS tiles are offered; cuBLAS, own CUTLASS, own Triton in one run.
# The tune pass on (the default). Stops at 480 s: the last of this session's device time.
set -u
t0=$(date +%s); C=${CALL:-call1}; ID=${ID:-gemm_llama-deep-m16to128}
. scripts/device_env.sh || exit 1
export TRITON_INTERPRET=0 HARNESS_CACHE_DIR=/tmp/hcache TRITON_CACHE_DIR=/tmp/tcache
export $(cat .cache/gitid)
R=results/_scratch/gpu; L=$R/_logs; mkdir -p $L
# A fresh machine (the last one went back) starts from the tune cache an earlier call of this
# session wrote on a GPU of the same name (the cache is keyed by GPU name, driver, shape, source).
T=.cache/tune-${TUNE:-h200}.tgz
[ -d /tmp/hcache/tune ] || { [ -f $T ] && mkdir -p /tmp/hcache && tar xzf $T -C /tmp/hcache && echo "tune cache restored from $T"; }
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm,driver_version --format=csv,noheader | tee $L/$C-gpu.txt
left=$(( 480 - ($(date +%s) - t0) ))
timeout -s INT $left python3 -m harness.cli run sweep=gemm_llama 'sweep.groups.0.providers=[cublas,own-cutlass,own-triton]' 'sweep.groups.0.product.m=[16,32,64,128]' \
  max_points=96 results_dir=$R run_id=$ID progress=false > $L/$ID-$C.txt 2>&1
echo "$ID rc=$? t=$(( $(date +%s) - t0 )): $(grep -h 'tune pass' $L/$ID-$C.txt $R/$ID/_workers/*.log 2>/dev/null | tail -2) $(tail -1 $L/$ID-$C.txt)"
cp $R/$ID/_workers/worker-0.log $L/$ID-$C-worker.log 2>/dev/null
tar czf $OUT/results.tgz $R; tar czf $OUT/tune-cache.tgz -C /tmp/hcache tune 2>/dev/null
python3 scripts/gemm_ratio_table.py $R/$ID 2>&1 | tail -8
exit 0
