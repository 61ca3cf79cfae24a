# Session 59, call 3 (GPU=h100): the Gluon GEMM's GPU tests again (the deep twins among the
# candidates), then gemm_llama's mid band (M 128-1024, 32 points) with cuBLAS and own Triton
# under the sweep's protocol, as gemm_llama_mid-s59 (scripts/gpu_measure.sh, resumable).
# Carries wheel part 1 for call 4 (the serving grid) beside it.
set -u
t0=$(date +%s)
export TRITON_INTERPRET=0 TRITON_CACHE_DIR=/tmp/tcache
export $(cat .cache/gitid)
. scripts/device_env.sh || exit 1
L=results/_scratch/$GPU/_logs; mkdir -p $L
timeout 150 python3 -m pytest -q -m gpu -p no:cacheprovider tests/gpu/test_gluon_gemm_gpu.py > $L/gluon-gemm-gpu-tests-twins.txt 2>&1
echo "gluon GPU tests rc=$? t=$(( $(date +%s) - t0 ))"; tail -2 $L/gluon-gemm-gpu-tests-twins.txt
bash scripts/gpu_measure.sh $(( ${BUDGET:-420} - ($(date +%s) - t0) )) \
  "gemm_llama_mid-s59 sweep=gemm_llama 'sweep.groups.0.product.m=[128,256,512,1024]'"
grep -h "tune pass" $L/gemm_llama_mid-s59.txt | cut -c1-200
echo "t=$(( $(date +%s) - t0 ))"
exit 0
