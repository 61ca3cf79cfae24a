# Session 60, call 1 (GPU=h100): the Gluon GEMM's GPU tests, fp8 among them for the first time
# (every fp8 candidate against the dequantised fp32 product; own Triton's fp8 choice), then
# scripts/gluon_tile_probe.py --fp8 at six gemm_llama shapes against cuBLASLt's two _scaled_mm
# rows, then the whole gemm_llama grid (cuBLAS, own CUTLASS, own Triton: 360 points) as
# gemm_llama-s60 under the sweep's protocol, resumed by the next calls (scripts/gpu_measure.sh).
set -u
t0=$(date +%s)
export TRITON_INTERPRET=0 TRITON_CACHE_DIR=/tmp/tcache
export $(cat .cache/gitid)
. scripts/device_env.sh || exit 1
L=results/_scratch/$GPU/_logs; mkdir -p $L
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm,driver_version --format=csv,noheader | tee $L/call1-gpu.txt
timeout 200 python3 -m pytest -q -m gpu -p no:cacheprovider tests/gpu/test_gluon_gemm_gpu.py > $L/gluon-gemm-gpu-tests-fp8.txt 2>&1
echo "gluon GPU tests rc=$? t=$(( $(date +%s) - t0 ))"; tail -3 $L/gluon-gemm-gpu-tests-fp8.txt
grep -E "FAILED|Error" $L/gluon-gemm-gpu-tests-fp8.txt | head -8 | cut -c1-200
timeout 160 python3 scripts/gluon_tile_probe.py --fp8 \
  128x6144x4096 512x10240x8192 1024x8192x28672 2048x28672x4096 8192x8192x8192 256x57344x8192 \
  --top 4 --stages 6 > $L/gluon-tile-probe-fp8.txt 2>&1
echo "fp8 probe rc=$? t=$(( $(date +%s) - t0 ))"
grep -v "WRONG" $L/gluon-tile-probe-fp8.txt | tail -45 | cut -c1-120
grep -c WRONG $L/gluon-tile-probe-fp8.txt
bash scripts/gpu_measure.sh $(( ${BUDGET:-540} - ($(date +%s) - t0) )) \
  "gemm_llama-s60 sweep=gemm_llama 'sweep.groups.0.providers=[cublas,own-cutlass,own-triton]' max_points=360"
grep -h "tune pass\|prebuild\|built" $L/gemm_llama-s60.txt | cut -c1-200 | head
echo "t=$(( $(date +%s) - t0 ))"
exit 0
