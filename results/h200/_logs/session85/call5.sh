# Session 85, call 5 (nvidia-h200): the Gluon GEMM's 128x256 and 256x128 tiles with C staged by
# halves (C_HALVES, gemm_gluon._halves: two equal N parts leaving through one buffer in turn, so
# four stages and a TMA-store epilogue fit, where the whole-tile buffer left C to direct stores).
# 1. the Gluon GEMM's GPU tests (every candidate, bf16 both B layouts and fp8, against fp32;
#    the halves tiles are candidates at 1000x4096x4096 and 2048x2048x256);
# 2. the capped probe at three fp8 shapes and bf16 8192^3 (the halves tiles pinned beside
#    cuBLAS / cuBLASLt and the production pick);
# 3. call 2's sweep again (fp8, M 2048-8192 x three weights, own-triton beside its no-gluon rung
#    and both cuBLASLt rows), now with the halves tiles among the Gluon candidates.
# Carry `.whl` and `.cache`.
set -u
t0=$(date +%s)
. scripts/device_env.sh >/dev/null || exit 1
export TRITON_INTERPRET=0 HARNESS_CACHE_DIR=/tmp/hcache TRITON_CACHE_DIR=/tmp/tcache
export $(cat .cache/gitid)
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm,driver_version --format=csv,noheader | tee $OUT/gpu.txt
timeout 150 python3 -m pytest -m gpu -q -p no:cacheprovider tests/gpu/test_gluon_gemm_gpu.py \
  -k "every_candidate or fp8_every" > $OUT/gluon-gemm-gpu-tests.txt 2>&1
echo "tests rc=$? t=$(( $(date +%s) - t0 ))"; tail -3 $OUT/gluon-gemm-gpu-tests.txt
timeout 130 python3 scripts/gluon_tile_probe.py 4096x6144x4096 4096x8192x8192 8192x6144x4096 \
  --fp8 --capped --top 3 > $OUT/halves-probe-fp8-capped.txt 2>&1
echo "probe fp8 rc=$? t=$(( $(date +%s) - t0 ))"
timeout 50 python3 scripts/gluon_tile_probe.py 8192x8192x8192 --capped --top 3 \
  > $OUT/halves-probe-bf16-capped.txt 2>&1
echo "probe bf16 rc=$? t=$(( $(date +%s) - t0 ))"
left=$(( 540 - $(date +%s) + t0 ))
G='{op: gemm, providers: [cublaslt-fp8, cublaslt-fp8-fastaccum, own-triton, own-triton-no-gluon], product: {m: [2048, 4096, 8192]}, fixed: {dtype: fp8_e4m3, layout: nt}, zip: {n: [6144, 8192, 10240], k: [4096, 8192, 8192]}}'
GPU=h200 bash scripts/gpu_measure.sh $left "gemm_fp8-halves-s85 sweep=gemm_llama_lowp 'sweep.groups=[$G]'"
cat $OUT/halves-probe-fp8-capped.txt $OUT/halves-probe-bf16-capped.txt
