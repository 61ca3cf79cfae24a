#!/usr/bin/env bash
# The stream-holding timer checked on a lent GPU, in two calls of < 10 min each (carry .whl:
# hydra-core, omegaconf, antlr4 and cuda-bench wheels; carry results/_scratch/h200 from call a so
# call b resumes and compares):
#   bash scripts/h200_timer_check.sh a   # hold off vs on at M in {1,16}; A/A pass a
#   bash scripts/h200_timer_check.sh b   # A/A pass b, scripts/aa_check.py, harness crosscheck
# The A/A set is gemm_llama at M in {1,4,16,64} (cuBLAS and own Triton: 64 points, 2-80 us),
# the range where host launch latency could enter the window. Rows come back as
# $OUT/results.tgz (h200_measure.sh); copy the runs into results/<gpu>/timer_check/.
set -u
phase=$1
aa="sweep=gemm_llama 'sweep.groups.0.product.m=[1,4,16,64]'"
case $phase in
  a)
    m116="sweep=gemm_llama 'sweep.groups.0.product.m=[1,16]'"
    bash scripts/h200_measure.sh 540 "hold-off $m116 protocol.stream_hold=false" \
      "hold-on $m116" "aa-a $aa"
    ;;
  b)
    bash scripts/h200_measure.sh 300 "aa-b $aa"
    . scripts/device_env.sh
    R=results/_scratch/h200
    { python3 -m harness.cli compare $R/aa-a $R/aa-b --aa; python3 -m harness.cli compare $R/hold-off $R/hold-on --aa; } | tee $OUT/aa_check.txt
    timeout 240 python3 -m harness.cli crosscheck results_dir=$R run_id=crosscheck 2>&1 |
      tee $OUT/crosscheck.log
    cp $R/crosscheck/crosscheck.{md,parquet} $R/crosscheck/run.json $OUT/
    tar czf $OUT/results.tgz $R
    ;;
  *) echo "usage: $0 a|b" >&2; exit 2 ;;
esac
