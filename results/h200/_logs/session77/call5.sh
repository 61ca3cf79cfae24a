# Session 77, call 5 (nvidia-h200): call 4's read-flush series again in the reverse order on
# one card (so a drift over the call cannot pass for the flush's effect), then fp8 M 64 at
# N 4096 with the transposed partner's 512-byte twin offered (the capped probe's fastest).
set -u
S="sweep=probes_read_once 'sweep.groups.0.providers=[triton-stream]' 'sweep.groups.0.product.working_set_bytes=[16777216,33554432,50331648,67108864,100663296,134217728,201326592,268435456,536870912]'"
nvidia-smi --query-gpu=uuid,power.limit --format=csv,noheader
GPU=h200 bash scripts/gpu_measure.sh 420 \
  "readonce-f8b-s77 $S protocol.l2_flush_factor=8" "readonce-f4b-s77 $S protocol.l2_flush_factor=4" \
  "readonce-f2b-s77 $S" "readonce-f1b-s77 $S protocol.l2_flush_factor=1" \
  "gemm_llama_lowp-fp8-m64n4096-s77 sweep=gemm_llama_lowp 'sweep.groups.0.providers=[cublaslt-fp8,cublaslt-fp8-fastaccum,own-triton]' 'sweep.groups.0.product.m=[64]' 'sweep.groups.0.zip={n:[4096,4096,6144],k:[4096,14336,4096]}' 'sweep.groups.1.providers=[hipblaslt]'"
