# Session 107's calls (BUDGET=s STEPS="..." bash results/h200/_logs/session107/call-start.sh),
# back to back to one warm machine, on an H200 or an H100 (runs -s<SESSION> on an H200, -s<SESSION>h on an
# H100). STEPS, in this order, each given the budget left:
#   tests  the Gluon decode's GPU tests (scripts/decode_gpu_tests.sh: every candidate kind and
#          merge against the fp32 reference, over NaN-laden paged caches), the first on the
#          early item start (EARLY_START, session 107); the outcome is kept in /tmp for a later
#          call to the same machine
#   roofs  the card's ceilings and read-once probe (the H200's owed item 0)
#   ab     what the early start is worth: own-triton beside own-triton-no-early-start at
#          batch 16, KV 4k (32 points, each rung tuned under its own key), one run
#          (fmha_decode_start-*)
#   grid   issue 21.3's batch-16 grid, own Triton alone (64 points): the ceiling share of
#          today's kernel (fmha_decode_serving-b16-own-*)
# ab and grid run only where the tests passed on this machine (a wrong kernel is not timed), or
# with TESTED=1: the tests passed on an H100 in session 107 (31 of 31, GPU-a38d2b5d, tree
# 336f3eb); with no decode source changed since, a fresh machine need not spend its first
# 330+ s (a cold Triton cache) on them again. Every row is still checked against fp32.
set -u
t0=$(date +%s); B=${BUDGET:-540}
export TRITON_INTERPRET=0
. scripts/device_env.sh > /dev/null || exit 1
. scripts/decode_gpu_tests.sh
case "$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)" in
  *H200*) gpu=h200; sfx=s${SESSION:-107} ;;
  *) gpu=h100; sfx=s${SESSION:-107}h ;;
esac
L=results/_scratch/$gpu/_logs; mkdir -p $L
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm,driver_version --format=csv,noheader | tee -a $L/gpu-$sfx.txt
left() { echo $(( B - ($(date +%s) - t0) )); }
STEPS=" ${STEPS:-tests} "
if [[ $STEPS == *" tests "* ]]; then
  t=$(left); t=$(( t < ${TEST_S:-330} ? t : ${TEST_S:-330} ))
  decode_gpu_tests $L/decode-gpu-tests-$sfx.txt $t; echo $? > /tmp/start-tests-rc
fi
run() {  # gpu_measure.sh with what is left, less a margin for the packing below
  local m=$(( $(left) - 20 ))
  if [ $m -gt 60 ]; then GPU=$gpu bash scripts/gpu_measure.sh $m "$@"; else echo "$1: out of time ($m s left)"; fi
}
if [[ $STEPS == *" roofs "* ]]; then
  run "ceilings-$sfx ceilings" "read_once-$sfx sweep=probes_read_once"
fi
tested=$(cat /tmp/start-tests-rc 2>/dev/null || echo "not run on this machine")
[ "${TESTED:-}" = 1 ] && tested=0
if [[ $STEPS == *" ab "* || $STEPS == *" grid "* ]] && [ "$tested" != 0 ]; then
  echo "ab and grid left out: the decode tests' rc is $tested"
else
  if [[ $STEPS == *" ab "* ]]; then
    run "fmha_decode_start-$sfx sweep=fmha_decode_serving 'sweep.groups.0.providers=[own-triton,own-triton-no-early-start]' 'sweep.groups.0.product.batch=[16]' 'sweep.groups.0.product.kv_len=[4096]' $COMPILE_AHEAD_OFF"
  fi
  if [[ $STEPS == *" grid "* ]]; then
    run "fmha_decode_serving-b16-own-$sfx sweep=fmha_decode_serving 'sweep.groups.0.providers=[own-triton]' 'sweep.groups.0.product.batch=[16]' $COMPILE_AHEAD_OFF"
  fi
fi
tar czf $OUT/tune-cache.tgz -C $HARNESS_CACHE_DIR tune 2>/dev/null
tar czf $OUT/results.tgz results/_scratch 2>/dev/null
echo "t=$(( $(date +%s) - t0 ))"
