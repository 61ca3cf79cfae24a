# Session 62, call 1 (GPU=h200): the FA3-class CuTe FMHA's 16-byte O store (own-cutlass-fa3-st16,
# session 61) on a GPU for the first time. Builds the FMHA libraries from the carried include
# tree, runs every CuTe FMHA GPU test (the fp32 reference, st16 among them), then fmha_prefill
# with cuDNN, fa3 and fa3-st16 in one run (D 64, 128, 256; S 1k-16k; causal and not).
# Resumable: carry results/_scratch/h200 and run again with the same ID.
set -u
t0=$(date +%s)
export TRITON_INTERPRET=0 TRITON_CACHE_DIR=/tmp/tcache
export $(cat .cache/gitid)
. scripts/device_env.sh || exit 1
ID=${ID:-fmha_prefill-st16-s62}
R=results/_scratch/h200; L=$R/_logs; mkdir -p $L
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm,driver_version --format=csv,noheader | tee $L/$ID-gpu.txt
timeout 240 python3 -m harness_kernels.cutlass.prebuild --fmha bf16:128 --fmha bf16:64 --fmha bf16:256 > $L/fmha-prebuild-s62.txt 2>&1
echo "prebuild rc=$? t=$(( $(date +%s) - t0 ))"; tail -1 $L/fmha-prebuild-s62.txt
if [ ! -f $L/cutlass_fmha_gpu_tests-s62.txt ]; then
  timeout 150 python3 -m pytest -q -m gpu tests/cutlass -k fmha -p no:cacheprovider > $L/cutlass_fmha_gpu_tests-s62.txt 2>&1
  echo "tests rc=$? t=$(( $(date +%s) - t0 )): $(tail -1 $L/cutlass_fmha_gpu_tests-s62.txt)"
fi
left=$(( ${BUDGET:-540} - ($(date +%s) - t0) ))
timeout -k 15 -s INT $((left + 60)) python3 -m harness.cli run sweep=fmha_prefill \
  'sweep.groups.0.providers=[sdpa-cudnn,own-cutlass-fa3,own-cutlass-fa3-st16]' \
  results_dir=$R run_id=$ID progress=false stop_after_s=$left > $L/$ID.txt 2>&1
echo "prefill rc=$? t=$(( $(date +%s) - t0 )): $(tail -1 $L/$ID.txt)"
tar czf $OUT/results.tgz $R
[ -d /tmp/cutlass-cache ] && tar cJf $OUT/cutlass.tar.xz -C /tmp/cutlass-cache . 2>/dev/null
python3 scripts/attention_ratio_table.py $R/$ID 2>&1 | tail -12
echo "t=$(( $(date +%s) - t0 ))"
exit 0
