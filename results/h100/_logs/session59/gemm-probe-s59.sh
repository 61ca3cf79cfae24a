# Session 59, call 1 (GPU=h100): issue 20's mid band. The Gluon GEMM's GPU tests (the new
# 160-accumulator cooperative tiles 128x320 and 256x160 among every candidate, ragged edges),
# then scripts/gluon_tile_probe.py at the H100's two points below 0.90x cuBLAS and six more of
# the mid band. Carries wheel part 1 (for call 2, the serving grid) beside it.
set -u
t0=$(date +%s)
export TRITON_INTERPRET=0 TRITON_CACHE_DIR=/tmp/tcache
. scripts/device_env.sh || exit 1
L=results/_scratch/$GPU/_logs; mkdir -p $L
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm,driver_version --format=csv,noheader | tee $L/gemm-probe-gpu.txt
timeout 200 python3 -m pytest -q -m gpu -p no:cacheprovider tests/gpu/test_gluon_gemm_gpu.py > $L/gluon-gemm-gpu-tests.txt 2>&1
echo "gluon GPU tests rc=$? t=$(( $(date +%s) - t0 ))"; tail -3 $L/gluon-gemm-gpu-tests.txt
timeout $(( ${BUDGET:-480} - ($(date +%s) - t0) )) python3 scripts/gluon_tile_probe.py \
  512x10240x8192 256x6144x4096 256x10240x8192 512x6144x4096 1024x10240x8192 512x8192x28672 \
  512x4096x14336 128x6144x4096 --top 5 --stages 6,8 > $L/gluon-tile-probe.txt 2>&1
echo "probe rc=$? t=$(( $(date +%s) - t0 ))"
cp -r $L $OUT/logs
grep -v "^  .*WRONG" $L/gluon-tile-probe.txt | tail -80 | cut -c1-110
grep WRONG $L/gluon-tile-probe.txt | head
exit 0
