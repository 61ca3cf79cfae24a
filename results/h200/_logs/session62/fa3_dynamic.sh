# Session 62, call 2 (GPU=h200): fa3 with the 16-byte O store as its default, beside fa3-dynamic
# (persistent for causal too, tiles from an atomic counter), in one fmha_prefill run with cuDNN;
# then the FA3 ladder's rungs (D 128, B 4, 4k; each rung switches one feature off fa3) in one run.
# Every CuTe FMHA GPU test first (the fp32 reference, fa3-dynamic's repeated launches among
# them); fa3-dynamic is left out of the sweeps if a test fails or hangs.
set -u
t0=$(date +%s)
export TRITON_INTERPRET=0 TRITON_CACHE_DIR=/tmp/tcache
export $(cat .cache/gitid)
. scripts/device_env.sh || exit 1
R=results/_scratch/h200; L=$R/_logs; mkdir -p $L
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm,driver_version --format=csv,noheader | tee $L/fa3-dynamic-gpu.txt
timeout 240 python3 -m harness_kernels.cutlass.prebuild --fmha bf16:128 --fmha bf16:64 --fmha bf16:256 > $L/fmha-prebuild-s62b.txt 2>&1
echo "prebuild rc=$? t=$(( $(date +%s) - t0 ))"; tail -1 $L/fmha-prebuild-s62b.txt
DYN=own-cutlass-fa3-dynamic
timeout 150 python3 -m pytest -q -m gpu tests/cutlass -k fmha -p no:cacheprovider > $L/cutlass_fmha_gpu_tests-s62b.txt 2>&1
rc=$?; echo "tests rc=$rc t=$(( $(date +%s) - t0 )): $(tail -1 $L/cutlass_fmha_gpu_tests-s62b.txt)"
if [ $rc -ne 0 ]; then grep -E "^(FAILED|ERROR)" $L/cutlass_fmha_gpu_tests-s62b.txt | head; DYN=; fi
RUNGS="own-cutlass-fa3,own-cutlass-fa3-no-pingpong,own-cutlass-fa3-no-overlap,own-cutlass-fa3-no-pingpong-no-overlap,own-cutlass-fa3-not-persistent,own-cutlass-fa3-no-st16${DYN:+,$DYN},own-cutlass-sm90,sdpa-cudnn"
left=$(( ${BUDGET:-540} - ($(date +%s) - t0) ))
timeout -k 15 -s INT $((left + 60)) python3 -m harness.cli run sweep=fmha_prefill \
  "sweep.groups.0.providers=[$RUNGS]" 'sweep.groups.0.product.head_dim=[128]' \
  'sweep.groups.0.zip.batch=[4]' 'sweep.groups.0.zip.q_len=[4096]' 'sweep.groups.0.zip.kv_len=[4096]' \
  results_dir=$R run_id=fa3-ladder-s62 progress=false stop_after_s=$left > $L/fa3-ladder-s62.txt 2>&1
echo "ladder rc=$? t=$(( $(date +%s) - t0 )): $(tail -1 $L/fa3-ladder-s62.txt)"
left=$(( ${BUDGET:-540} - ($(date +%s) - t0) ))
timeout -k 15 -s INT $((left + 60)) python3 -m harness.cli run sweep=fmha_prefill \
  "sweep.groups.0.providers=[sdpa-cudnn,own-cutlass-fa3${DYN:+,$DYN}]" \
  results_dir=$R run_id=fmha_prefill-dyn-s62 progress=false stop_after_s=$left > $L/fmha_prefill-dyn-s62.txt 2>&1
echo "prefill rc=$? t=$(( $(date +%s) - t0 )): $(tail -1 $L/fmha_prefill-dyn-s62.txt)"
tar czf $OUT/results.tgz $R
[ -d /tmp/cutlass-cache ] && tar cJf $OUT/cutlass.tar.xz -C /tmp/cutlass-cache . 2>/dev/null
python3 scripts/attention_ratio_table.py $R/fmha_prefill-dyn-s62 2>&1 | tail -8
echo "t=$(( $(date +%s) - t0 ))"
exit 0
