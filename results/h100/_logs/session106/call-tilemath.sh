# Session 106's calls for the H100's order item 4 (BUDGET=s STEPS="..." bash
# results/h100/_logs/session106/call-tilemath.sh), back to back to one warm H100 (or H200), the
# FA4 wheel parts one per call (part 1 with the first call, part 2 with the second). SESSION=<n>
# names the runs (-s<n> on an H200, -s<n>h on an H100; 106 when not given). A copy of
# session 102's call-fa4.sh with the per-tile math's rungs in place of the ping-pong's.
# STEPS (in this order, each given the budget left):
#   tests   the Gluon FMHA's ping-pong candidates at D 128 against the fp32 reference (the
#           tuner's usual picks at the sweep's head dim), and the packed conversion of P bit for
#           bit against the scalar one on every config kind (test_packed_p_conversion_*); the
#           outcome is kept in /tmp for the measure step of a later call to the same machine
#   measure FA4 beside own Triton, the Gluon FMHA (full: raw-score mask, packed P), its
#           scalar-cvt rung (raw-score mask, one conversion a score) and its scaled-mask rung
#           (the per-tile math up to session 104) and SDPA cuDNN at the original study's causal
#           shapes (sweeps/thesis.yaml's FMHA group: b1, 32/8 heads, D 128, fp16, 256-16k),
#           so what each per-tile change is worth, and the gap to FA4, are read within one run
#           (thesis-tm-*). Where the tests failed, only the scaled-mask rung (the tested math)
#           runs beside FA4 and cuDNN (thesis-tm-fail-*)
#   ncu     own Triton, the scaled-mask rung and FA4 at causal 4k (active cycles per kernel)
set -u
t0=$(date +%s); B=${BUDGET:-540}
export TRITON_INTERPRET=0 TRITON_CACHE_DIR=/tmp/tcache FLASHINFER_WORKSPACE_BASE=/tmp/fi \
  FLASH_ATTENTION_CUTE_DSL_CACHE_ENABLED=1
. scripts/device_env.sh > /dev/null || exit 1
case "$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)" in
  *H200*) gpu=h200; sfx=s${SESSION:-106} ;;
  *) gpu=h100; sfx=s${SESSION:-106}h ;;
esac
L=results/_scratch/$gpu/_logs; mkdir -p $L
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm,driver_version --format=csv,noheader | tee -a $L/gpu-$sfx.txt
python3 -c "import flash_attn.cute; print('FA4 imports')" 2>/dev/null || echo "FA4 not importable (yet)"
left() { echo $(( B - ($(date +%s) - t0) )); }
STEPS=" ${STEPS:-measure} "
if [[ $STEPS == *" tests "* ]]; then
  t=$(left); t=$(( t < ${TEST_S:-240} ? t : ${TEST_S:-240} ))
  # -v: each test named as it ends, so a call stopped at its limit still says which passed (session 108);
  # $GPU_TEST_XDIST (scripts/device_env.sh, session 109): the compiles on 8 cores, not one
  timeout -k 10 $t python3 -m pytest -v -m gpu tests/gpu/test_gluon_attention_gpu.py \
    -k "(pingpong and -128-) or packed" -p no:cacheprovider --durations=5 ${GPU_TEST_XDIST:-} \
    > $L/gluon-tilemath-gpu-tests-$sfx.txt 2>&1
  rc=$?; echo $rc > /tmp/tm-tests-rc
  echo "tests rc=$rc t=$(( $(date +%s) - t0 )): $(tail -1 $L/gluon-tilemath-gpu-tests-$sfx.txt)"
  [ $rc -eq 0 ] || grep -E "^(E |FAILED|ERROR)" $L/gluon-tilemath-gpu-tests-$sfx.txt | head -30 | cut -c1-400
fi
if [[ $STEPS == *" measure "* ]]; then
  id=thesis-tm-$sfx; fa4=flash-attn-4,
  python3 -c "import flash_attn.cute" 2>/dev/null || { id=thesis-tm-nofa4-$sfx; fa4=; }
  # RUNGS: the Gluon FMHA's per-tile rungs beside own Triton and it (session 106 ran the
  # default; later in session 106 the full kernel's causal mask became one compare, and
  # RUNGS=two-compare-mask,scalar-cvt,scaled-mask times what that is worth too)
  rungs=$(echo "${RUNGS:-scalar-cvt,scaled-mask}" | sed 's/\([^,]*\)/own-triton-gluon-\1/g')
  providers=${fa4}own-triton,own-triton-gluon,$rungs,sdpa-cudnn
  if [ "$(cat /tmp/tm-tests-rc 2>/dev/null)" != 0 ]; then
    echo "the new per-tile math left out (tests rc=$(cat /tmp/tm-tests-rc 2>/dev/null || echo 'not run on this machine'))"
    id=${id/-tm-/-tm-fail-}
    providers=${fa4}own-triton-gluon-scaled-mask,sdpa-cudnn
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
    "c4k attention batch=1 q_heads=32 kv_heads=8 q_len=4096 kv_len=4096 causal=true dtype=fp16 own-triton own-triton-gluon-scaled-mask flash-attn-4"
fi
tar czf $OUT/tune-cache.tgz -C $HARNESS_CACHE_DIR tune 2>/dev/null
tar czf $OUT/results.tgz results/_scratch 2>/dev/null
echo "t=$(( $(date +%s) - t0 ))"
