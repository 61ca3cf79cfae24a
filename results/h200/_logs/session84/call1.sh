# Session 84, call 1 (nvidia-h200): own CUTLASS's 405B QKV decomposition (session 83's
# `sm90-streamk-128x144-c2x1`: 128x144 tiles in 2x1 clusters multicasting the weight tile, with
# CUTLASS's split-K) on a GPU for the first time. Its GPU tests (the machine's nvcc builds the
# library from the carried headers), then Llama-3.1-405B's five GEMMs at M 256 and 512 with
# cuBLAS, own CUTLASS and own Triton (the Gluon tune entries are stale: this run re-tunes them).
# The nt layout only (the sweep's; the nn library would cost another build). Carry `.whl` and
# `.cache` (INC=1's headers).
set -u
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm,driver_version --format=csv,noheader
t0=$(date +%s)
. scripts/device_env.sh >/dev/null || exit 1
export TRITON_INTERPRET=0 TRITON_CACHE_DIR=/tmp/tcache
mkdir -p results/_scratch/h200/_logs
timeout 260 python3 -m pytest -v -n 0 -m gpu tests/cutlass/test_gpu_cutlass.py -k "128x144 and nt" -p no:cacheprovider -rs \
  > results/_scratch/h200/_logs/cutlass-128x144-gpu-tests.txt 2>&1
echo "gpu tests rc=$? t=$(( $(date +%s) - t0 ))"; grep -E "PASSED|FAILED|ERROR|passed|failed" results/_scratch/h200/_logs/cutlass-128x144-gpu-tests.txt | tail -12
left() { echo $(( ${BUDGET:-540} - ($(date +%s) - t0) )); }
GPU=h200 bash scripts/gpu_measure.sh $(left) "llama3_405b_gemm-cluster-s84 sweep=gemm_llama 'sweep.groups.0.providers=[cublas,own-cutlass,own-triton]' 'sweep.groups.0.zip.n=[2304,16384,13312,16384,16032]' 'sweep.groups.0.zip.k=[16384,2048,16384,6656,16384]' 'sweep.groups.0.product.m=[256,512]'"
