#!/usr/bin/env bash
# On a 2-GPU H200 machine, time-boxed: the bandwidth probe (GPU 0), the NCCL collectives preset
# (2 ranks), then gemm_llama sharded over every GPU (one worker per GPU, one merged run).
set -u
. scripts/device_env.sh || exit 1
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
R=results/_scratch/h200x2; L=$R/_logs; mkdir -p $L
nvidia-smi -L > $L/gpus.txt; nvidia-smi topo -m >> $L/gpus.txt 2>&1; cat $L/gpus.txt | head -8
timeout ${T1:-45} python3 -m harness.cli run sweep=probes_bandwidth device=cuda:0 results_dir=$R run_id=probes_bandwidth progress=false > $L/probes_bandwidth.txt 2>&1; tail -1 $L/probes_bandwidth.txt
timeout ${T2:-80} python3 -m harness.cli run sweep=collectives 'providers=[nccl]' results_dir=$R run_id=collectives-h200x2 progress=false > $L/collectives.txt 2>&1; tail -1 $L/collectives.txt
timeout -s INT ${T3:-160} python3 -m harness.cli run sweep=gemm_llama devices=all results_dir=$R run_id=gemm_llama-sharded-x2 progress=false > $L/gemm_llama_sharded.txt 2>&1; tail -1 $L/gemm_llama_sharded.txt
tar czf $OUT/results.tgz $R
