# Session 89, call 1 (GPU=h100; the first H100 lent since session 60). The H100 halves of issues
# 20.1 and 21.2, in one call that the next calls resume (resume.sh):
# 1. own CUTLASS's 128x224 tiles against fp32 (new in session 88; the grid's mid-band tuner
#    offers them), so that the grid below times no untested kernel;
# 2. 21.2: the CuTe FA3-class FMHA's GPU tests, then fmha_prefill (D 64 / 128 / 256, S 1k-16k,
#    causal and not) with cuDNN and own-cutlass-fa3: the H100's last such run was session 51,
#    before sessions 62-63's tile rule and 16-byte O store (0.946x cuDNN at D 128);
# 3. 20.1: the whole gemm_llama grid, cuBLAS, own CUTLASS and own Triton (360 points) in one
#    run, which the budget cuts and resume.sh resumes (the tune pass alone is ~450 s from empty).
# Carry `.whl` and `.cache` (INC=1).
set -u
t0=$(date +%s)
B=${BUDGET:-540}
. scripts/device_env.sh >/dev/null || exit 1
export TRITON_INTERPRET=0 HARNESS_CACHE_DIR=/tmp/hcache TRITON_CACHE_DIR=/tmp/tcache
export $(cat .cache/gitid)
L=results/_scratch/h100/_logs; mkdir -p $L
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm,driver_version --format=csv,noheader | tee $OUT/gpu.txt
timeout 150 python3 -m pytest -m gpu -q -p no:cacheprovider tests/cutlass/test_gpu_cutlass.py \
  -k "128x224" > $L/cutlass-224-gpu-tests-s89h.txt 2>&1
t224=$?; echo "224 tests rc=$t224 t=$(( $(date +%s) - t0 )): $(tail -1 $L/cutlass-224-gpu-tests-s89h.txt)"
GPU=h100 BUDGET=$(( B - $(date +%s) + t0 )) STEPS=grid TAG=s89h \
  GRID_PROVIDERS=sdpa-cudnn,own-cutlass-fa3 bash scripts/fa3_prefill_call.sh
[ $t224 -eq 0 ] || { echo "the 128x224 tests failed: no GEMM grid"; exit 0; }
GPU=h100 bash scripts/gpu_measure.sh $(( B - $(date +%s) + t0 )) \
  "gemm_llama-s89h sweep=gemm_llama 'sweep.groups.0.providers=[cublas,own-cutlass,own-triton]' max_points=360"
grep -h "tune pass\|prebuild\|built" results/_scratch/h100/_logs/gemm_llama-s89h.txt | cut -c1-200 | head -5
echo "t=$(( $(date +%s) - t0 ))"
