# Session 88 (nvidia-h200), calls 1-2: own CUTLASS's whole bf16 gemm_llama grid beside cuBLAS
# (issue 20.1's own CUTLASS bar; its libraries and tune entries stale since session 84). The
# libraries were prebuilt on the CPU box with the image's nvcc 13.0.88 (.cache/cutlass.tar.xz),
# so the run should load, not build, them: the log's prebuild lines say which. Own Triton's
# whole grid on this GPU kind is session 86's (`gemm_llama-s86`); leaving it out halves the
# device time. Call 2 on the warm machine resumes from the scratch folder the first left.
# Carry `.whl` and `.cache` (INC=1: the headers, in case a library is missing).
set -u
t0=$(date +%s)
echo "parquet in tree: $(find results -name '*.parquet' | wc -l)"
export TRITON_CACHE_DIR=/tmp/tcache
L=results/_scratch/h200/_logs; mkdir -p $L
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm,driver_version --format=csv,noheader | tee $L/${CALL:-call1}-gpu.txt
GPU=h200 bash scripts/gpu_measure.sh ${BUDGET:-530} \
  "gemm_llama-cutlass-s88 sweep=gemm_llama 'sweep.groups.0.providers=[cublas,own-cutlass]' max_points=240"
grep -h "tune pass\|prebuil\|built\|building" $L/gemm_llama-cutlass-s88.txt | cut -c1-200 | head
ls results/_scratch/h200/gemm_llama-cutlass-s88 2>/dev/null | wc -l
echo "t=$(( $(date +%s) - t0 ))"
exit 0
