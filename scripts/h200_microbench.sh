#!/usr/bin/env bash
# Issue 6 on the H200: GPU microbenchmark tests, measured ceilings, bandwidth and latency probes,
# the ladder, the AOT resource report, and every table side by side. Re-running it resumes: each
# run skips the points it already has (same run_id), so a run cut short can simply be repeated.
set -u
. scripts/device_env.sh || exit 1
R=results/h200
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit --format=csv | tee $OUT/gpu.txt
TRITON_INTERPRET=0 python3 -m pytest -q -m gpu tests/microbench -p no:cacheprovider 2>&1 | tail -6 | tee $OUT/microbench_gpu_tests.txt
harness ceilings results_dir=$R run_id=ceilings progress=false > $OUT/ceilings.txt 2>&1; tail -14 $OUT/ceilings.txt
for s in probes_bandwidth probes_latency ladder; do
  harness run sweep=$s results_dir=$R run_id=$s progress=false > $OUT/$s.txt 2>&1; tail -1 $OUT/$s.txt
done
harness inspect results_dir=$R run_id=inspect > $OUT/inspect.txt 2>&1; tail -1 $OUT/inspect.txt
harness ceilings show=$R/ceilings,$R/probes_bandwidth,$R/probes_latency,$R/ladder > $OUT/tables.txt 2>&1
tar czf $OUT/microbench.tgz $R/ceilings $R/probes_bandwidth $R/probes_latency $R/ladder $R/inspect
