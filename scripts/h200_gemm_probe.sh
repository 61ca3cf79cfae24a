#!/usr/bin/env bash
# GEMM GPU test (cold-L2 tuning), fixed bandwidth probe, ceilings with 4096^3, then gemm_llama.
set -u
. scripts/device_env.sh || exit 1
R=results/_scratch/h200; L=$R/_logs; mkdir -p $L
TRITON_INTERPRET=0 timeout 120 python3 -m pytest -q -m gpu tests/kernels/test_triton_gemm.py -p no:cacheprovider > $L/gemm_gpu_test.txt 2>&1; tail -1 $L/gemm_gpu_test.txt
timeout 120 python3 -m harness.cli run sweep=probes_bandwidth results_dir=$R run_id=probes_bandwidth progress=false > $L/probes_bandwidth.txt 2>&1; tail -1 $L/probes_bandwidth.txt
timeout 180 python3 -m harness.cli ceilings results_dir=$R run_id=ceilings progress=false > $L/ceilings.txt 2>&1; tail -1 $L/ceilings.txt
timeout 300 python3 -m harness.cli run sweep=gemm_llama results_dir=$R run_id=gemm_llama progress=false > $L/gemm_llama.txt 2>&1; tail -1 $L/gemm_llama.txt
python3 -m harness.cli ceilings show=$R/ceilings,$R/probes_bandwidth > $L/tables.txt 2>&1
tar czf $OUT/results.tgz $R
