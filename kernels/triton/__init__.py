"""Own Triton kernels: GEMM (gemm.py) and attention (attention_prefill.py, attention_decode.py)."""
