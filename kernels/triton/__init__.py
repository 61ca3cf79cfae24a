"""Own Triton kernels: GEMM (gemm.py), attention (attention_prefill.py, attention_decode.py) and
the microbenchmarks' stream, pointer-chase and FMA kernels (microbench.py)."""
