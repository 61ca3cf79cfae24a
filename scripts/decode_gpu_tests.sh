# The Gluon decode's GPU tests, the split merge's and compile ahead's (its workers with the real
# decode tuner, before the sweep's tune pass relies on them), for a call script to source before its
# sweep: `decode_gpu_tests LOG SECONDS` writes pytest's output to LOG, prints one line, and on
# a failure prints the failures and returns 1 (the caller packs its results and stops).
decode_gpu_tests() {
  local log=$1 limit=$2 rc
  timeout -k 10 "$limit" python3 -m pytest -q -m gpu tests/gpu/test_decode_gluon_gpu.py \
    tests/gpu/test_decode_merge_gpu.py tests/gpu/test_compile_ahead_gpu.py -p no:cacheprovider -x \
    > "$log" 2>&1
  rc=$?; echo "tests rc=$rc t=$(( $(date +%s) - t0 )): $(tail -1 "$log")"
  [ $rc -eq 0 ] && return 0
  grep -E "^(E |FAILED|ERROR)" "$log" | head -30 | cut -c1-400
  return 1
}
