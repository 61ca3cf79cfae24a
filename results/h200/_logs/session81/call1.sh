# Session 81, call 1 (nvidia-h200): the Mixtral-8x7B decode preset whole with the tiny-N tiles
# (02103f0) for its router (session 80 ran the preset before them and the router alone after).
# This checkout began without a tune cache, so every point tunes from nothing.
# Carry `.whl` and `.cache`; resume with results/_scratch/h200 carried (or on the warm machine).
set -u
nvidia-smi --query-gpu=uuid,power.limit,clocks.max.sm --format=csv,noheader
GPU=h200 bash scripts/gpu_measure.sh ${BUDGET:-540} "mixtral_8x7b_decode-s81 sweep=mixtral_8x7b_decode"
