# Session 77, call 1 (nvidia-h200): the flush-size A/B and the capped probe, on one card.
# Owed since session 76: the probe (256 MB flush, bursts) timed cuBLASLt 7-10% slower than the
# sweeps (2x L2 = 120 MB flush) at 4x28672x4096 and 64x4096x4096. Two runs of the same points,
# the second with a 4x-L2 flush (the tune cache is shared, so both time the same picks), then
# the probe at both shapes re-timed in the tuners' capped window with each contender's SM clock.
set -u
P="sweep=gemm_llama_lowp 'sweep.groups.0.providers=[cublaslt-fp8-fastaccum,own-triton]' 'sweep.groups.0.product.m=[1,4,32]' 'sweep.groups.0.zip={n:[28672,4096],k:[4096,4096]}' 'sweep.groups.1.providers=[hipblaslt]'"
nvidia-smi --query-gpu=uuid,power.limit,clocks.max.sm --format=csv,noheader
GPU=h200 bash scripts/gpu_measure.sh 300 "flush2-s77 $P" "flush4-s77 $P protocol.l2_flush_factor=4"
. scripts/device_env.sh >/dev/null
timeout 200 python3 scripts/gemm_decode_probe.py 4x28672x4096 64x4096x4096 --capped --seconds 40 \
  > "$OUT/probe-capped.txt" 2>&1
echo "probe rc=$?"; tail -25 "$OUT/probe-capped.txt"
