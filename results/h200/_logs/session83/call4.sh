# Session 83, call 4 (nvidia-h200): where the Gluon split GEMM's time goes at Llama-3.1-405B's
# fused QKV (the gap to cuBLAS is not the second launch: call 1's in-place sum did not close it).
# Nsight Compute (caches flushed before each kernel, clocks not locked) over cuBLAS and the
# Gluon split twins, summed apart and in place, at M 256 and 128. Carry `.whl` and `.cache`.
set -u
bash scripts/gemm_ncu_call.sh \
  "gl256 256 2304 16384 gl:64x144s6ppk2 gl:128x144s6k4 gl:64x144s6ppk2i gl:128x144s6k4i" \
  "gl128 128 2304 16384 gl:64x144s6ppk4 gl:128x144s6k8 gl:64x144s6ppk4i"
