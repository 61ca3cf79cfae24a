# Session 86, calls 2 and on (nvidia-h200): call 1's gemm_llama-s86 resumed. Carry `.whl`,
# `.cache`, with the run's scratch folder packed into `.cache/scratch/s86.tar.xz` (the folder itself,
# 6.4 MB of point files, tipped the tree past the 64 MiB a call carries):
#   tar cJf .cache/scratch/s86.tar.xz -C results/_scratch/h200 gemm_llama-s86
set -u
mkdir -p results/_scratch/h200 && tar xJf .cache/scratch/s86.tar.xz -C results/_scratch/h200 || exit 1
. scripts/device_env.sh >/dev/null || exit 1
export TRITON_INTERPRET=0 HARNESS_CACHE_DIR=/tmp/hcache TRITON_CACHE_DIR=/tmp/tcache
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm,driver_version --format=csv,noheader | tee $OUT/gpu.txt
GPU=h200 bash scripts/gpu_measure.sh ${BUDGET:-540} \
  "gemm_llama-s86 sweep=gemm_llama 'sweep.groups.0.providers=[cublas,own-triton]' max_points=240"
