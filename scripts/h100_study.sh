#!/usr/bin/env bash
# Issue 22's H100 runs on a lent nvidia-h100-x1, in two calls of < 10 min (carry .whl: hydra-core,
# omegaconf, antlr4; carry results/_scratch/h100 from call 1 so a cut run resumes in call 2):
#   GPU=h100 bash scripts/h100_study.sh 1   # ceilings, probes_bandwidth, fmha_decode, probes_latency
#   GPU=h100 bash scripts/h100_study.sh 2   # gemm_llama (cuBLAS, own Triton), fmha_prefill
# Rows come back as $OUT/results.tgz; copy the runs into results/h100/.
set -u
export GPU=h100
case $1 in
  1) bash scripts/h200_measure.sh 530 "ceilings ceilings" "probes_bandwidth sweep=probes_bandwidth" \
       "fmha_decode sweep=fmha_decode" "probes_latency sweep=probes_latency" ;;
  2) bash scripts/h200_measure.sh 530 "gemm_llama sweep=gemm_llama" "fmha_prefill sweep=fmha_prefill" ;;
  *) echo "usage: $0 1|2" >&2; exit 2 ;;
esac
