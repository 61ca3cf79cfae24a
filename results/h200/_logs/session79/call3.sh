# Session 79, call 3 (nvidia-h200): the 112-wide Gluon tiles (three N parts, 64 + 32 + 16) on a
# GPU for the first time: every wave tile against an fp32 reference (bf16 both B layouts, fp8),
# then Qwen2.5-7B's five projection GEMMs at M 128-512 with cuBLAS, own Triton (both wave
# widths offered) and the rung without them, one run. Carry `.whl` and `.cache`.
set -u
nvidia-smi --query-gpu=uuid,power.limit,clocks.max.sm --format=csv,noheader
. scripts/device_env.sh > /dev/null || exit 1
timeout 170 python3 -m pytest -q -m gpu -n 6 --dist load tests/gpu/test_gluon_gemm_gpu.py -k wave 2>&1 |
  tail -8 | tee $OUT/gluon-wave-gpu-tests.txt
GPU=h200 bash scripts/gpu_measure.sh ${BUDGET:-290} "qwen2_5_7b_gemm-wave3-s79 sweep=gemm_llama \
'sweep.groups.0.providers=[cublas,own-triton,own-triton-no-wave-tiles]' \
'sweep.groups.0.product.m=[128,256,512]' \
'sweep.groups.0.zip.n=[4608,3584,37888,3584,152064]' 'sweep.groups.0.zip.k=[3584,3584,3584,18944,3584]'"
