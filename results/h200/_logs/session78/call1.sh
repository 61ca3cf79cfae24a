# Session 78, call 1 (nvidia-h200): session 77's two owed calls in one.
# (a) call7: what the swapped configs are worth at tf32 nn (C^T = B^T A^T, B read in place as
#     wgmma's register operand): own Triton against its `no-swap-ab` rung beside cuBLAS, M 128 and
#     1024 on the 8 Llama weights, one run on one card.
# (b) call8, widened: where between a 4x (240 MiB) and an 8x (480 MiB) flush small reads slow
#     down, and whether the tuners' 256 MiB flush (kernels/bench_cold.py) is past it: one-pass
#     reads of 16, 32, 64 and 128 MiB behind 120, 256, 360 and 480 MiB, then fp8 64x4096x4096 (a
#     16 MiB weight) behind 120 and 256 MiB.
set -u
nvidia-smi --query-gpu=uuid,power.limit,clocks.max.sm --format=csv,noheader
S="sweep=probes_read_once 'sweep.groups.0.providers=[triton-stream]' 'sweep.groups.0.product.working_set_bytes=[16777216,33554432,67108864,134217728]'"
G="sweep=gemm_llama_lowp 'sweep.groups.0.providers=[cublaslt-fp8-fastaccum,own-triton]' 'sweep.groups.0.product.m=[64]' 'sweep.groups.0.zip={n:[4096],k:[4096]}' 'sweep.groups.1.providers=[hipblaslt]'"
GPU=h200 bash scripts/gpu_measure.sh 150 \
  "knee-f2-s78 $S" "knee-f4.27-s78 $S protocol.l2_flush_factor=4.2667" \
  "knee-f6-s78 $S protocol.l2_flush_factor=6" "knee-f8-s78 $S protocol.l2_flush_factor=8" \
  "kneegemm-f2-s78 $G" "kneegemm-f4.27-s78 $G protocol.l2_flush_factor=4.2667"
mv $OUT/results.tgz $OUT/results-knee.tgz
GPU=h200 bash scripts/gpu_measure.sh 330 \
  "gemm_llama_lowp-tf32nn-swapab-s78 sweep=gemm_llama_lowp 'sweep.groups.0.providers=[hipblaslt]' 'sweep.groups.1.providers=[cublas,own-triton,own-triton-no-swap-ab]' 'sweep.groups.1.product={m:[128,1024],layout:[nn]}'"
