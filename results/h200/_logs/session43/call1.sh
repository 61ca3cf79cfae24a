# Session 43, call 1 (a plain run): own-triton's tl / Gluon prefill choice, GPU test then the
# fmha_prefill grid with cuDNN, SDPA flash, own-triton and own-triton-no-gluon in one run (issue 21.1).
set -u
t0=$(date +%s)
. scripts/device_env.sh || exit 1
export TRITON_INTERPRET=0 HARNESS_CACHE_DIR=/tmp/hcache TRITON_CACHE_DIR=/tmp/tcache
export $(cat .cache/gitid)
R=results/_scratch/gpu; L=$R/_logs; mkdir -p $L
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm,driver_version --format=csv,noheader | tee $L/call1-gpu.txt
timeout 240 python3 -m pytest -q -n 0 -m gpu tests/gpu/test_gluon_attention_gpu.py > $L/gluon_attention_gpu_tests.txt 2>&1
rc=$?; echo "gluon attention tests rc=$rc t=$(( $(date +%s) - t0 )): $(tail -1 $L/gluon_attention_gpu_tests.txt)"
[ $rc -eq 0 ] || tail -30 $L/gluon_attention_gpu_tests.txt
timeout -s INT $(( 570 - ($(date +%s) - t0) )) python3 -m harness.cli run sweep=fmha_prefill 'providers=[sdpa-cudnn,sdpa-flash,own-triton,own-triton-no-gluon]' \
  results_dir=$R run_id=fmha_prefill-choice progress=false > $L/fmha_prefill-choice-call1.txt 2>&1
echo "rc=$? t=$(( $(date +%s) - t0 )): $(tail -1 $L/fmha_prefill-choice-call1.txt)"
tar czf $OUT/results.tgz $R
python3 scripts/attention_ratio_table.py $R/fmha_prefill-choice; python3 scripts/attention_ratio_table.py $R/fmha_prefill-choice --vendor sdpa-flash | tail -n +2
