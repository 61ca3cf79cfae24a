# Issue 21.3's serving decode grid on a lent GPU, one run per call
# (GPU=h200|h100 ID=run [CALL=callN BUDGET=s OVR=overrides] bash scripts/decode_serving_call.sh):
# sweeps/fmha_decode_serving (own Triton, FlashInfer, FA4). FA4 and FlashInfer travel as two
# wheel parts (scripts/wheel_parts.py split --mib 44), one per back-to-back call to one warm
# machine, with results/ and reports/ left on the CPU box so that a part fits beside the tree.
# While the wheels are not whole the run does its tune pass alone (tune_only=true), into the
# disk tune cache the warm machine keeps; once they are, it times every point (stop_after_s: a
# call that runs out leaves the rest pending for the next call, which carries
# results/_scratch/$GPU/$ID). OVR: more overrides (one batch size: the H100's halves). BUDGET is
# this run's alone: two runs chained in one call must fit the call's limit together (session
# 59's call 2 did not, and lost a batch-64 tune pass to the limit). TESTS=1 first runs the
# Gluon decode's GPU tests (and the split merge's), out of the same budget; a failure stops the
# call before the sweep (compile ahead's test only turns compile ahead off: decode_gpu_tests.sh).
# TESTS=only runs the tests alone with the whole BUDGET and no sweep: on a cold machine they take
# over 300 s (session 70), so they go in a call of their own before the wheel-part calls.
# ROOFS=1 first measures this card's HBM roofs into the same results folder, out of the same
# budget (12 + 38 points, 87 s on an H100 in session 100): `harness ceilings sweep=ceilings_hbm` as ceilings-hbm-$ID
# and the one-pass reads (sweep=probes_read_once) as read_once-$ID, so the grid's share of the
# ceiling is read against the card that timed it (H100s differ by up to 3%). Give it to the call
# that times the rows: a call that comes on a fresh machine comes on another card.
set -u
t0=$(date +%s); C=${CALL:-call1}; ID=${ID:?run id}; B=${BUDGET:-520}
export TRITON_INTERPRET=0 TRITON_CACHE_DIR=/tmp/tcache FLASHINFER_WORKSPACE_BASE=/tmp/fi \
  FLASH_ATTENTION_CUTE_DSL_CACHE_ENABLED=1
. scripts/device_env.sh || exit 1
export $(cat .cache/gitid)
R=results/_scratch/$GPU; L=$R/_logs; mkdir -p $L
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm,driver_version --format=csv,noheader | tee $L/$ID-$C-gpu.txt
python3 scripts/take_back.py --check-resume $R/$ID || { echo "$ID: not carried"; exit 0; }
. scripts/decode_gpu_tests.sh
if [ "${TESTS:-0}" = only ]; then
  decode_gpu_tests $L/$ID-$C-gpu-tests.txt $(( B - ($(date +%s) - t0) - 20 )); rc=$?
  tar czf $OUT/results.tgz $R; echo "TESTS=only: no sweep in this call (rc=$rc)"; exit $rc
fi
if [ "${TESTS:-0}" = 1 ] && ! decode_gpu_tests $L/$ID-$C-gpu-tests.txt 300; then
  tar czf $OUT/results.tgz $R; exit 1
fi
if [ "${ROOFS:-0}" = 1 ]; then
  python3 -m harness.cli ceilings sweep=ceilings_hbm results_dir=$R run_id=ceilings-hbm-$ID \
    progress=false > $L/ceilings-hbm-$ID-$C.txt 2>&1
  echo "ceilings-hbm-$ID rc=$? t=$(( $(date +%s) - t0 ))"; grep -h "hbm_read" $L/ceilings-hbm-$ID-$C.txt | head -1
  python3 -m harness.cli run sweep=probes_read_once results_dir=$R run_id=read_once-$ID \
    progress=false > $L/read_once-$ID-$C.txt 2>&1
  echo "read_once-$ID rc=$? t=$(( $(date +%s) - t0 ))"
fi
extra="tune_only=true"
python3 -c "import flash_attn.cute, flashinfer" 2>/dev/null && extra=""
echo "vendors importable: $([ -z "$extra" ] && echo yes || echo no, tune pass only)"
left=$(( B - ($(date +%s) - t0) ))
timeout -k 15 -s INT $((left + 90)) python3 -m harness.cli run sweep=fmha_decode_serving \
  results_dir=$R run_id=$ID progress=false stop_after_s=$left $extra ${OVR:-} \
  $COMPILE_AHEAD_OFF > $L/$ID-$C.txt 2>&1
echo "$ID rc=$? (75: stopped at the budget) t=$(( $(date +%s) - t0 ))"
grep -h "tune pass" $L/$ID-$C.txt | tail -2 | cut -c1-200; tail -3 $L/$ID-$C.txt | cut -c1-200
cp $R/$ID/_workers/worker-0.log $L/$ID-$C-worker.log 2>/dev/null
tar czf $OUT/results.tgz $R; tar czf $OUT/tune-cache.tgz -C $HARNESS_CACHE_DIR tune 2>/dev/null
echo "t=$(( $(date +%s) - t0 ))"
# session 68 lost a 544 s tune pass to this: the next call met a cold machine, and the cache
# this call filled had not been taken back
echo "before the next call, even back to back: python3 scripts/take_back.py <files_at> --root ."
exit 0
