# Session 78, call 3 (nvidia-h200): the Qwen2.5-7B decode preset, never run before (Mistral-7B's
# ran in session 33): its odd weights (N 4608, 3584, 37888 and the 152,064-row LM head; K 3584
# and 18944) put the own GEMMs' tuners on shapes the Llama grids do not hold.
set -u
nvidia-smi --query-gpu=uuid,power.limit,clocks.max.sm --format=csv,noheader
GPU=h200 bash scripts/gpu_measure.sh 500 "qwen2_5_7b_decode-s78 sweep=qwen2_5_7b_decode"
