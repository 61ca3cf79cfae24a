# Session 43, call 2 (a plain run, fresh machine): the Gluon tune fix's GPU tests, then the
# fmha_prefill grid with cuDNN, SDPA flash, own-triton (tl / Gluon choice) and own-triton-no-gluon
# (tl alone) in one run (issue 21.1); call 3 resumes it on the same warm machine if cut.
set -u
t0=$(date +%s); C=${CALL:-call2}
. scripts/device_env.sh || exit 1
export TRITON_INTERPRET=0 HARNESS_CACHE_DIR=/tmp/hcache TRITON_CACHE_DIR=/tmp/tcache
export $(cat .cache/gitid)
R=results/_scratch/gpu; L=$R/_logs; mkdir -p $L
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm,driver_version --format=csv,noheader | tee $L/$C-gpu.txt
if [ "${TESTS:-0}" = 1 ]; then
  timeout 200 python3 -m pytest -q -n 0 -m gpu tests/gpu/test_gluon_attention_gpu.py -k "tunes_and_records or faster_of" > $L/gluon_attention_gpu_tests-$C.txt 2>&1
  rc=$?; echo "gluon attention tests rc=$rc t=$(( $(date +%s) - t0 )): $(tail -1 $L/gluon_attention_gpu_tests-$C.txt)"
  [ $rc -eq 0 ] || tail -30 $L/gluon_attention_gpu_tests-$C.txt
fi
run() {  # run <seconds left at least> <run_id> <overrides...>
  local left=$(( 575 - ($(date +%s) - t0) )); [ $left -gt $1 ] || { echo "skip $2: ${left}s left"; return; }
  local id=$2; shift 2
  timeout -s INT $left python3 -m harness.cli run "$@" results_dir=$R run_id=$id progress=false > $L/$id-$C.txt 2>&1
  echo "$id rc=$? t=$(( $(date +%s) - t0 )): $(tail -1 $L/$id-$C.txt)"
}
run 30 fmha_prefill-choice sweep=fmha_prefill 'sweep.groups.0.providers=[sdpa-cudnn,sdpa-flash,own-triton,own-triton-no-gluon]'
if [ "${MORE:-0}" = 1 ]; then
  run 60 gemm_llama_mid-cutlass-r4 sweep=gemm_llama 'sweep.groups.0.providers=[cublas,own-cutlass]' 'sweep.groups.0.product.m=[128,256,512,1024]'
  run 60 ladder-r3 sweep=ladder
fi
tar czf $OUT/results.tgz $R; cp -r /tmp/hcache/tune $L/tune-cache-$C 2>/dev/null
tar cJf $OUT/cutlass-cache.tar.xz -C /tmp/cutlass-cache . 2>/dev/null
python3 scripts/attention_ratio_table.py $R/fmha_prefill-choice; python3 scripts/attention_ratio_table.py $R/fmha_prefill-choice --vendor sdpa-flash | tail -n +2
[ -d $R/gemm_llama_mid-cutlass-r4 ] && python3 scripts/gemm_ratio_table.py $R/gemm_llama_mid-cutlass-r4 2>&1 | tail -20
[ -d $R/ladder-r3 ] && python3 scripts/run_table.py $R/ladder-r3 2>&1 | grep attn | head -30
exit 0
