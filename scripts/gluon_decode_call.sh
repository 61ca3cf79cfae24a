# The Gluon decode (TMA producer warp, wgmma consumer, persistent CTAs) on a lent sm_90 GPU in
# one call: its GPU tests first (every tile against fp32 with NaN past each sequence's end;
# the fused merge's tests beside them), then issue 21.3's serving grid at batch 16 with
# own-triton (the tuner times the Gluon tiles beside the `tl` ones) and own-triton-no-tma (the
# `tl` kernel alone) in one run, so the two compare on one machine; last a short table.
#   GPU=h200 BUDGET=540 bash scripts/gluon_decode_call.sh        (carry .whl)
# Again with results/_scratch/<gpu> carried resumes what the budget cut (TESTS=0 skips the
# tests). ID names the run (default decode-gluon-<date>); BATCH the batch sizes (default [16]);
# OVR adds overrides.
set -u
: "${GPU:?GPU=h100|h200}"
t0=$(date +%s)
export TRITON_INTERPRET=0 TRITON_CACHE_DIR=/tmp/tcache
[ -f .cache/gitid ] && export $(cat .cache/gitid)
. scripts/device_env.sh || exit 1
ID=${ID:-decode-gluon-$(date +%Y%m%d)}
R=results/_scratch/$GPU; L=$R/_logs; mkdir -p $L
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm,driver_version --format=csv,noheader | tee -a $L/$ID-gpu.txt
. scripts/decode_gpu_tests.sh
if [ "${TESTS:-1}" = 1 ] && ! decode_gpu_tests $L/$ID-gpu-tests.txt 240; then
  tar czf $OUT/results.tgz $R; exit 1
fi
left=$(( ${BUDGET:-540} - ($(date +%s) - t0) ))
timeout -k 15 -s INT $((left + 60)) python3 -m harness.cli run sweep=fmha_decode_serving \
  'sweep.groups.0.providers=[own-triton,own-triton-no-tma]' "sweep.groups.0.product.batch=${BATCH:-[16]}" \
  results_dir=$R run_id=$ID progress=false stop_after_s=$left ${OVR:-} $COMPILE_AHEAD_OFF \
  > $L/$ID.txt 2>&1
echo "$ID rc=$? (75: stopped at the budget) t=$(( $(date +%s) - t0 )): $(tail -1 $L/$ID.txt | cut -c1-200)"
tar czf $OUT/results.tgz $R
python3 scripts/gluon_decode_table.py $R/$ID 2>&1 | tail -25
exit 0
