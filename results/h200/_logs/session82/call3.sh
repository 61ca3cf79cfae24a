# Session 82, call 3 (nvidia-h200): the Gluon GEMM's split-K twins (gemm_gluon.split_twins:
# 128x144 split 4 and 64x144 ping-pong split 2 at Llama-3.1-405B's fused QKV, M 256; fp32
# partials summed by the same second launch as the `tl` kernel's reduce_apart). GPU tests of both
# kernels' split paths, then the 405B GEMMs at M 64-512 again and gemm_llama's mid band (M
# 128-512) again, both with cuBLAS and own Triton. Carry `.whl` and `.cache`.
set -u
nvidia-smi --query-gpu=uuid,power.limit,clocks.max.sm --format=csv,noheader
t0=$(date +%s)
. scripts/device_env.sh >/dev/null || exit 1
TRITON_INTERPRET=0 timeout 130 python3 -m pytest -q -s -n 0 -m gpu tests/gpu/test_split_apart_gemm_gpu.py > $OUT/split-gpu-tests.txt 2>&1
echo "gpu tests rc=$? t=$(( $(date +%s) - t0 ))"; grep -E "passed|failed|Error" $OUT/split-gpu-tests.txt | tail -5
left() { echo $(( ${BUDGET:-540} - ($(date +%s) - t0) )); }
GPU=h200 bash scripts/gpu_measure.sh $(left) "llama3_405b_gemm-split-s82 sweep=gemm_llama 'sweep.groups.0.zip.n=[2304,16384,13312,16384,16032]' 'sweep.groups.0.zip.k=[16384,2048,16384,6656,16384]' 'sweep.groups.0.product.m=[64,128,256,512]'"
[ $(left) -gt 90 ] && GPU=h200 bash scripts/gpu_measure.sh $(left) "gemm_llama-mid-split-s82 sweep=gemm_llama 'sweep.groups.0.providers=[cublas,own-triton]' 'sweep.groups.0.product.m=[128,256,512]'"
# at most 8 files come back from $OUT: one tarball of the runs and their logs
tar czf $OUT/results.tgz -C results/_scratch h200
