# Session 85, call 4 (nvidia-h200): why the Gluon GEMM runs 3-6% lower SM clocks than the `tl`
# kernel at the same ~690 W (gemm-ties-s85, fp8 and bf16, M >= 2048): Nsight Compute's full set
# over fp8 4096x8192x8192 for cuBLASLt (both rows), the `tl` pick (128x256x128, 3 stages, 8
# warps) and the Gluon tiles the two rules ran there (128x128 cooperative 6 stages, 128x192 4):
# shared-memory and L2 traffic, issue activity, stalls. Then session 84's owed RMSNorm run (the
# two-pass kernel with 16 warps). Caches flushed before each kernel, clocks not locked.
# Carry `.whl` and `.cache`.
set -u
t0=$(date +%s)
. scripts/device_env.sh >/dev/null || exit 1
export TRITON_INTERPRET=0 HARNESS_CACHE_DIR=/tmp/hcache TRITON_CACHE_DIR=/tmp/tcache
export $(cat .cache/gitid)
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm,driver_version --format=csv,noheader | tee $OUT/gpu.txt
timeout 200 ncu --csv --page details --clock-control none --set full -k 'regex:nvjet|_gemm' \
  python3 scripts/gemm_ncu_compare.py --fp8 4096 8192 8192 128x256x128s3w8 gl:128x128s6 gl:128x192s4 \
  > $OUT/ncu-full-fp8-4096x8192x8192.csv 2> $OUT/ncu-full.err
echo "ncu rc=$? t=$(( $(date +%s) - t0 ))"; grep -A6 "in this order" $OUT/ncu-full-fp8-4096x8192x8192.csv
G='{product: {m: [512, 1024, 2048, 8192, 32768], n: [16384]}, fixed: {dtype: bf16}, providers: [own-triton, own-triton-looped, torch-compile], op: rmsnorm}'
GPU=h200 bash scripts/gpu_measure.sh 170 "rmsnorm-looped16-s85 sweep=layer_ops 'sweep.groups=[$G]'"
