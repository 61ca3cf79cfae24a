# Session 59 (GPU=h100 CALL=callN BUDGET=s ID=run OVR=overrides): the H100's rest of issue
# 21.3's serving decode grid (sweeps/fmha_decode_serving: own Triton, FlashInfer, FA4), as
# session 58's script (results/h200/_logs/session58/serving-s58.sh): the 28 rows of batch 16
# that `fmha_decode_serving-b16-s58` did not reach (its folder carried, so only those run), then
# batch 64 as `fmha_decode_serving-b64-s59`. FA4 and FlashInfer travel as two wheel parts, one
# per back-to-back call to one warm machine (call 1 carried part 1 beside the GEMM probe); while
# they are not whole a run does its tune pass alone (tune_only=true).
set -u
t0=$(date +%s); C=${CALL:-call1}; ID=${ID:?run id}; B=${BUDGET:-520}
export TRITON_INTERPRET=0 TRITON_CACHE_DIR=/tmp/tcache FLASHINFER_WORKSPACE_BASE=/tmp/fi \
  FLASH_ATTENTION_CUTE_DSL_CACHE_ENABLED=1
. scripts/device_env.sh || exit 1
export $(cat .cache/gitid)
R=results/_scratch/$GPU; L=$R/_logs; mkdir -p $L
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm,driver_version --format=csv,noheader | tee $L/$ID-$C-gpu.txt
python3 scripts/take_back.py --check-resume $R/$ID || { echo "$ID: not carried"; exit 0; }
extra="tune_only=true"
python3 -c "import flash_attn.cute, flashinfer" 2>/dev/null && extra=""
echo "vendors importable: $([ -z "$extra" ] && echo yes || echo no, tune pass only)"
left=$(( B - ($(date +%s) - t0) ))
timeout -k 15 -s INT $((left + 90)) python3 -m harness.cli run sweep=fmha_decode_serving \
  results_dir=$R run_id=$ID progress=false stop_after_s=$left $extra ${OVR:-} > $L/$ID-$C.txt 2>&1
echo "$ID rc=$? (75: stopped at the budget) t=$(( $(date +%s) - t0 ))"
grep -h "tune pass" $L/$ID-$C.txt | tail -2 | cut -c1-200; tail -3 $L/$ID-$C.txt | cut -c1-200
cp $R/$ID/_workers/worker-0.log $L/$ID-$C-worker.log 2>/dev/null
tar czf $OUT/results.tgz $R; tar czf $OUT/tune-cache.tgz -C $HARNESS_CACHE_DIR tune 2>/dev/null
echo "t=$(( $(date +%s) - t0 ))"
exit 0
