# Session 49 (CALL=callN): the whole gemm_llama grid (120 shapes) on an H200 with cuBLAS, own
# CUTLASS and own Triton in one run, after the bf16 swap (f6fa929) and the wide-K twins (abe4e1e);
# the tune pass on. An H100 that comes instead runs nothing (its grid ran in calls 1-2). The same
# command resumes the run on a warm machine.
set -u
t0=$(date +%s); C=${CALL:-call1}; ID=${ID:-gemm_llama-twins}
case "$(nvidia-smi --query-gpu=name --format=csv,noheader)" in *H200*) ;; *) nvidia-smi -L; echo "not an H200: nothing run"; exit 0;; esac
. scripts/device_env.sh || exit 1
export TRITON_INTERPRET=0 HARNESS_CACHE_DIR=/tmp/hcache TRITON_CACHE_DIR=/tmp/tcache
export $(cat .cache/gitid)
R=results/_scratch/gpu; L=$R/_logs; mkdir -p $L
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm,driver_version --format=csv,noheader | tee $L/$C-gpu.txt
left=$(( 570 - ($(date +%s) - t0) ))
timeout -s INT $left python3 -m harness.cli run sweep=gemm_llama 'sweep.groups.0.providers=[cublas,own-cutlass,own-triton]' \
  max_points=360 results_dir=$R run_id=$ID progress=false > $L/$ID-$C.txt 2>&1
echo "$ID rc=$? t=$(( $(date +%s) - t0 )): $(grep -h 'tune pass' $L/$ID-$C.txt $R/$ID/_workers/*.log 2>/dev/null | tail -2) $(tail -1 $L/$ID-$C.txt)"
cp $R/$ID/_workers/worker-0.log $L/$ID-$C-worker.log 2>/dev/null
tar czf $OUT/results.tgz $R; tar czf $OUT/tune-cache.tgz -C /tmp/hcache tune 2>/dev/null
python3 scripts/gemm_ratio_table.py $R/$ID 2>&1 | tail -8
exit 0
