#!/usr/bin/env bash
# Issue 2 on the H200: vendor baselines on gemm_square and fmha_prefill, each run twice
# (A/A reproducibility), plus the smoke sweep through the GPU path. Results tarred to $OUT.
set -u
. scripts/device_env.sh || exit 1
R=results/h200
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit --format=csv
harness list | tee $OUT/list.txt | head -3
harness run sweep=smoke results_dir=$R run_id=smoke-gpu progress=false > $OUT/smoke.txt 2>&1; tail -3 $OUT/smoke.txt
for rep in a b; do
  harness run sweep=gemm_square 'providers=[cublas,cublaslt-fp8]' results_dir=$R run_id=gemm_square-vendor-$rep progress=false > $OUT/gemm_$rep.txt 2>&1
  tail -2 $OUT/gemm_$rep.txt
  harness run sweep=fmha_prefill 'providers=[sdpa-cudnn,sdpa-flash,sdpa-efficient,flash-attn]' results_dir=$R run_id=fmha_prefill-vendor-$rep progress=false > $OUT/fmha_$rep.txt 2>&1
  tail -2 $OUT/fmha_$rep.txt
done
tar czf $OUT/results.tgz $R
cat $OUT/gemm_a.txt | head -40
cat $OUT/fmha_a.txt | head -70
