# Session 82, call 2 (nvidia-h200): own Triton's split-K with the partials summed by a second
# launch (GemmConfig.reduce_apart), written after call 1's ncu at 256x2304x16384. Its GPU tests;
# ncu of the 128x256 split-7 tile in one launch beside the same tile summed apart (and at M 128,
# split 14 as the model offers it); then Llama-3.1-405B decode's five GEMMs (gemm_llama with the preset's N and K) at M 64-512 (the mid band
# the twins are offered in; the tune cache is stale for every GEMM after this change), then
# gemm_llama's mid band (M 128-512) with cuBLAS and own Triton. Carry `.whl` and `.cache`.
set -u
nvidia-smi --query-gpu=uuid,power.limit,clocks.max.sm --format=csv,noheader
t0=$(date +%s)
. scripts/device_env.sh >/dev/null || exit 1
TRITON_INTERPRET=0 timeout 150 python3 -m pytest -q -s -n 0 -m gpu tests/gpu/test_split_apart_gemm_gpu.py > $OUT/split-apart-gpu-tests.txt 2>&1
echo "gpu tests rc=$? t=$(( $(date +%s) - t0 ))"; tail -3 $OUT/split-apart-gpu-tests.txt
bash scripts/gemm_ncu_call.sh \
  "apart256 256 2304 16384 128x256x64s4k7w8 128x256x64s4k7w8a" \
  "apart128 128 2304 16384 128x256x64s4k14w8 128x256x64s4k14w8a 128x128x64s6k7w8a"
left() { echo $(( ${BUDGET:-540} - ($(date +%s) - t0) )); }
GPU=h200 bash scripts/gpu_measure.sh $(left) "llama3_405b_gemm-apart-s82 sweep=gemm_llama 'sweep.groups.0.zip.n=[2304,16384,13312,16384,16032]' 'sweep.groups.0.zip.k=[16384,2048,16384,6656,16384]' 'sweep.groups.0.product.m=[64,128,256,512]'"
GPU=h200 bash scripts/gpu_measure.sh $(left) "gemm_llama-mid-apart-s82 sweep=gemm_llama 'sweep.groups.0.providers=[cublas,own-triton]' 'sweep.groups.0.product.m=[128,256,512]'"
