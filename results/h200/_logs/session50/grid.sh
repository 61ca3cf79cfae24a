# Session 50 (CALL=callN ID=<run>): the whole gemm_llama grid (120 shapes) with cuBLAS, own CUTLASS
# and own Triton in one run, tree 8978ca1 or later (both tuners share capped_retime.winner), on
# whichever GPU comes (the run's folder says which). The checkout was fresh: no tune cache and no
# prebuilt CUTLASS libraries were carried, so the first call builds the libraries from the carried
# include tree and starts the tune pass; the same command on the warm machine resumes the run.
# Each call returns the tune cache and the CUTLASS libraries (copy them to .cache/tune-<gpu>.tgz
# and .cache/cutlass.tar.xz before the next call: calls 2-4 came on fresh machines). A cold
# machine resumes the rows only with results/_scratch/gpu carried (git-ignored: name it in carry).
# BUDGET (default 560 s) bounds the run inside a shorter call (call 5: 125).
set -u
t0=$(date +%s); C=${CALL:-call1}; ID=${ID:-gemm_llama-s50}
. scripts/device_env.sh || exit 1
export TRITON_INTERPRET=0 TRITON_CACHE_DIR=/tmp/tcache
export $(cat .cache/gitid)
R=results/_scratch/gpu; L=$R/_logs; mkdir -p $L
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm,driver_version --format=csv,noheader | tee $L/$C-gpu.txt
left=$(( ${BUDGET:-560} - ($(date +%s) - t0) ))
timeout -s INT $left python3 -m harness.cli run sweep=gemm_llama 'sweep.groups.0.providers=[cublas,own-cutlass,own-triton]' \
  max_points=360 results_dir=$R run_id=$ID progress=false > $L/$ID-$C.txt 2>&1
echo "$ID rc=$? t=$(( $(date +%s) - t0 )): $(grep -h 'tune pass' $L/$ID-$C.txt $R/$ID/_workers/*.log 2>/dev/null | tail -2) $(tail -1 $L/$ID-$C.txt)"
cp $R/$ID/_workers/worker-0.log $L/$ID-$C-worker.log 2>/dev/null
tar czf $OUT/results.tgz $R; tar czf $OUT/tune-cache.tgz -C $HARNESS_CACHE_DIR tune 2>/dev/null
[ -d /tmp/cutlass-cache ] && tar cJf $OUT/cutlass.tar.xz -C /tmp/cutlass-cache . 2>/dev/null
python3 scripts/gemm_ratio_table.py $R/$ID 2>&1 | tail -8
exit 0
