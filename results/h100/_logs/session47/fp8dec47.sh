# Session 47: own Triton's fp8 decode (M 1-32, all 8 gemm_llama N/K) beside cuBLASLt _scaled_mm (call 1:
# the 4-stage fp8 deep configs, run gemm_llama_lowp-fp8-decode; call 2: also the swapped
# candidates, ID=gemm_llama_lowp-fp8-swap)
# with and without fast accumulation, after the 4-stage fp8 deep configs (issue 20.3); the tune
# cache of session 46's H100 fp8 grid is carried (points whose candidate lists changed re-tune).
# The same command resumes the run on the same warm machine.
set -u
t0=$(date +%s); C=${CALL:-call1}; ID=${ID:-gemm_llama_lowp-fp8-decode}
. scripts/device_env.sh || exit 1
export TRITON_INTERPRET=0 HARNESS_CACHE_DIR=/tmp/hcache TRITON_CACHE_DIR=/tmp/tcache
export $(cat .cache/gitid)
R=results/_scratch/gpu; L=$R/_logs; mkdir -p $L
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm,driver_version --format=csv,noheader | tee $L/$C-gpu.txt
case "$(cat $L/$C-gpu.txt)" in *H100*) [ -d /tmp/hcache/tune ] || { mkdir -p /tmp/hcache && tar xzf .cache/tune-fp8-h100.tgz -C /tmp/hcache; };; esac
left=$(( 560 - ($(date +%s) - t0) ))
timeout -s INT $left python3 -m harness.cli run sweep=gemm_llama_lowp \
  'sweep.groups.0.providers=[cublaslt-fp8,cublaslt-fp8-fastaccum,own-triton]' 'sweep.groups.0.product.m=[1,2,4,8,16,32]' \
  'sweep.groups.1.providers=[hipblaslt]' results_dir=$R run_id=$ID progress=false > $L/$ID-$C.txt 2>&1
echo "$ID rc=$? t=$(( $(date +%s) - t0 )): $(tail -1 $L/$ID-$C.txt)"
tar czf $OUT/results.tgz $R; tar czf $OUT/tune-cache.tgz -C /tmp/hcache tune 2>/dev/null
python3 scripts/gemm_ratio_table.py $R/$ID 2>&1 | tail -14
exit 0
