# Session 84, call 2 (nvidia-h200): (1) what CUTLASS's split-K reduction costs at Llama-3.1-405B's
# fused QKV (256x2304x16384), where call 1's 2x1-cluster split-K config ran 0.847x cuBLAS: its
# four peers per tile add their partials in turn (CUTLASS's deterministic reduction, a chain on
# the tile's critical path); RunOptions(reduction="nondeterministic") adds them at once. The
# libraries again (sm90_gemm.cu changed), the config's GPU tests (now with the atomic reduction),
# then scripts/cutlass_option_probe.py in bursts and at the power cap. (2) add-RMSNorm at N 4096
# to 16384 with the new rung `own-triton-weight-late` (session 82's weight-load order) beside the
# headline and torch.compile: what the change is worth per m, on one card (owed since session
# 83's 405B preset). Carry `.whl` and `.cache` (INC=1's headers).
set -u
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm,driver_version --format=csv,noheader
t0=$(date +%s)
. scripts/device_env.sh >/dev/null || exit 1
export TRITON_INTERPRET=0 TRITON_CACHE_DIR=/tmp/tcache
L=results/_scratch/h200/_logs; mkdir -p $L
C2=sm90-streamk-128x144-c2x1 SK=sm90-streamk-128x128
timeout 240 python3 -m harness_kernels.cutlass.prebuild --gemm bf16:nt --config $C2 --config $SK > $L/call2-prebuild.txt 2>&1
echo "prebuild rc=$? t=$(( $(date +%s) - t0 )): $(tail -1 $L/call2-prebuild.txt)"
timeout 120 python3 -m pytest -v -n 0 -m gpu tests/cutlass/test_gpu_cutlass.py -k "128x144 and nt" -p no:cacheprovider -rs \
  > $L/cutlass-128x144-nondet-gpu-tests.txt 2>&1
echo "gpu tests rc=$? t=$(( $(date +%s) - t0 ))"; tail -1 $L/cutlass-128x144-nondet-gpu-tests.txt
S="$C2:split-kx4/sw1 $C2:split-kx4/sw1/nondet $C2:split-kx2/sw1 $C2:split-kx2/sw1/nondet $SK:heuristic/sw1 $SK:heuristic/sw1/nondet"
timeout 90 python3 scripts/cutlass_option_probe.py 256x2304x16384 $S > $L/cutlass-option-probe.txt 2>&1
echo "probe rc=$? t=$(( $(date +%s) - t0 ))"; cat $L/cutlass-option-probe.txt | tail -9
timeout 120 python3 scripts/cutlass_option_probe.py 256x2304x16384 $S --capped > $L/cutlass-option-probe-capped.txt 2>&1
echo "capped probe rc=$? t=$(( $(date +%s) - t0 ))"; cat $L/cutlass-option-probe-capped.txt | tail -9
left() { echo $(( ${BUDGET:-540} - ($(date +%s) - t0) )); }
GPU=h200 bash scripts/gpu_measure.sh $(left) "add_rmsnorm-weight-s84 sweep=layer_ops 'sweep.groups=[{op: add_rmsnorm, providers: [own-triton, own-triton-weight-late, torch-compile], product: {m: [1, 16, 64, 256, 512, 2048, 8192], n: [4096, 8192, 16384]}, fixed: {dtype: bf16}}]'"
