# The A/B that judges own CUTLASS's decode twin rule (kernels/cutlass/decode_twin.py) over fresh
# processes: each process a `harness run` of cuBLAS, own-cutlass (the rule on) and
# own-cutlass-burst (the tuner's pick) at decode shapes, one after another on one machine; then
# `harness spread` (per point, the range over processes) and a per-provider count of slow rows.
# The tune decisions come from the carried cache (.cache/tune-<gpu>.tgz), so both own providers
# run the same decision and the processes time, not tune (the first process tunes what is missing).
#   GPU=h200 PROCS="1 2 3 4" BUDGET=540 bash scripts/twin_ab_call.sh   (carry .whl, .cache)
#   GPU=h200 PROCS="5 6 7 8" ... (carry results/_scratch/h200/twin_ab too)
# M and the (N, K) pairs: M_LIST (default [1,2,4,8,16]), N_LIST / K_LIST (zipped; default N 28672
# where the slow state was measured, 10240 and 8192 where one CTA per tile leaves SMs idle, and
# 4096x14336).
set -u
: "${GPU:?GPU=h100|h200}"
t0=$(date +%s)
. scripts/device_env.sh || exit 1
export TRITON_INTERPRET=0
[ -f .cache/gitid ] && export $(cat .cache/gitid)
R=results/_scratch/$GPU/twin_ab; L=results/_scratch/$GPU/_logs; mkdir -p $R $L
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm,driver_version --format=csv,noheader | tee -a $L/twin_ab-gpu.txt
for i in ${PROCS:-1 2 3 4 5 6 7 8}; do
  left=$(( ${BUDGET:-540} - ($(date +%s) - t0) ))
  [ $left -gt 60 ] || { echo "proc-$i: out of time"; break; }
  timeout -k 10 -s INT $left python3 -m harness.cli run sweep=gemm_llama \
    'sweep.groups.0.providers=[cublas,own-cutlass,own-cutlass-burst]' \
    "sweep.groups.0.product.m=${M_LIST:-[1,2,4,8,16]}" \
    "sweep.groups.0.zip.n=${N_LIST:-[28672,10240,8192,4096]}" \
    "sweep.groups.0.zip.k=${K_LIST:-[4096,8192,8192,14336]}" \
    results_dir=$R run_id=proc-$i progress=false stop_after_s=$((left - 40)) > $L/twin_ab-$i.txt 2>&1
  echo "proc-$i rc=$? (75: stopped at the budget) t=$(( $(date +%s) - t0 ))"
done
tar czf $OUT/results.tgz $R $L
tar czf $OUT/tune-cache.tgz -C "${HARNESS_CACHE_DIR:-/tmp/hcache}" tune 2>/dev/null
python3 -m harness.cli spread $R 2>&1 | tail -40
python3 scripts/twin_ab_table.py $R
exit 0
