"""The project's own CUTLASS / CuTe kernels: .cu sources built by nvcc into C-ABI libraries.

build.py (nvcc, header discovery, content-keyed cache, ctypes loading), gemm.py (SM90 WGMMA and
SM80 multistage GEMM configs), gemm_tune.py (per-shape choice), fmha.py (CuTe FMHA forward),
prebuild.py (build every library a sweep needs, in parallel). Importing this package runs nothing.
"""
