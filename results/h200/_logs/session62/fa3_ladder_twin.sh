# Session 62, call 3 (GPU=h200): the FA3 ladder again after fa3 took the atomic tile counter as
# its default (each rung now switches one feature off that kernel; fa3-static is the schedule
# before), its GPU tests first; then the decode twin A/B (scripts/twin_ab_call.sh) with what
# is left of the budget. The ladder's run comes back as $OUT/ladder.tgz.
set -u
t0=$(date +%s)
export TRITON_INTERPRET=0 TRITON_CACHE_DIR=/tmp/tcache
export $(cat .cache/gitid)
. scripts/device_env.sh || exit 1
R=results/_scratch/h200; L=$R/_logs; mkdir -p $L
timeout 240 python3 -m harness_kernels.cutlass.prebuild --fmha bf16:128 --fmha bf16:64 --fmha bf16:256 > $L/fmha-prebuild-s62c.txt 2>&1
echo "prebuild rc=$? t=$(( $(date +%s) - t0 ))"; tail -1 $L/fmha-prebuild-s62c.txt
timeout 150 python3 -m pytest -q -m gpu tests/cutlass -k fmha -p no:cacheprovider > $L/cutlass_fmha_gpu_tests-s62c.txt 2>&1
echo "tests rc=$? t=$(( $(date +%s) - t0 )): $(tail -1 $L/cutlass_fmha_gpu_tests-s62c.txt)"
RUNGS="own-cutlass-fa3,own-cutlass-fa3-no-pingpong,own-cutlass-fa3-no-overlap,own-cutlass-fa3-no-pingpong-no-overlap,own-cutlass-fa3-no-st16,own-cutlass-fa3-static,own-cutlass-fa3-not-persistent,own-cutlass-sm90,sdpa-cudnn"
timeout -k 15 -s INT 200 python3 -m harness.cli run sweep=fmha_prefill \
  "sweep.groups.0.providers=[$RUNGS]" 'sweep.groups.0.product.head_dim=[128]' \
  'sweep.groups.0.zip.batch=[4]' 'sweep.groups.0.zip.q_len=[4096]' 'sweep.groups.0.zip.kv_len=[4096]' \
  results_dir=$R run_id=fa3-ladder-s62b progress=false stop_after_s=150 > $L/fa3-ladder-s62b.txt 2>&1
echo "ladder rc=$? t=$(( $(date +%s) - t0 )): $(tail -1 $L/fa3-ladder-s62b.txt)"
tar czf $OUT/ladder.tgz $R/fa3-ladder-s62b $L/fa3-ladder-s62b.txt $L/cutlass_fmha_gpu_tests-s62c.txt $L/fmha-prebuild-s62c.txt
[ -d /tmp/cutlass-cache ] && tar cJf $OUT/cutlass.tar.xz -C /tmp/cutlass-cache . 2>/dev/null
BUDGET=$(( ${BUDGET:-560} - ($(date +%s) - t0) )) PROCS="${PROCS:-1 2 3 4}" bash scripts/twin_ab_call.sh
echo "t=$(( $(date +%s) - t0 ))"
exit 0
