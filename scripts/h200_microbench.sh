#!/usr/bin/env bash
# Issue 6 on a lent H200, time-boxed and resumable:
#   bash scripts/h200_microbench.sh [seconds budget, default 540]
# GPU microbenchmark tests, `harness ceilings`, the bandwidth and latency probes, the ladder and
# the AOT resource report, then every table side by side ($OUT/tables.txt). Rows go to
# results/_scratch/h200 (git-ignored): carry it to the next call and run the same command again to
# finish whatever the budget cut short (finished points are kept). Rows and logs: $OUT/results.tgz.
set -u
. scripts/device_env.sh || exit 1
budget=${1:-540}
R=results/_scratch/h200; L=$R/_logs; mkdir -p $L
t0=$(date +%s)
left() { echo $(( budget - ($(date +%s) - t0) )); }
step() {  # step <name> <command...>: run it within what is left of the budget, log to $L/<name>.txt
  local name=$1; shift
  if [ "$(left)" -lt 20 ]; then echo "skip $name: out of time"; return 1; fi
  timeout -s INT "$(left)" "$@" > $L/$name.txt 2>&1; local rc=$?
  echo "$name rc=$rc $(tail -1 $L/$name.txt)"; return $rc
}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit --format=csv > $L/gpu.txt
[ -f $L/gpu_tests.done ] || { step gpu_tests env TRITON_INTERPRET=0 python3 -m pytest -q -m gpu \
  tests/microbench -p no:cacheprovider && touch $L/gpu_tests.done; }
step ceilings python3 -m harness.cli ceilings results_dir=$R run_id=ceilings progress=false
for s in probes_bandwidth probes_latency ladder; do
  step $s python3 -m harness.cli run sweep=$s results_dir=$R run_id=$s progress=false
done
[ -n "${SKIP_INSPECT:-}" ] || [ -f $L/inspect.done ] || { step inspect python3 -m harness.cli inspect results_dir=$R run_id=inspect \
  && touch $L/inspect.done; }
python3 -m harness.cli ceilings show=$R/ceilings,$R/probes_bandwidth,$R/probes_latency,$R/ladder > $OUT/tables.txt 2>&1
cp $L/inspect.txt $OUT/inspect.txt 2>/dev/null
tar czf $OUT/results.tgz $R
