# Session 101's FMHA call (BUDGET=s bash results/h100/_logs/session101/call-fmha-order.sh), on
# whichever GPU comes: the Gluon FMHA's work-item order (every head's longest causal tiles first,
# persistent CTAs in snake rounds: kernels/triton/attention_gluon_kernel._tile_of) is checked
# against the fp32 reference at every candidate (tests/gpu/test_gluon_attention_gpu.py; a failure
# stops the call before anything is timed), then timed at the original study's causal shapes
# (sweeps/thesis.yaml's FMHA group: b1, 32/8 heads, D 128, fp16, 256-16k) beside SDPA cuDNN,
# with the Gluon FMHA alone (own-triton-gluon) beside own Triton's pick; the GEMM group keeps
# cuBLAS only, so the run is the FMHA's.
set -u
t0=$(date +%s); B=${BUDGET:-540}
export TRITON_INTERPRET=0 TRITON_CACHE_DIR=/tmp/tcache
. scripts/device_env.sh > /dev/null || exit 1
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
case $name in *H200*) gpu=h200; sfx=s102 ;; *) gpu=h100; sfx=s102h ;; esac
L=results/_scratch/$gpu/_logs; mkdir -p $L
# the causal cases (what the order changed), one CTA per item and persistent: every candidate
timeout -k 10 ${TEST_S:-300} python3 -m pytest -q -m gpu tests/gpu/test_gluon_attention_gpu.py \
  -k "True and not no-overlap" -p no:cacheprovider -x --durations=5 > $L/gluon-attention-gpu-tests-$sfx.txt 2>&1
rc=$?; echo "tests rc=$rc t=$(( $(date +%s) - t0 )): $(tail -1 $L/gluon-attention-gpu-tests-$sfx.txt)"
if [ $rc -ne 0 ]; then
  grep -E "^(E |FAILED|ERROR)" $L/gluon-attention-gpu-tests-$sfx.txt | head -30 | cut -c1-400
  tar czf $OUT/results.tgz results/_scratch; exit 1
fi
left=$(( B - ($(date +%s) - t0) ))
GPU=$gpu bash scripts/gpu_measure.sh $left "thesis-fmha-$sfx sweep=thesis 'sweep.groups.0.providers=[cublas]' 'sweep.groups.1.providers=[sdpa-cudnn,own-triton,own-triton-gluon]'"
