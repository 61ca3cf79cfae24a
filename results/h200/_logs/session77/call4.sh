# Session 77, call 4 (nvidia-h200): how much of an operand survives the sweep's read flush.
# Call 1 found own Triton and cuBLASLt at 1x28672x4096 fp8 (a 117 MB weight, 1.96x the 60 MB
# L2) 3.8% and 9.1% slower behind a 4x-L2 flush than behind the default 2x; smaller weights did
# not move. Here: one-pass reads of 16-512 MB (probes_read_once, triton-stream) behind flushes
# of 1, 2, 4 and 8 times the L2 and with no flush (hot), then the GEMM points again at 8x.
set -u
S="sweep=probes_read_once 'sweep.groups.0.providers=[triton-stream]' 'sweep.groups.0.product.working_set_bytes=[16777216,33554432,50331648,67108864,100663296,134217728,201326592,268435456,536870912]'"
G="sweep=gemm_llama_lowp 'sweep.groups.0.providers=[cublaslt-fp8-fastaccum,own-triton]' 'sweep.groups.0.product.m=[1,4,32]' 'sweep.groups.0.zip={n:[28672,4096],k:[4096,4096]}' 'sweep.groups.1.providers=[hipblaslt]'"
nvidia-smi --query-gpu=uuid,power.limit --format=csv,noheader
GPU=h200 bash scripts/gpu_measure.sh 480 "flush8-s77 $G protocol.l2_flush_factor=8" \
  "readonce-f2-s77 $S" "readonce-f4-s77 $S protocol.l2_flush_factor=4" \
  "readonce-f8-s77 $S protocol.l2_flush_factor=8" "readonce-f1-s77 $S protocol.l2_flush_factor=1" \
  "readonce-hot-s77 $S protocol.l2=hot"
