# Session 102's FA4 call (BUDGET=s bash results/h100/_logs/session102/call-fa4.sh), the second
# back-to-back call to one warm H100 (wheel part 1 came in the first, part 2 in this one): FA4
# and FlashInfer beside own Triton and SDPA cuDNN at the original study's causal shapes
# (sweeps/thesis.yaml's FMHA group: b1, 32/8 heads, D 128, fp16, 256-16k; the GEMM group keeps
# cuBLAS only), so the gap to FA4 is read within one run on one card; then the ncu pair of
# the README's order item 2 at 1k and 4k (own Triton, own CUTLASS's FA3-class kernel, FA4).
set -u
t0=$(date +%s); B=${BUDGET:-540}; NCU_S=${NCU_S:-200}
export TRITON_INTERPRET=0 TRITON_CACHE_DIR=/tmp/tcache FLASHINFER_WORKSPACE_BASE=/tmp/fi \
  FLASH_ATTENTION_CUTE_DSL_CACHE_ENABLED=1
. scripts/device_env.sh > /dev/null || exit 1
python3 -c "import flash_attn.cute, flashinfer; print('FA4 and FlashInfer import')" || echo "vendors NOT importable"
left=$(( B - NCU_S - ($(date +%s) - t0) ))
GPU=h100 bash scripts/gpu_measure.sh $left "thesis-fa4-s103h sweep=thesis 'sweep.groups.0.providers=[cublas]' 'sweep.groups.1.providers=[flash-attn-4,flashinfer,own-triton,sdpa-cudnn]'"
grep -E "attn b1" results/_scratch/h100/_logs/thesis-fa4-s103h.txt | cut -c1-130
mkdir -p $OUT/ncu
OUT=$OUT/ncu timeout $(( B - ($(date +%s) - t0) - 10 )) bash scripts/provider_ncu_call.sh \
  "c1k attention batch=1 q_heads=32 kv_heads=8 q_len=1024 kv_len=1024 causal=true dtype=fp16 own-triton own-cutlass-fa3 flash-attn-4" \
  "c4k attention batch=1 q_heads=32 kv_heads=8 q_len=4096 kv_len=4096 causal=true dtype=fp16 own-triton own-cutlass-fa3 flash-attn-4"
echo "t=$(( $(date +%s) - t0 ))"
