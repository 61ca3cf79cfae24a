# Session 83, call 1 (nvidia-h200): the Gluon GEMM's split-K summed in place (SUM_IN_PLACE: each
# tile row slice's last unit to count in sums the slice's parts in the GEMM's own launch), beside
# its twin summed by the second launch. The split GPU tests (the in-place twins three launches
# each, bit for bit against their apart twins), then the Llama-3.1-405B GEMMs at M 64-512 with
# cuBLAS and own Triton (session 82's `llama3_405b_gemm-split-s82` again, the tuner timing both
# sums). Carry `.whl` and `.cache`.
set -u
nvidia-smi --query-gpu=uuid,power.limit,clocks.max.sm --format=csv,noheader
t0=$(date +%s)
. scripts/device_env.sh >/dev/null || exit 1
TRITON_INTERPRET=0 timeout 150 python3 -m pytest -q -s -n 0 -m gpu tests/gpu/test_split_apart_gemm_gpu.py -k gluon > $OUT/split-gpu-tests.txt 2>&1
echo "gpu tests rc=$? t=$(( $(date +%s) - t0 ))"; grep -E "passed|failed|Error" $OUT/split-gpu-tests.txt | tail -5
left() { echo $(( ${BUDGET:-540} - ($(date +%s) - t0) )); }
GPU=h200 bash scripts/gpu_measure.sh $(left) "llama3_405b_gemm-inplace-s83 sweep=gemm_llama 'sweep.groups.0.zip.n=[2304,16384,13312,16384,16032]' 'sweep.groups.0.zip.k=[16384,2048,16384,6656,16384]' 'sweep.groups.0.product.m=[64,128,256,512]'"
# at most 8 files come back from $OUT: one tarball of the runs and their logs
tar czf $OUT/results.tgz -C results/_scratch h200
