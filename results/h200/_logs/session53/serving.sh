# Session 53 (CALL=callN ID=<run>): issue 21.3's serving decode grid (sweeps/fmha_decode_serving,
# 384 points: own Triton, FlashInfer, FA4) on an H200. FA4 and FlashInfer travel as two wheel
# parts (scripts/wheel_parts.py, README "FlashAttention-4 and FlashInfer"), one per back-to-back
# call, with results/ and reports/ left on the CPU box so a part fits beside the tree. A call
# whose parts are not yet whole runs only the gather (and, with K set, own CUTLASS GPU tests
# from the carried library cache). FlashInfer's JIT modules and FA4's compiled kernels are kept
# under /tmp, which a warm machine keeps, so the call that resumes the run does not build again.
set -u
t0=$(date +%s); C=${CALL:-call1}; ID=${ID:-fmha_decode_serving}
. scripts/device_env.sh || exit 1
export TRITON_INTERPRET=0 TRITON_CACHE_DIR=/tmp/tcache FLASHINFER_WORKSPACE_BASE=/tmp/fi \
  FLASH_ATTENTION_CUTE_DSL_CACHE_ENABLED=1
export $(cat .cache/gitid)
R=results/_scratch/gpu; L=$R/_logs; mkdir -p $L
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm,driver_version --format=csv,noheader | tee $L/$C-gpu.txt
if [ -n "${K:-}" ]; then  # own CUTLASS GPU tests while the wheel parts travel
  left=$(( ${BUDGET:-300} - ($(date +%s) - t0) ))
  timeout $left python3 -m pytest -v -m gpu tests/cutlass -p no:cacheprovider -rs -k "$K" > $L/$C-cutlass_gpu_tests.txt 2>&1
  echo "tests rc=$? t=$(( $(date +%s) - t0 ))"
  grep -E "FAILED|ERROR" $L/$C-cutlass_gpu_tests.txt | head -20; grep -c PASSED $L/$C-cutlass_gpu_tests.txt; tail -3 $L/$C-cutlass_gpu_tests.txt
fi
if python3 -c "import flash_attn.cute, flashinfer" 2>/dev/null; then
  left=$(( ${BUDGET:-560} - ($(date +%s) - t0) ))
  timeout -s INT $left python3 -m harness.cli run sweep=fmha_decode_serving results_dir=$R run_id=$ID \
    progress=false > $L/$ID-$C.txt 2>&1
  echo "$ID rc=$? t=$(( $(date +%s) - t0 ))"; tail -8 $L/$ID-$C.txt | cut -c1-160
  cp $R/$ID/_workers/worker-0.log $L/$ID-$C-worker.log 2>/dev/null
else
  echo "FA4 / FlashInfer not whole yet: no sweep this call"
fi
tar czf $OUT/results.tgz $R; tar czf $OUT/tune-cache.tgz -C $HARNESS_CACHE_DIR tune 2>/dev/null
echo "t=$(( $(date +%s) - t0 ))"
exit 0
