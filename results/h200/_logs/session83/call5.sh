# Session 83, call 5 (nvidia-h200): own CUTLASS (clusters with TMA multicast, CUTLASS's split-K and
# stream-K scheduler) beside cuBLAS and own Triton at Llama-3.1-405B's five GEMMs, M 256: call 4's
# ncu put own Triton's gap at the 405B QKV in the split GEMM's main loop (27% more L2 bytes than
# cuBLAS's 1x2-cluster kernel), which Triton 3.6's Gluon cannot multicast. CUTLASS's headers
# carried; the runner prebuilds the libraries. Carry `.whl` and `.cache`.
set -u
nvidia-smi --query-gpu=uuid,power.limit,clocks.max.sm --format=csv,noheader
GPU=h200 bash scripts/gpu_measure.sh ${BUDGET:-280} "llama3_405b_gemm-cutlass-s83 sweep=gemm_llama 'sweep.groups.0.providers=[cublas,own-cutlass,own-triton]' 'sweep.groups.0.zip.n=[2304,16384,13312,16384,16032]' 'sweep.groups.0.zip.k=[16384,2048,16384,6656,16384]' 'sweep.groups.0.product.m=[256]'"
