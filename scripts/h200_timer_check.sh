#!/usr/bin/env bash
# Issue 16 on a lent H200: the stream-holding timer checked, in three calls of < 10 min each
# (carry .whl: hydra-core, omegaconf, antlr4 and cuda-bench wheels; carry results/_scratch/h200
# from the call before, so the second call resumes and compares):
#   bash scripts/h200_timer_check.sh a        # hold off vs on at M in {1,16}, then A/A pass a
#   bash scripts/h200_timer_check.sh b        # A/A pass b, then scripts/aa_check.py on the pairs
#   bash scripts/h200_timer_check.sh xcheck   # harness crosscheck against nvbench (cuda-bench)
# Rows come back as $OUT/results.tgz (h200_measure.sh); copy the runs into results/h200/.
set -u
phase=$1
# the A/A set: main_gpu, gemm_llama at M 1..64, fmha_decode
small="'sweep.groups.0.product.m=[1,2,4,8,16,32,64]'"
case $phase in
  a)
    m116="'sweep.groups.0.product.m=[1,16]'"
    bash scripts/h200_measure.sh 560 "hold-off sweep=gemm_llama $m116 protocol.stream_hold=false" \
      "hold-on sweep=gemm_llama $m116" "aa-main-a sweep=main_gpu" \
      "aa-llama-a sweep=gemm_llama $small" "aa-decode-a sweep=fmha_decode"
    ;;
  b)
    bash scripts/h200_measure.sh 520 "aa-main-b sweep=main_gpu" \
      "aa-llama-b sweep=gemm_llama $small" "aa-decode-b sweep=fmha_decode"
    . scripts/device_env.sh
    R=results/_scratch/h200
    python3 scripts/aa_check.py $R/aa-main-a $R/aa-main-b $R/aa-llama-a $R/aa-llama-b \
      $R/aa-decode-a $R/aa-decode-b | tee $OUT/aa_check.txt
    ;;
  xcheck)
    . scripts/device_env.sh
    harness crosscheck results_dir=results/_scratch/h200 run_id=crosscheck 2>&1 | tee $OUT/crosscheck.log
    cp results/_scratch/h200/crosscheck/crosscheck.{md,parquet} results/_scratch/h200/crosscheck/run.json $OUT/
    ;;
  *) echo "usage: $0 a|b|xcheck" >&2; exit 2 ;;
esac
