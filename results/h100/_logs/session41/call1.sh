# Session 41, call 1 on nvidia-h100-x1: what cuBLAS runs at large M, and time and energy per GEMM
# of every provider and own CUTLASS candidate back to back at the power cap (issue 20.1 / 20.2).
set -u
t0=$(date +%s)
. scripts/device_env.sh || exit 1
export TRITON_INTERPRET=0 HARNESS_CACHE_DIR=/tmp/hcache TRITON_CACHE_DIR=/tmp/tcache
export $(cat .cache/gitid)
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm --format=csv,noheader | tee $OUT/gpu.txt
timeout 60 python3 scripts/cublas_kernels.py $OUT/cublas_kernels_large.csv --m 2048,8192,16384 > $OUT/cublas_kernels_large.txt 2>&1
echo "cublas_kernels rc=$? t=$(( $(date +%s) - t0 ))"
X=sm90-coop-128x256:heuristic/sw8,sm90-coop-256x128:heuristic/sw4,sm90-streamk-128x256:data-parallel/sw4,sm90-streamk-128x256:heuristic/sw4
timeout -s INT 480 python3 scripts/sustained_energy.py $OUT/sustained_energy.csv --extra $X --seconds 1.2 --warmup 0.6 > $OUT/sustained_energy.txt 2>&1
echo "sustained rc=$? t=$(( $(date +%s) - t0 ))"
tar cJf $OUT/cutlass-cache.tar.xz -C /tmp/cutlass-cache . 2>/dev/null
grep -v "^build\|skip" $OUT/sustained_energy.txt | tail -60
