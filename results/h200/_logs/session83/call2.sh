# Session 83, call 2 (nvidia-h200): the Gluon GEMM's split twins two per schedule, with the wave
# parts at 128-row slices in their pool (256x144 cooperative, 128x144 ping-pong; the in-place
# sum no longer offered, only pinned by the tests). The split GPU tests, then Llama-3.1-405B's
# decode preset whole (owed since session 82: its GEMMs re-tune with the split paths). Carry
# `.whl` and `.cache`; a second call resumes the preset from the machine's scratch folder.
set -u
nvidia-smi --query-gpu=uuid,power.limit,clocks.max.sm --format=csv,noheader
t0=$(date +%s)
. scripts/device_env.sh >/dev/null || exit 1
TRITON_INTERPRET=0 timeout 170 python3 -m pytest -q -s -n 0 -m gpu tests/gpu/test_split_apart_gemm_gpu.py -k gluon > $OUT/split-gpu-tests-2.txt 2>&1
echo "gpu tests rc=$? t=$(( $(date +%s) - t0 ))"; grep -E "passed|failed|Error" $OUT/split-gpu-tests-2.txt | tail -5
left() { echo $(( ${BUDGET:-540} - ($(date +%s) - t0) )); }
GPU=h200 bash scripts/gpu_measure.sh $(left) "llama3_405b_decode-s83 sweep=llama3_405b_decode"
