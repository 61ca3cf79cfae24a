# Session 102's calls (BUDGET=s STEPS="..." bash results/h100/_logs/session102/call-fa4.sh), back
# to back to one warm H100 (or H200, when no H100 comes), the FA4 wheel parts one per call
# (part 1 with the first call, part 2 with the second). SESSION=<n> names the runs (-s<n> on an
# H200, -s<n>h on an H100; 104 when not given).
# STEPS (in this order, each given the budget left):
#   resume  H100: the 8 rows of gemm_llama-s102h (M 16384 on Llama-3-70B's four shapes) on
#           today's kernels (allow_mixed=true: kernels/ changed in the Gluon FMHA only, which no
#           GEMM runs); H200: its owed roofs (ceilings-s100, read_once-s100)
#   tests   the Gluon FMHA's ping-pong candidates against the fp32 reference at D 128 (every one
#           the tuner may pick at the sweep's head dim); the outcome is kept in /tmp for the
#           measure step of a later call to the same warm machine
#   measure FA4 beside own Triton, the Gluon FMHA with and without the ping-pong candidates, and
#           SDPA cuDNN at the original study's causal shapes (sweeps/thesis.yaml's FMHA group: b1,
#           32/8 heads, D 128, fp16, 256-16k; the GEMM group keeps cuBLAS only), so the gap to
#           FA4 is read within one run (thesis-fa4-*; without FA4's wheels, thesis-pp-*: the
#           ping-pong's A/B beside cuDNN). Where the tests failed or did not end within TEST_S (a
#           turn barrier that never completes hangs) the ping-pong candidates stay out: FA4
#           beside the Gluon FMHA without them and cuDNN
#   ncu     the README's order item 2: ncu of own Triton, own CUTLASS's FA3-class kernel and FA4
#           at causal 1k and 4k
set -u
t0=$(date +%s); B=${BUDGET:-540}
export TRITON_INTERPRET=0 TRITON_CACHE_DIR=/tmp/tcache FLASHINFER_WORKSPACE_BASE=/tmp/fi \
  FLASH_ATTENTION_CUTE_DSL_CACHE_ENABLED=1
. scripts/device_env.sh > /dev/null || exit 1
case "$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)" in
  *H200*) gpu=h200; sfx=s${SESSION:-104} ;;
  *) gpu=h100; sfx=s${SESSION:-104}h ;;
esac
L=results/_scratch/$gpu/_logs; mkdir -p $L
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm,driver_version --format=csv,noheader | tee -a $L/gpu-$sfx.txt
python3 -c "import flash_attn.cute; print('FA4 imports')" 2>/dev/null || echo "FA4 not importable (yet)"
left() { echo $(( B - ($(date +%s) - t0) )); }
STEPS=" ${STEPS:-measure} "
if [[ $STEPS == *" resume "* ]]; then
  if [ $gpu = h100 ]; then
    l=$(left); r=${RESUME_S:-150}; GPU=h100 bash scripts/gpu_measure.sh $(( l < r ? l : r )) "gemm_llama-s102h sweep=gemm_llama allow_mixed=true"
  elif [ "${H200_ROOFS:-1}" = 1 ]; then  # H200_ROOFS=0: a single call keeps its time for the rest
    GPU=h200 bash scripts/gpu_measure.sh $(left) "ceilings-s100 ceilings" "read_once-s100 sweep=probes_read_once"
  fi
fi
if [[ $STEPS == *" tests "* ]]; then
  t=$(left); t=$(( t < ${TEST_S:-200} ? t : ${TEST_S:-200} ))
  timeout -k 10 $t python3 -m pytest -q -m gpu tests/gpu/test_gluon_attention_gpu.py \
    -k "pingpong and -128-" -p no:cacheprovider -x --durations=5 > $L/gluon-pingpong-gpu-tests-$sfx.txt 2>&1
  rc=$?; echo $rc > /tmp/pp-tests-rc
  echo "tests rc=$rc t=$(( $(date +%s) - t0 )): $(tail -1 $L/gluon-pingpong-gpu-tests-$sfx.txt)"
  [ $rc -eq 0 ] || grep -E "^(E |FAILED|ERROR)" $L/gluon-pingpong-gpu-tests-$sfx.txt | head -30 | cut -c1-400
fi
if [[ $STEPS == *" measure "* ]]; then
  # without FA4 (its wheel parts came to no machine), the run is ping-pong's A/B beside cuDNN
  id=thesis-fa4-$sfx; fa4=flash-attn-4,
  python3 -c "import flash_attn.cute" 2>/dev/null || { id=thesis-pp-$sfx; fa4=; }
  providers=${fa4}own-triton,own-triton-gluon,own-triton-gluon-no-pingpong,sdpa-cudnn
  if [ "$(cat /tmp/pp-tests-rc 2>/dev/null)" != 0 ]; then
    echo "ping-pong left out (tests rc=$(cat /tmp/pp-tests-rc 2>/dev/null || echo 'not run on this machine'))"
    id=${id/-pp-/-nopp-}; id=${id/-fa4-/-fa4-nopp-}
    providers=${fa4}own-triton-gluon-no-pingpong,sdpa-cudnn
  fi
  m=$(( $(left) - ${NCU_S:-0} ))
  if [ $m -gt 60 ]; then
    GPU=$gpu bash scripts/gpu_measure.sh $m "$id sweep=thesis 'sweep.groups.0.providers=[cublas]' 'sweep.groups.1.providers=[$providers]'"
    grep -E "attn b1" $L/$id.txt | cut -c1-140
  else
    echo "$id: out of time ($m s left)"
  fi
fi
if [[ $STEPS == *" ncu "* ]]; then
  mkdir -p $OUT/ncu
  OUT=$OUT/ncu timeout $(( $(left) - 10 )) bash scripts/provider_ncu_call.sh \
    "c1k attention batch=1 q_heads=32 kv_heads=8 q_len=1024 kv_len=1024 causal=true dtype=fp16 own-triton own-cutlass-fa3 flash-attn-4" \
    "c4k attention batch=1 q_heads=32 kv_heads=8 q_len=4096 kv_len=4096 causal=true dtype=fp16 own-triton own-cutlass-fa3 flash-attn-4"
  tar czf $OUT/tune-cache.tgz -C $HARNESS_CACHE_DIR tune 2>/dev/null
fi
tar czf $OUT/results.tgz results/_scratch 2>/dev/null
echo "t=$(( $(date +%s) - t0 ))"
