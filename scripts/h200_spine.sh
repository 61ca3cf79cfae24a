#!/usr/bin/env bash
# Issue 2 on the H200: GPU tests (graph rotation vs flush), smoke through the GPU path, and the
# vendor baselines on gemm_square and fmha_prefill, each run twice (A/A), plus fmha_decode's
# vendor baselines. Optional first argument: a run-id suffix. Results tarred to $OUT.
set -u
. scripts/device_env.sh || exit 1
R=results/h200
S=${1:-}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit --format=csv,noheader
TRITON_INTERPRET=0 python3 -m pytest -q -s tests/gpu -p no:cacheprovider > $OUT/gpu_tests.txt 2>&1
grep -E "flush|rotation|hot |passed|failed" $OUT/gpu_tests.txt
harness list > $OUT/list.txt
harness run sweep=smoke results_dir=$R run_id=smoke-gpu$S progress=false > $OUT/smoke.txt 2>&1; tail -1 $OUT/smoke.txt
for rep in a b; do
  harness run sweep=gemm_square 'providers=[cublas,cublaslt-fp8]' results_dir=$R run_id=gemm_square-vendor$S-$rep progress=false > $OUT/gemm_$rep.txt 2>&1
  tail -1 $OUT/gemm_$rep.txt
  harness run sweep=fmha_prefill 'providers=[sdpa-cudnn,sdpa-flash,sdpa-efficient,flash-attn]' results_dir=$R run_id=fmha_prefill-vendor$S-$rep progress=false > $OUT/fmha_$rep.txt 2>&1
  tail -1 $OUT/fmha_$rep.txt
done
harness run sweep=fmha_decode 'providers=[sdpa-flash,sdpa-efficient,sdpa-cudnn,sdpa-math,flash-attn,sdpa-paged-gather]' results_dir=$R run_id=fmha_decode-vendor$S progress=false > $OUT/decode.txt 2>&1
tail -1 $OUT/decode.txt
python3 scripts/aa_check.py $R/gemm_square-vendor$S-a $R/gemm_square-vendor$S-b $R/fmha_prefill-vendor$S-a $R/fmha_prefill-vendor$S-b
