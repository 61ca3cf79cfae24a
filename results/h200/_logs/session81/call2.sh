# Session 81, call 2 (nvidia-h200): the Llama-3.1-405B decode preset (TP 8, batch 1-512, KV 4k),
# its first run with the layer ops (310 points: the five projection GEMMs with N or K over 8 ranks,
# GQA 16/1 attention, norms, rotary, the KV append, SiLU-and-multiply; hipBLASLt and `flash-attn`
# skip here). Carry `.whl` and `.cache`; resume on the warm machine (its scratch folder) or with
# results/_scratch/h200 carried.
set -u
nvidia-smi --query-gpu=uuid,power.limit,clocks.max.sm --format=csv,noheader
GPU=h200 bash scripts/gpu_measure.sh ${BUDGET:-540} "llama3_405b_decode-s81 sweep=llama3_405b_decode"
