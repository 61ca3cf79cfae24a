# The Gluon decode's GPU tests and the split merge's, then compile ahead's (its workers with the
# real decode tuner, before the sweep's tune pass relies on them), for a call script to source
# before its sweep: `decode_gpu_tests LOG SECONDS` writes pytest's output to LOG, prints one line
# per step, and on a decode failure prints the failures and returns 1 (the caller packs its
# results and stops: a wrong kernel must not be timed). Compile ahead only saves time, so its
# failure does not stop the call: it prints why and sets COMPILE_AHEAD_OFF=compile_workers=0,
# which the caller adds to its sweep, so the tune pass compiles everything itself.
# On a cold machine the tests compile every Gluon tile first: session 66's 21 took 284 s and
# session 70's (more of them since) ran past 300 s, costing that call its sweep. A timeout is
# said apart from a failure, and `--durations` names the slow tests; a call script's TESTS=only
# runs them in a call of their own, whose Triton cache the next warm call reuses.
COMPILE_AHEAD_OFF=""
decode_gpu_tests() {
  local log=$1 limit=$2 rc
  timeout -k 10 "$limit" python3 -m pytest -q -m gpu tests/gpu/test_decode_gluon_gpu.py \
    tests/gpu/test_decode_gluon_fused_gpu.py \
    tests/gpu/test_decode_merge_gpu.py -p no:cacheprovider -x --durations=8 \
    ${GPU_TEST_XDIST:-} > "$log" 2>&1
  rc=$?; echo "tests rc=$rc t=$(( $(date +%s) - t0 )): $(tail -1 "$log")"
  if [ $rc -eq 124 ] && ! grep -qE "^(FAILED|ERROR)" "$log"; then
    echo "tests timed out at ${limit} s with no failure yet (a cold Triton cache compiles every"
    echo "tile): run them alone first (TESTS=only) and this call again on the warm machine"
    return 1
  fi
  if [ $rc -ne 0 ]; then
    grep -E "^(E |FAILED|ERROR)" "$log" | head -30 | cut -c1-400
    return 1
  fi
  local ahead=${log%.txt}-compile-ahead.txt
  timeout -k 10 180 python3 -m pytest -q -m gpu tests/gpu/test_compile_ahead_gpu.py \
    -p no:cacheprovider -x > "$ahead" 2>&1
  rc=$?; echo "compile ahead test rc=$rc t=$(( $(date +%s) - t0 )): $(tail -1 "$ahead")"
  if [ $rc -ne 0 ]; then
    grep -E "^(E |FAILED|ERROR)" "$ahead" | head -10 | cut -c1-400
    COMPILE_AHEAD_OFF="compile_workers=0"
    echo "compile ahead off for this call's sweep ($COMPILE_AHEAD_OFF)"
  fi
  return 0
}
