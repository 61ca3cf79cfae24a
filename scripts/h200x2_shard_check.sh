#!/usr/bin/env bash
# On a 2-GPU H200 machine, time-boxed (issue 8, with issues 3, 5 and 6 riding along):
#   1. the bandwidth probe on GPU 0;
#   2. gemm_llama (cuBLAS + own Triton) sharded over every GPU: one worker per GPU, one run;
#   3. in parallel: GPU 1 re-times every cuBLAS point alone (so each point measured on GPU 0 in
#      step 2 has a GPU 1 twin: do the GPUs agree within 3%?), while GPU 0 runs the own CUTLASS
#      GPU tests and gemm_llama cuBLAS vs own CUTLASS (libraries carried in HARNESS_CUTLASS_CACHE).
# Rows land in results/_scratch/h200x2 and come back as $OUT/results.tgz.
set -u
. scripts/device_env.sh || exit 1
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export HARNESS_CUTLASS_CACHE=${HARNESS_CUTLASS_CACHE:-$PWD/.cache/cutlass}
R=results/_scratch/h200x2; L=$R/_logs; mkdir -p $L
run() { python3 -m harness.cli run results_dir=$R progress=false "$@"; }
nvidia-smi -L > $L/gpus.txt; nvidia-smi topo -m >> $L/gpus.txt 2>&1; head -4 $L/gpus.txt
timeout ${T1:-45} bash -c "$(declare -f run); run sweep=probes_bandwidth device=cuda:0 run_id=probes_bandwidth" > $L/probes_bandwidth.txt 2>&1
echo "probes rc=$? $(tail -1 $L/probes_bandwidth.txt)"
s=$(date +%s)
timeout -s INT ${T2:-300} bash -c "$(declare -f run); run sweep=gemm_llama devices=all run_id=gemm_llama-sharded-x2" > $L/gemm_llama_sharded.txt 2>&1
echo "sharded rc=$? wall=$(( $(date +%s) - s ))s $(tail -1 $L/gemm_llama_sharded.txt)"
(timeout -s INT ${T3:-150} bash -c "$(declare -f run); run sweep=gemm_llama 'providers=[cublas]' device=cuda:1 run_id=gemm_llama-cublas-gpu1" > $L/gemm_llama_cublas_gpu1.txt 2>&1
 echo "gpu1 cublas rc=$? $(tail -1 $L/gemm_llama_cublas_gpu1.txt)") &
(CUDA_VISIBLE_DEVICES=0 TRITON_INTERPRET=0 timeout 60 python3 -m pytest -q -m gpu tests/cutlass > $L/cutlass_gpu_tests.txt 2>&1
 echo "cutlass tests rc=$? $(tail -1 $L/cutlass_gpu_tests.txt)"
 timeout -s INT $(( ${T3:-150} - 60 )) bash -c "$(declare -f run); run sweep=gemm_llama 'sweep.groups.0.providers=[cublas,own-cutlass]' device=cuda:0 run_id=gemm_llama-cutlass" > $L/gemm_llama_cutlass.txt 2>&1
 echo "cutlass gemm rc=$? $(tail -1 $L/gemm_llama_cutlass.txt)") &
wait
tar czf $OUT/results.tgz $R
