# Session 66 (GPU=h200 CALL=callN BUDGET=s [TESTS=1]): the Gluon decode's GPU tests after the
# one-loop fix (tests/gpu/test_decode_gluon_gpu.py, the split merge's too; a failure stops the
# call), then sweeps/fmha_decode_balanced (own-triton against own-triton-no-balanced) within
# what is left of BUDGET; resumable with results/_scratch/h200/fmha_decode_balanced-s66 carried.
set -u
t0=$(date +%s); C=${CALL:-call1}; B=${BUDGET:-540}
export TRITON_INTERPRET=0 TRITON_CACHE_DIR=/tmp/tcache
. scripts/device_env.sh || exit 1
export $(cat .cache/gitid)
L=results/_scratch/h200/_logs; mkdir -p $L
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm,driver_version --format=csv,noheader | tee $L/balanced-$C-gpu.txt
. scripts/decode_gpu_tests.sh
if [ "${TESTS:-0}" = 1 ] && ! decode_gpu_tests $L/balanced-$C-gpu-tests.txt 330; then
  tar czf $OUT/results.tgz results/_scratch/h200; exit 1
fi
if [ "${UNFIXED:-0}" = 1 ]; then  # the same regression test on the kernel before the fix
  rm -rf /tmp/unfixed && mkdir -p /tmp/unfixed && cp -r kernels /tmp/unfixed/ \
    && patch -s -R -p1 -d /tmp/unfixed < results/h200/_logs/session66/one-loop-fix.diff \
    && ln -sfn /tmp/unfixed/kernels /tmp/site/harness_kernels \
    && timeout 150 python3 -m pytest -q -m gpu tests/gpu/test_decode_gluon_gpu.py -p no:cacheprovider \
      -k first_tile_is_masked > $L/balanced-$C-unfixed.txt 2>&1
  echo "unfixed kernel: $(tail -1 $L/balanced-$C-unfixed.txt)"
  grep -E "^FAILED" $L/balanced-$C-unfixed.txt | cut -c1-200
  ln -sfn "$PWD/kernels" /tmp/site/harness_kernels
fi
left=$(( B - ($(date +%s) - t0) ))
GPU=h200 bash scripts/gpu_measure.sh $left "fmha_decode_balanced-s66 sweep=fmha_decode_balanced"
