# Session 52 (CALL=callN): every own CUTLASS GPU test on an H200 (session 51's H100 run was cut
# after 301 of 461 tests, with tf32 not prebuilt), the N-split 128x320 tile's first GPU tests
# among them. The machine builds what the carried .cache/cutlass.tar.xz lacks (bf16 and tf32, nt
# and nn, the FMHAs) from the carried include tree, then runs the tests in the time left; the
# libraries come back, so a second call spends its whole time testing.
set -u
t0=$(date +%s); C=${CALL:-call1}
. scripts/device_env.sh || exit 1
export TRITON_INTERPRET=0 TRITON_CACHE_DIR=/tmp/tcache
export $(cat .cache/gitid)
L=results/_scratch/gpu/_logs; mkdir -p $L
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm,driver_version --format=csv,noheader | tee $L/$C-gpu.txt
timeout 480 python3 -m harness_kernels.cutlass.prebuild --gemm bf16:nt --gemm bf16:nn --gemm tf32:nt --gemm tf32:nn \
  --fmha bf16:128 --fmha bf16:64 --fmha bf16:256 > $L/$C-prebuild.txt 2>&1
echo "prebuild rc=$? t=$(( $(date +%s) - t0 )): $(tail -1 $L/$C-prebuild.txt)"
# K (call 4: "not test_gemm_config_matches_fp32 or coopn") leaves out what call 8 of session 51
# passed on an H100 (every bf16 config, nt and nn, at four shapes) when the time is short.
left=$(( ${BUDGET:-500} - ($(date +%s) - t0) ))
[ $left -gt 30 ] && timeout $left python3 -m pytest -v -m gpu tests/cutlass -p no:cacheprovider -rs ${K:+-k "$K"} > $L/$C-cutlass_gpu_tests.txt 2>&1
echo "tests rc=$? t=$(( $(date +%s) - t0 ))"
grep -E "FAILED|ERROR" $L/$C-cutlass_gpu_tests.txt | head -20; grep -c PASSED $L/$C-cutlass_gpu_tests.txt; tail -3 $L/$C-cutlass_gpu_tests.txt
tar czf $OUT/results.tgz results/_scratch/gpu/_logs
# xz on every core: call 3's single-threaded pack of 159 libraries ran past the call limit
[ -d /tmp/cutlass-cache ] && tar cf - -C /tmp/cutlass-cache . | xz -T0 -6 > $OUT/cutlass.tar.xz
exit 0
