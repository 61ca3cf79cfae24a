# Session 80, call 2 (nvidia-h200): the Mixtral-8x7B decode preset, first run with the layer
# ops (322 points: GEMMs incl. the experts at balanced top-2 routing, attention, norms, rotary,
# KV append, SiLU-and-multiply; hipBLASLt and `flash-attn` skip here).
# Carry `.whl` and `.cache`; resume with results/_scratch/h200 carried.
set -u
nvidia-smi --query-gpu=uuid,power.limit,clocks.max.sm --format=csv,noheader
GPU=h200 bash scripts/gpu_measure.sh ${BUDGET:-540} "mixtral_8x7b_decode-s80 sweep=mixtral_8x7b_decode"
