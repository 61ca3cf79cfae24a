#!/usr/bin/env bash
# On a 2-GPU H200 machine, inside one call (issue 8, with issues 3, 4, 5 and 6 riding along):
#   1. the bandwidth probe on GPU 0;
#   2. gemm_llama (cuBLAS + own Triton) sharded over every GPU: one worker per GPU, one run;
#   3. in parallel until the deadline:
#      GPU 1: every cuBLAS point again, alone (each point GPU 0 took in step 2 gets a GPU 1 twin:
#             do the GPUs agree within 3%?), then fmha_prefill (cuDNN, flash, own Triton, own
#             CUTLASS);
#      GPU 0: the own CUTLASS GPU tests, then gemm_llama cuBLAS vs own CUTLASS (libraries carried
#             in HARNESS_CUTLASS_CACHE).
# Rows land in results/_scratch/h200x2 and come back as $OUT/results.tgz.
#   bash scripts/h200x2_shard_check.sh [seconds budget, default 560]
set -u
deadline=$(( $(date +%s) + ${1:-560} ))
left() { echo $(( deadline - $(date +%s) )); }
. scripts/device_env.sh || exit 1
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export HARNESS_CUTLASS_CACHE=${HARNESS_CUTLASS_CACHE:-$PWD/.cache/cutlass}
R=results/_scratch/h200x2; L=$R/_logs; mkdir -p $L
# run <seconds> <log name> <harness run overrides...>: SIGINT at the limit (rows so far are kept)
run() {
  local t=$1 log=$2; shift 2
  if [ "$t" -lt 20 ]; then echo "$log: skipped, out of time"; return; fi
  local s=$(date +%s)
  timeout -s INT "$t" python3 -m harness.cli run results_dir=$R progress=false "$@" > $L/$log.txt 2>&1
  echo "$log rc=$? $(( $(date +%s) - s ))s: $(tail -1 $L/$log.txt)"
}
nvidia-smi -L > $L/gpus.txt; nvidia-smi topo -m >> $L/gpus.txt 2>&1; head -4 $L/gpus.txt
run 45 probes_bandwidth sweep=probes_bandwidth device=cuda:0 run_id=probes_bandwidth
run $(( $(left) - 200 < 300 ? $(left) - 200 : 300 )) gemm_llama_sharded sweep=gemm_llama devices=all run_id=gemm_llama-sharded-x2
( run 110 gemm_llama_cublas_gpu1 sweep=gemm_llama 'providers=[cublas]' device=cuda:1 run_id=gemm_llama-cublas-gpu1
  run $(left) fmha_prefill sweep=fmha_prefill device=cuda:1 run_id=fmha_prefill-r2 \
    'sweep.groups.0.providers=[sdpa-cudnn,sdpa-flash,own-triton,own-cutlass,own-cutlass-sm90]' ) &
( s=$(date +%s)
  CUDA_VISIBLE_DEVICES=0 TRITON_INTERPRET=0 timeout 60 python3 -m pytest -q -m gpu tests/cutlass > $L/cutlass_gpu_tests.txt 2>&1
  echo "cutlass tests rc=$? $(( $(date +%s) - s ))s: $(tail -1 $L/cutlass_gpu_tests.txt)"
  run $(left) gemm_llama_cutlass sweep=gemm_llama device=cuda:0 run_id=gemm_llama-cutlass \
    'sweep.groups.0.providers=[cublas,own-cutlass]' ) &
wait
tar czf $OUT/results.tgz $R
