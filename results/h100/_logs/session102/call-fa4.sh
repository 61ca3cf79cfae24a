# Session 102's FA4 calls (BUDGET=s STEP=measure|ncu bash results/h100/_logs/session102/call-fa4.sh),
# back-to-back calls to one warm H100 (or H200) after the wheel parts (part 1 came with the first call,
# part 2 with STEP=measure's).
# STEP=measure: the Gluon FMHA's ping-pong candidates against the fp32 reference at D 128 (every
#   one the tuner may pick at the sweep's head dim), then FA4 beside own Triton, the Gluon FMHA
#   with and without the ping-pong candidates, and SDPA cuDNN at the original study's causal
#   shapes (sweeps/thesis.yaml's FMHA group: b1, 32/8 heads, D 128, fp16, 256-16k; the GEMM group
#   keeps cuBLAS only), so the gap to FA4 is read within one run. Tests that fail or do not end
#   within TEST_S (a turn barrier that never completes hangs) leave the ping-pong candidates out:
#   the sweep then times FA4 beside the Gluon FMHA without them and cuDNN.
# STEP=ncu: the README's order item 2, ncu of own Triton, own CUTLASS's FA3-class kernel and FA4
#   at causal 1k and 4k.
set -u
t0=$(date +%s); B=${BUDGET:-540}
export TRITON_INTERPRET=0 TRITON_CACHE_DIR=/tmp/tcache FLASHINFER_WORKSPACE_BASE=/tmp/fi \
  FLASH_ATTENTION_CUTE_DSL_CACHE_ENABLED=1
. scripts/device_env.sh > /dev/null || exit 1
# on whichever Hopper came (the H200 when no H100 does): its scratch folder and run-id suffix
case "$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)" in
  *H200*) gpu=h200; sfx=s103 ;;
  *) gpu=h100; sfx=s103h ;;
esac
L=results/_scratch/$gpu/_logs; mkdir -p $L
python3 -c "import flash_attn.cute; print('FA4 imports')" || echo "FA4 NOT importable: its rows are skipped"
if [ "${STEP:-measure}" = measure ]; then
  timeout -k 10 ${TEST_S:-200} python3 -m pytest -q -m gpu tests/gpu/test_gluon_attention_gpu.py \
    -k "pingpong and -128-" -p no:cacheprovider -x --durations=5 > $L/gluon-pingpong-gpu-tests-$sfx.txt 2>&1
  rc=$?; echo "tests rc=$rc t=$(( $(date +%s) - t0 )): $(tail -1 $L/gluon-pingpong-gpu-tests-$sfx.txt)"
  id=thesis-fa4-$sfx
  providers=flash-attn-4,own-triton,own-triton-gluon,own-triton-gluon-no-pingpong,sdpa-cudnn
  if [ $rc -ne 0 ]; then
    grep -E "^(E |FAILED|ERROR)" $L/gluon-pingpong-gpu-tests-$sfx.txt | head -30 | cut -c1-400
    echo "ping-pong left out (tests rc=$rc)"
    id=thesis-fa4-nopp-$sfx; providers=flash-attn-4,own-triton-gluon-no-pingpong,sdpa-cudnn
  fi
  left=$(( B - ($(date +%s) - t0) ))
  GPU=$gpu bash scripts/gpu_measure.sh $left "$id sweep=thesis 'sweep.groups.0.providers=[cublas]' 'sweep.groups.1.providers=[$providers]'"
  grep -E "attn b1" $L/$id.txt | cut -c1-140
else
  OUT=$OUT timeout $(( B - ($(date +%s) - t0) - 10 )) bash scripts/provider_ncu_call.sh \
    "c1k attention batch=1 q_heads=32 kv_heads=8 q_len=1024 kv_len=1024 causal=true dtype=fp16 own-triton own-cutlass-fa3 flash-attn-4" \
    "c4k attention batch=1 q_heads=32 kv_heads=8 q_len=4096 kv_len=4096 causal=true dtype=fp16 own-triton own-cutlass-fa3 flash-attn-4"
  tar czf $OUT/tune-cache.tgz -C $HARNESS_CACHE_DIR tune 2>/dev/null
fi
echo "t=$(( $(date +%s) - t0 ))"
