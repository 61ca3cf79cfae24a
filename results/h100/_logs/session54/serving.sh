# Session 54 (CALL=callN ID=<run>): issue 21.3's serving decode grid (sweeps/fmha_decode_serving,
# 384 points: own Triton, FlashInfer, FA4) on an H100, the first there, on the tree with 3a29ef5's
# two fixes (a ragged batch tunes apart; FlashInfer's prefill route times auto and fa2). FA4 and
# FlashInfer travel as two wheel parts (scripts/wheel_parts.py, README "FlashAttention-4 and
# FlashInfer"), one per back-to-back call, with results/ and reports/ left on the CPU box so a
# part fits beside the tree. The call whose parts are not yet whole runs own Triton alone into a
# scratch run (TUNE_ID), only for its tune pass: the choices land in the disk tune cache, which a
# warm machine keeps, so the real run's tune pass reads them (session 53: 253 s tuning, 12 s
# reading). That scratch run's rows are not results. FlashInfer's JIT modules and FA4's compiled
# kernels are kept under /tmp too, so the call that resumes the run does not build again.
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
  echo "FA4 / FlashInfer not whole yet: own Triton's tune pass into a scratch run"
  left=$(( ${BUDGET:-300} - ($(date +%s) - t0) ))
  timeout -s INT $left python3 -m harness.cli run sweep=fmha_decode_serving results_dir=/tmp/scratch \
    run_id=${TUNE_ID:-tune} 'providers=[own-triton]' progress=false > $L/tune-$C.txt 2>&1
  echo "tune rc=$? t=$(( $(date +%s) - t0 ))"; grep "tune pass" $L/tune-$C.txt /tmp/scratch/*/_workers/*.log 2>/dev/null | tail -2
fi
tar czf $OUT/results.tgz $R; tar czf $OUT/tune-cache.tgz -C $HARNESS_CACHE_DIR tune 2>/dev/null
echo "t=$(( $(date +%s) - t0 ))"
exit 0
