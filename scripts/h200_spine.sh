#!/usr/bin/env bash
# Issue 2 on the H200: GPU tests (graph rotation vs flush), smoke through the GPU path, and the
# vendor baselines on gemm_square and fmha_prefill, each run twice (A/A), plus fmha_decode's
# vendor baselines. Optional first argument: a run-id suffix. Logs in $LOGS (default /tmp/logs).
set -u
. scripts/device_env.sh || exit 1
R=results/h200
S=${1:-}
L=${LOGS:-/tmp/logs}; mkdir -p $L
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit --format=csv,noheader
TRITON_INTERPRET=0 python3 -m pytest -q -s tests/gpu -p no:cacheprovider > $L/gpu_tests.txt 2>&1
grep -E "flush|rotation|hot |passed|failed" $L/gpu_tests.txt
harness list > $L/list.txt
harness run sweep=smoke results_dir=$R run_id=smoke-gpu$S progress=false > $L/smoke.txt 2>&1; tail -1 $L/smoke.txt
for rep in a b; do
  harness run sweep=gemm_square 'providers=[cublas,cublaslt-fp8]' results_dir=$R run_id=gemm_square-vendor$S-$rep progress=false > $L/gemm_$rep.txt 2>&1
  tail -1 $L/gemm_$rep.txt
  harness run sweep=fmha_prefill 'providers=[sdpa-cudnn,sdpa-flash,sdpa-efficient,flash-attn]' results_dir=$R run_id=fmha_prefill-vendor$S-$rep progress=false > $L/fmha_$rep.txt 2>&1
  tail -1 $L/fmha_$rep.txt
done
harness run sweep=fmha_decode 'providers=[sdpa-flash,sdpa-efficient,sdpa-cudnn,sdpa-math,flash-attn,sdpa-paged-gather]' results_dir=$R run_id=fmha_decode-vendor$S progress=false > $L/decode.txt 2>&1
tail -1 $L/decode.txt
python3 -m harness.cli compare $R/gemm_square-vendor$S-a $R/gemm_square-vendor$S-b --aa; python3 -m harness.cli compare $R/fmha_prefill-vendor$S-a $R/fmha_prefill-vendor$S-b --aa
[ -n "${NO_TAR:-}" ] || tar czf $OUT/results.tgz results/h200 -C $(dirname $L) $(basename $L)
