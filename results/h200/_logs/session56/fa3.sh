# Session 56 (first written for session 51, whose call for an H200 got an H100): the CuTe FMHA GPU tests and the FA3-class prefill grid on an H200, owed since session
# 39's softmax change (results/h200/README.md, "Owed runs"), then the Gluon decode probe (owed since
# session 45). The machine builds the FMHA libraries from the carried include tree.
set -u
t0=$(date +%s)
. scripts/device_env.sh || exit 1
export TRITON_INTERPRET=0 TRITON_CACHE_DIR=/tmp/tcache
export $(cat .cache/gitid)
R=results/_scratch/h200; L=$R/_logs; mkdir -p $L
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm,driver_version --format=csv,noheader | tee $L/fa3-gpu.txt
timeout 150 python3 -m harness_kernels.cutlass.prebuild --fmha bf16:128 --fmha bf16:64 --fmha bf16:256 > $L/fmha-prebuild.txt 2>&1
echo "prebuild rc=$? t=$(( $(date +%s) - t0 ))"; tail -2 $L/fmha-prebuild.txt
timeout 120 python3 -m pytest -q -m gpu tests/cutlass -k fmha -p no:cacheprovider > $L/cutlass_fmha_gpu_tests.txt 2>&1
echo "tests rc=$? t=$(( $(date +%s) - t0 )): $(tail -1 $L/cutlass_fmha_gpu_tests.txt)"
left=$(( ${BUDGET:-420} - ($(date +%s) - t0) ))
timeout -k 15 -s INT $((left + 60)) python3 -m harness.cli run sweep=fmha_prefill 'sweep.groups.0.providers=[sdpa-cudnn,own-cutlass-fa3]' \
  results_dir=$R run_id=${ID:-fmha_prefill-fa3-s56} progress=false stop_after_s=$left > $L/${ID:-fmha_prefill-fa3-s56}.txt 2>&1
echo "prefill rc=$? t=$(( $(date +%s) - t0 )): $(tail -1 $L/${ID:-fmha_prefill-fa3-s56}.txt)"
left=$(( 560 - ($(date +%s) - t0) ))
[ $left -gt 60 ] && HARNESS_CACHE_DIR=/tmp/probe-cache timeout $left python3 scripts/gluon_decode_probe.py 32x6144x4096 2x6144x4096 64x4096x4096 > $L/gluon_decode_probe.txt 2>&1
echo "probe rc=$? t=$(( $(date +%s) - t0 ))"
tar czf $OUT/results.tgz $R
[ -d /tmp/cutlass-cache ] && tar cJf $OUT/cutlass.tar.xz -C /tmp/cutlass-cache . 2>/dev/null
python3 scripts/attention_ratio_table.py $R/${ID:-fmha_prefill-fa3-s56} 2>&1 | tail -12
tail -8 $L/gluon_decode_probe.txt
exit 0
