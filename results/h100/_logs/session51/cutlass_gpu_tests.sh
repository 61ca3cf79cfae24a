# Session 51: every own CUTLASS GPU test, the nn GEMM cases included (owed since 2026-11-24, when
# the carried cache held the nt libraries only and 61 tests skipped). The machine builds the bf16
# nn libraries from the carried include tree; nt and FMHA come in the carried cache.
set -u
t0=$(date +%s)
. scripts/device_env.sh || exit 1
export TRITON_INTERPRET=0 TRITON_CACHE_DIR=/tmp/tcache
export $(cat .cache/gitid)
L=results/_scratch/gpu/_logs; mkdir -p $L
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm,driver_version --format=csv,noheader | tee $L/tests-gpu.txt
timeout 330 python3 -m harness_kernels.cutlass.prebuild --gemm bf16:nt --gemm bf16:nn --fmha bf16:128 --fmha bf16:64 --fmha bf16:256 > $L/prebuild-nn.txt 2>&1
echo "prebuild rc=$? t=$(( $(date +%s) - t0 )): $(tail -1 $L/prebuild-nn.txt)"
timeout $(( 560 - ($(date +%s) - t0) )) python3 -m pytest -q -m gpu tests/cutlass -p no:cacheprovider -rs > $L/cutlass_gpu_tests.txt 2>&1
echo "tests rc=$? t=$(( $(date +%s) - t0 ))"
tail -15 $L/cutlass_gpu_tests.txt
tar czf $OUT/results.tgz results/_scratch/gpu/_logs
[ -d /tmp/cutlass-cache ] && tar cJf $OUT/cutlass.tar.xz -C /tmp/cutlass-cache . 2>/dev/null
exit 0
