# Session 48, call 6 (warm machine of call 5, its tune cache in /tmp/hcache): finish run 1
# (results/h100/gemm_llama-swap, 117 of 120 shapes on GPU-586a1606) here, then time a second
# run of the whole grid (gemm_llama-swap-b) on this machine for the rest of the call.
set -u
t0=$(date +%s)
. scripts/device_env.sh || exit 1
export TRITON_INTERPRET=0 HARNESS_CACHE_DIR=/tmp/hcache TRITON_CACHE_DIR=/tmp/tcache
export $(cat .cache/gitid)
L=results/_scratch/gpu/_logs; mkdir -p $L
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm,driver_version --format=csv,noheader | tee $L/call6-gpu.txt
timeout -s INT 240 python3 -m harness.cli run sweep=gemm_llama 'sweep.groups.0.providers=[cublas,own-cutlass,own-triton]' \
  max_points=360 results_dir=results/h100 run_id=gemm_llama-swap progress=false > $L/gemm_llama-swap-call6.txt 2>&1
echo "resume rc=$? t=$(( $(date +%s) - t0 )) $(tail -1 $L/gemm_llama-swap-call6.txt)"
tar czf $OUT/run1.tgz results/h100/gemm_llama-swap
left=$(( 560 - ($(date +%s) - t0) ))
timeout -s INT $left python3 -m harness.cli run sweep=gemm_llama 'sweep.groups.0.providers=[cublas,own-cutlass,own-triton]' \
  max_points=360 results_dir=results/_scratch/gpu run_id=gemm_llama-swap-b progress=false > $L/gemm_llama-swap-b-call6.txt 2>&1
echo "run2 rc=$? t=$(( $(date +%s) - t0 ))"
tar czf $OUT/results.tgz results/_scratch/gpu
python3 scripts/gemm_ratio_table.py results/h100/gemm_llama-swap 2>&1 | tail -8
exit 0
