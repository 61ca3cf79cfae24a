# Session 46, calls on one machine (CALL=callN): the whole fp8 e4m3 gemm_llama_lowp grid (120
# shapes) with cuBLASLt _scaled_mm (with and without fast accumulation), own CUTLASS and own
# Triton in one run (issue 20.3); the tf32 group pointed at an AMD-only provider (skipped). The
# same command resumes the run on the same warm machine. The own CUTLASS fp8 libraries are built
# on the machine by the runner's prebuild (cutlass-inc carried) and packed to $OUT.
set -u
t0=$(date +%s); C=${CALL:-call1}; ID=${ID:-gemm_llama_lowp-fp8-grid}
. scripts/device_env.sh || exit 1
export TRITON_INTERPRET=0 HARNESS_CACHE_DIR=/tmp/hcache TRITON_CACHE_DIR=/tmp/tcache
export $(cat .cache/gitid)
R=results/_scratch/gpu; L=$R/_logs; mkdir -p $L
T=.cache/tune-fp8-${TUNE:-h100}.tgz
[ -d /tmp/hcache/tune ] || { [ -f $T ] && mkdir -p /tmp/hcache && tar xzf $T -C /tmp/hcache && echo "tune cache restored from $T"; }
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm,driver_version --format=csv,noheader | tee $L/$C-gpu.txt
left=$(( 560 - ($(date +%s) - t0) ))
timeout -s INT $left python3 -m harness.cli run sweep=gemm_llama_lowp 'sweep.groups.1.providers=[hipblaslt]' \
  max_points=700 results_dir=$R run_id=$ID progress=false > $L/$ID-$C.txt 2>&1
echo "$ID rc=$? t=$(( $(date +%s) - t0 )): $(grep -h 'tune pass\|libraries' $L/$ID-$C.txt $R/$ID/_workers/*.log 2>/dev/null | tail -3) $(tail -1 $L/$ID-$C.txt)"
tar czf $OUT/results.tgz $R; tar czf $OUT/tune-cache.tgz -C /tmp/hcache tune 2>/dev/null
tar cJf $OUT/cutlass-cache.tar.xz -C /tmp/cutlass-cache . 2>/dev/null
python3 scripts/gemm_ratio_table.py $R/$ID 2>&1 | tail -12
exit 0
