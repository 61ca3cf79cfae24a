# Session 47: the whole fp8 e4m3 gemm_llama_lowp grid (120 shapes) with own Triton (the 4-stage
# fp8 deep configs and the swapped decode candidates) beside cuBLASLt _scaled_mm with and
# without fast accumulation, in one run (issue 20.3); the tf32 group pointed at an AMD-only
# provider (skipped). The same command resumes the run on the same warm machine.
set -u
t0=$(date +%s); C=${CALL:-call1}; ID=${ID:-gemm_llama_lowp-fp8-tl}
. scripts/device_env.sh || exit 1
export TRITON_INTERPRET=0 HARNESS_CACHE_DIR=/tmp/hcache TRITON_CACHE_DIR=/tmp/tcache
export $(cat .cache/gitid)
R=results/_scratch/gpu; L=$R/_logs; mkdir -p $L
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm,driver_version --format=csv,noheader | tee $L/$C-gpu.txt
case "$(cat $L/$C-gpu.txt)" in *H100*) [ -d /tmp/hcache/tune ] || { mkdir -p /tmp/hcache && tar xzf .cache/tune-fp8-h100.tgz -C /tmp/hcache; };; esac
left=$(( 560 - ($(date +%s) - t0) ))
timeout -s INT $left python3 -m harness.cli run sweep=gemm_llama_lowp \
  'sweep.groups.0.providers=[cublaslt-fp8,cublaslt-fp8-fastaccum,own-triton]' \
  'sweep.groups.1.providers=[hipblaslt]' results_dir=$R run_id=$ID progress=false > $L/$ID-$C.txt 2>&1
echo "$ID rc=$? t=$(( $(date +%s) - t0 )): $(tail -1 $L/$ID-$C.txt)"
tar czf $OUT/results.tgz $R; tar czf $OUT/tune-cache.tgz -C /tmp/hcache tune 2>/dev/null
python3 scripts/gemm_ratio_table.py $R/$ID 2>&1 | tail -14
exit 0
