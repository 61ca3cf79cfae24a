# Owed after session 81 (nvidia-h200; carry `.whl`, `.cache`): Nsight Compute at Llama-3.1-405B's
# fused QKV GEMM, 256x2304x16384 nt, where own Triton ran 0.759x cuBLAS (`llama3_405b_decode-s81`).
# Question: is the `tl` kernel's split-K reduction (the last unit of a tile sums every partial)
# where the time goes? cuBLAS's split-K GEMM and its splitKreduce kernel show as two kernels;
# each own split config is set beside the same tile at whole K / split (K 4096 = 16384 / 4,
# K 5504 ~ 16384 / 3), which does one unit's main loop with no partials and no reduction.
bash scripts/gemm_ncu_call.sh \
  "qkv256 256 2304 16384 128x128x128s3k3w8 128x256x64s4k4w8 128x256x64s4k7w8" \
  "qkv256-k4096 256 2304 4096 128x256x64s4w8" \
  "qkv256-k5504 256 2304 5504 128x128x128s3w8"
