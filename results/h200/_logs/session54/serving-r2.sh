# Written in session 54 for the owed H200 re-run of issue 21.3's serving grid (CALL=callN,
# ID=fmha_decode_serving-r2): session 54's H100 script (../../../h100/_logs/session54/serving.sh)
# with its scratch tune run replaced by tune_only=true on the real run, so the call that carries
# wheel part 1 fills the tune cache for the very run the next call times (session 54's scratch
# run also timed its 128 own rows: ~150 s of device time that tune_only saves). The 10 points
# session 53 did not reach are in the same grid. Call 1 also runs the GPU test of b61597b's fused
# split merge (tests/gpu/test_decode_merge_gpu.py: 200 launches must agree bit for bit).
set -u
t0=$(date +%s); C=${CALL:-call1}; ID=${ID:-fmha_decode_serving}
. scripts/device_env.sh || exit 1
export TRITON_INTERPRET=0 TRITON_CACHE_DIR=/tmp/tcache FLASHINFER_WORKSPACE_BASE=/tmp/fi \
  FLASH_ATTENTION_CUTE_DSL_CACHE_ENABLED=1
export $(cat .cache/gitid)
R=results/_scratch/gpu; L=$R/_logs; mkdir -p $L
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm,driver_version --format=csv,noheader | tee $L/$C-gpu.txt
if python3 -c "import flash_attn.cute, flashinfer" 2>/dev/null; then
  left=$(( ${BUDGET:-560} - ($(date +%s) - t0) ))
  timeout -s INT $left python3 -m harness.cli run sweep=fmha_decode_serving results_dir=$R run_id=$ID \
    progress=false > $L/$ID-$C.txt 2>&1
  echo "$ID rc=$? t=$(( $(date +%s) - t0 ))"; tail -8 $L/$ID-$C.txt | cut -c1-160
  cp $R/$ID/_workers/worker-0.log $L/$ID-$C-worker.log 2>/dev/null
else
  echo "FA4 / FlashInfer not whole yet: the fused merge's GPU test, then own Triton's tune pass for $ID (tune_only=true)"
  timeout 120 python3 -m pytest -q -m gpu -p no:cacheprovider tests/gpu/test_decode_merge_gpu.py > $L/$C-merge_gpu_test.txt 2>&1
  echo "merge test rc=$?: $(tail -1 $L/$C-merge_gpu_test.txt)"
  left=$(( ${BUDGET:-300} - ($(date +%s) - t0) ))
  timeout -s INT $left python3 -m harness.cli run sweep=fmha_decode_serving results_dir=$R run_id=$ID \
    tune_only=true progress=false > $L/$ID-$C-tune.txt 2>&1
  echo "tune rc=$? t=$(( $(date +%s) - t0 ))"; grep "tune pass" $L/$ID-$C-tune.txt | tail -2
fi
tar czf $OUT/results.tgz $R; tar czf $OUT/tune-cache.tgz -C $HARNESS_CACHE_DIR tune 2>/dev/null
echo "t=$(( $(date +%s) - t0 ))"
exit 0
