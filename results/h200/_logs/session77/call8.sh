# Session 77, call 8 (nvidia-h200): where between a 4x (240 MiB) and an 8x (480 MiB) flush the
# small reads slow down, and whether the tuners' 256 MiB flush (kernels/bench_cold.py) is past
# it: one-pass reads of 16 and 64 MiB behind 120, 256, 360 and 480 MiB, then fp8 64x4096x4096 (a
# 16 MiB weight) behind 120 and 256 MiB. One card, one call (cut to the 288 s left).
set -u
S="sweep=probes_read_once 'sweep.groups.0.providers=[triton-stream]' 'sweep.groups.0.product.working_set_bytes=[16777216,67108864]'"
G="sweep=gemm_llama_lowp 'sweep.groups.0.providers=[cublaslt-fp8-fastaccum,own-triton]' 'sweep.groups.0.product.m=[64]' 'sweep.groups.0.zip={n:[4096],k:[4096]}' 'sweep.groups.1.providers=[hipblaslt]'"
nvidia-smi --query-gpu=uuid,power.limit --format=csv,noheader
GPU=h200 bash scripts/gpu_measure.sh 120 \
  "knee-f2-s77 $S" "knee-f4.27-s77 $S protocol.l2_flush_factor=4.2667" \
  "knee-f6-s77 $S protocol.l2_flush_factor=6" "knee-f8-s77 $S protocol.l2_flush_factor=8" \
  "kneegemm-f2-s77 $G" "kneegemm-f4.27-s77 $G protocol.l2_flush_factor=4.2667"
