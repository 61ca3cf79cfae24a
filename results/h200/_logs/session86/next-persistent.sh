# Owed after session 86 (nvidia-h200; the H100 likewise with GPU=h100): the Gluon FMHA's
# persistent rung (own-triton-gluon-persistent), written and AOT-checked in session 86, not yet
# run on a GPU.
# 1. its GPU tests against fp32 (every candidate; two cases with more work items than SMs);
# 2. an A/B in one run: the headline Gluon FMHA, the persistent rung and cuDNN at D 128, causal
#    and not, fmha_prefill's five lengths (16k tokens a batch), then Qwen2.5-7B's prefill shape
#    (28 / 4 heads, 2k causal, batch 4-16), where the headline ran 0.950-0.958x cuDNN.
# Carry `.whl` and `.cache`.
set -u
t0=$(date +%s)
. scripts/device_env.sh >/dev/null || exit 1
export TRITON_INTERPRET=0 HARNESS_CACHE_DIR=/tmp/hcache TRITON_CACHE_DIR=/tmp/tcache
export $(cat .cache/gitid)
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm,driver_version --format=csv,noheader | tee $OUT/gpu.txt
timeout 240 python3 -m pytest -m gpu -q -p no:cacheprovider tests/gpu/test_gluon_attention_gpu.py \
  -k "persistent" > $OUT/gluon-attention-persistent-gpu-tests.txt 2>&1
rc=$?; echo "tests rc=$rc t=$(( $(date +%s) - t0 ))"; tail -3 $OUT/gluon-attention-persistent-gpu-tests.txt
left=$(( ${BUDGET:-540} - $(date +%s) + t0 ))
# (session 87) a failed or hung test leaves the rung out of the A/B: a wrong kernel is no
# speed, and a hang would spend the call's budget again inside the sweep
P=', own-triton-gluon-persistent'; [ $rc -eq 0 ] || P=''
A='{op: attention, providers: [sdpa-cudnn, own-triton-gluon'$P'], product: {causal: [false, true]}, fixed: {q_heads: 32, kv_heads: 8, head_dim: 128, dtype: bf16}, zip: {batch: [16, 8, 4, 2, 1], q_len: [1024, 2048, 4096, 8192, 16384], kv_len: [1024, 2048, 4096, 8192, 16384]}}'
Q='{op: attention, providers: [sdpa-cudnn, own-triton-gluon'$P'], product: {batch: [4, 8, 16]}, fixed: {q_heads: 28, kv_heads: 4, q_len: 2048, kv_len: 2048, head_dim: 128, causal: true, dtype: bf16}}'
GPU=h200 bash scripts/gpu_measure.sh $left "fmha-persistent-${RUN:-s87} sweep=fmha_prefill 'sweep.groups=[$A,$Q]'"
python3 scripts/attention_ratio_table.py results/_scratch/h200/fmha-persistent-${RUN:-s87} 2>&1 | tail -30
