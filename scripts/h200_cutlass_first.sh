#!/usr/bin/env bash
# First GPU run of the own CUTLASS kernels (issue 5), with the bandwidth probe (issue 6), the
# re-tuned own Triton GEMM (issue 3) in the same gemm_llama run as cuBLAS, so ratios share a run,
# and the re-tuned own attention (issue 4).
# Needs the prebuilt libraries carried in .cache/cutlass (see README "Running on a lent GPU").
#   bash scripts/h200_cutlass_first.sh [seconds budget]
set -u
budget=${1:-560}
t0=$(date +%s)
. scripts/device_env.sh || exit 1
export HARNESS_CUTLASS_CACHE=${HARNESS_CUTLASS_CACHE:-$PWD/.cache/cutlass}
L=results/_scratch/h200/_logs; mkdir -p $L
TRITON_INTERPRET=0 timeout 150 python3 -m pytest -q -m gpu tests/cutlass > $L/cutlass_gpu_tests.txt 2>&1
echo "cutlass gpu tests rc=$? $(tail -1 $L/cutlass_gpu_tests.txt)"
left=$(( budget - ($(date +%s) - t0) ))
bash scripts/h200_measure.sh $left \
  "probes_bandwidth sweep=probes_bandwidth" \
  "gemm_llama-r2 sweep=gemm_llama 'sweep.groups.0.providers=[cublas,own-cutlass,own-triton]'" \
  "fmha_prefill-r2 sweep=fmha_prefill 'sweep.groups.0.providers=[sdpa-cudnn,sdpa-flash,own-triton,own-cutlass,own-cutlass-sm90]'" \
  "fmha_decode-r2 sweep=fmha_decode"
