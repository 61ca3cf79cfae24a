# Owed after session 88 (nvidia-h200; the H100 likewise with GPU=h100): own CUTLASS's 128x224
# wave-filling tiles (alone and in 2x1 clusters), offered to the mid band's tuner in session 88
# and prebuilt on the CPU box (.cache/cutlass.tar.xz), not yet run on a GPU.
# 1. their GPU tests against fp32 (bf16 nt and nn; every run mode and raster);
# 2. gemm_llama's N 28672 and 57344 at M 128-1024 beside cuBLAS (8 shapes), where 128x224
#    tiles fill 97% of whole waves and session 88 read own CUTLASS at 0.937-0.998x.
# Carry `.whl` and `.cache` (INC=1: the headers, for any library not prebuilt).
set -u
t0=$(date +%s)
. scripts/device_env.sh >/dev/null || exit 1
export TRITON_INTERPRET=0 HARNESS_CACHE_DIR=/tmp/hcache TRITON_CACHE_DIR=/tmp/tcache
export $(cat .cache/gitid)
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm,driver_version --format=csv,noheader | tee $OUT/gpu.txt
timeout 200 python3 -m pytest -m gpu -q -p no:cacheprovider tests/cutlass/test_gpu_cutlass.py \
  -k "128x224" > $OUT/cutlass-224-gpu-tests.txt 2>&1
rc=$?; echo "tests rc=$rc t=$(( $(date +%s) - t0 ))"; tail -3 $OUT/cutlass-224-gpu-tests.txt
[ $rc -eq 0 ] || { echo "the tests failed: no timing"; exit 0; }
left=$(( ${BUDGET:-540} - $(date +%s) + t0 ))
G='{op: gemm, providers: [cublas, own-cutlass], product: {m: [128, 256, 512, 1024]}, zip: {n: [28672, 57344], k: [4096, 8192]}, fixed: {dtype: bf16, layout: nt}}'
GPU=${GPU:-h200} bash scripts/gpu_measure.sh $left "gemm-224-${RUN:-s89} sweep=gemm_llama 'sweep.groups=[$G]'"
python3 scripts/gemm_ratio_table.py results/_scratch/${GPU:-h200}/gemm-224-${RUN:-s89} 2>&1 | tail -12
