# The Gluon decode's fused and PDL split merges on a lent GPU, one call (about 120 s on a cold H200):
# its GPU tests (tests/gpu/test_decode_gluon_fused_gpu.py: fp32, the reduction kernel's merge,
# 200 bit-identical launches), then, only if they pass, scripts/decode_merge_probe.py over the
# committed batch-16 serving runs' Gluon split picks at KV 4k (burst timer: for deciding, not
# for citing). Logs and the probe's table go to $OUT/logs. Carry .whl and .cache.
#   GPU=h200 bash scripts/fused_merge_call.sh
set -u
: "${GPU:?GPU=h100|h200}"
t0=$(date +%s)
export TRITON_INTERPRET=0 TRITON_CACHE_DIR=/tmp/tcache
# DEVICE_ENV=0: the caller's python3 as it is (the CPU test of this script's outcomes)
[ "${DEVICE_ENV:-1}" = 0 ] || . scripts/device_env.sh >/dev/null || exit 1
[ -f .cache/gitid ] && export $(cat .cache/gitid)
RUNS=${RUNS:-"results/$GPU/fmha_decode_serving-b16-ragged-s70 results/$GPU/fmha_decode_serving-b16-s66"}
# (session 87) the committed runs it reads must be in the tree: `device_slim.py aside --keep` them
for r in $RUNS; do [ -f "$r/rows.parquet" ] || { echo "missing $r (device_slim.py aside --keep $r)"; exit 2; }; done
L=${OUT:-/tmp}/logs; mkdir -p "$L"
nvidia-smi --query-gpu=name,uuid,power.limit,driver_version --format=csv,noheader | tee "$L/gpu.txt"
timeout -k 5 ${TEST_S:-150} python3 -m pytest -q -m gpu tests/gpu/test_decode_gluon_fused_gpu.py \
  -p no:cacheprovider -x --durations=5 > "$L/tests.txt" 2>&1
rc=$?; echo "tests rc=$rc t=$(( $(date +%s) - t0 )): $(tail -1 "$L/tests.txt")"
if [ $rc -ne 0 ]; then
  grep -E "^(E |FAILED|ERROR)" "$L/tests.txt" | head -20 | cut -c1-300
  exit 1  # a merge that is wrong is not timed
fi
timeout -k 5 ${PROBE_S:-240} python3 scripts/decode_merge_probe.py $RUNS --kv 4096 --limit 12 \
  > "$L/probe.txt" 2>&1
echo "probe rc=$? t=$(( $(date +%s) - t0 ))"
grep -v Warn "$L/probe.txt" | cut -c1-220
