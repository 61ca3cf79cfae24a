# Owed after session 88 (nvidia-h200; the H100 likewise with GPU=h100): own Triton's prefill
# headline with the persistent Gluon candidates tuned in when causal (96399d3), not yet on a GPU.
# 1. the Gluon FMHA's tuning GPU tests (the headline's causal tune over both candidate lists);
#    every persistent candidate passed against fp32 in session 88 (13 cases), the others before;
# 2. one run: own Triton's headline, own-triton-gluon, the rung without persistence and cuDNN at
#    D 128, causal and not, fmha_prefill's five lengths (16k tokens a batch), then Qwen2.5-7B's
#    2k causal prefill (28 / 4 heads) at batch 4-16, where session 88 read 0.944x cuDNN without
#    persistence and 0.997x with the persistent rung.
# Every Gluon FMHA tune entry is stale (the candidate lists changed): the run re-tunes them.
# Carry `.whl` and `.cache`.
set -u
t0=$(date +%s)
. scripts/device_env.sh >/dev/null || exit 1
export TRITON_INTERPRET=0 HARNESS_CACHE_DIR=/tmp/hcache TRITON_CACHE_DIR=/tmp/tcache
export $(cat .cache/gitid)
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm,driver_version --format=csv,noheader | tee $OUT/gpu.txt
timeout 200 python3 -m pytest -m gpu -q -p no:cacheprovider tests/gpu/test_gluon_attention_gpu.py \
  -k "tunes or headline or faster_of" > $OUT/gluon-attention-headline-gpu-tests.txt 2>&1
rc=$?; echo "tests rc=$rc t=$(( $(date +%s) - t0 ))"; tail -3 $OUT/gluon-attention-headline-gpu-tests.txt
[ $rc -eq 0 ] || { echo "the tests failed: no A/B"; exit 0; }
left=$(( ${BUDGET:-540} - $(date +%s) + t0 ))
P='[sdpa-cudnn, own-triton, own-triton-gluon, own-triton-gluon-not-persistent]'
A='{op: attention, providers: '$P', product: {causal: [false, true]}, fixed: {q_heads: 32, kv_heads: 8, head_dim: 128, dtype: bf16}, zip: {batch: [16, 8, 4, 2, 1], q_len: [1024, 2048, 4096, 8192, 16384], kv_len: [1024, 2048, 4096, 8192, 16384]}}'
Q='{op: attention, providers: '$P', product: {batch: [4, 8, 16]}, fixed: {q_heads: 28, kv_heads: 4, q_len: 2048, kv_len: 2048, head_dim: 128, causal: true, dtype: bf16}}'
GPU=${GPU:-h200} bash scripts/gpu_measure.sh $left "fmha-headline-${RUN:-s89} sweep=fmha_prefill 'sweep.groups=[$A,$Q]'"
python3 scripts/attention_ratio_table.py results/_scratch/${GPU:-h200}/fmha-headline-${RUN:-s89} 2>&1 | tail -30
