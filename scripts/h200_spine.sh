#!/usr/bin/env bash
# Issue 2 on the H200: GPU tests (graph rotation vs flush), smoke through the GPU path, and the
# vendor baselines on gemm_square and fmha_prefill, each run twice (A/A). Results tarred to $OUT.
set -u
. scripts/device_env.sh || exit 1
R=results/h200
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit --format=csv
TRITON_INTERPRET=0 python3 -m pytest -q -s tests/gpu -p no:cacheprovider 2>&1 | tail -8 | tee $OUT/gpu_tests.txt
harness list > $OUT/list.txt
harness run sweep=smoke results_dir=$R run_id=smoke-gpu progress=false > $OUT/smoke.txt 2>&1; tail -1 $OUT/smoke.txt
for rep in a b; do
  harness run sweep=gemm_square 'providers=[cublas,cublaslt-fp8]' results_dir=$R run_id=gemm_square-vendor-$rep progress=false > $OUT/gemm_$rep.txt 2>&1
  tail -1 $OUT/gemm_$rep.txt
  harness run sweep=fmha_prefill 'providers=[sdpa-cudnn,sdpa-flash,sdpa-efficient,flash-attn]' results_dir=$R run_id=fmha_prefill-vendor-$rep progress=false > $OUT/fmha_$rep.txt 2>&1
  tail -1 $OUT/fmha_$rep.txt
done
tar czf $OUT/results.tgz $R
python3 scripts/aa_check.py $R/gemm_square-vendor-a $R/gemm_square-vendor-b $R/fmha_prefill-vendor-a $R/fmha_prefill-vendor-b
