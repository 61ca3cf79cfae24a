# Session 86, call 1 (nvidia-h200): session 85's two owed items.
# 1. the Gluon GEMM's halves tiles over more tiles than SMs (a C buffer refilled for a second tile
#    inside one launch), against fp32;
# 2. bf16 gemm_llama, all 120 shapes, cuBLAS and own Triton in one run, with session 85's tie rule
#    (a capped tie goes to `tl`) and the halves tiles; resumed by call 2 (and 3) with
#    `results/_scratch/h200` carried (`resume.sh`).
# Carry `.whl` and `.cache`.
set -u
t0=$(date +%s)
. scripts/device_env.sh >/dev/null || exit 1
export TRITON_INTERPRET=0 HARNESS_CACHE_DIR=/tmp/hcache TRITON_CACHE_DIR=/tmp/tcache
export $(cat .cache/gitid)
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm,driver_version --format=csv,noheader | tee $OUT/gpu.txt
timeout 120 python3 -m pytest -m gpu -q -p no:cacheprovider tests/gpu/test_gluon_gemm_gpu.py \
  -k halves_tiles_reuse > $OUT/gluon-halves-reuse-gpu-tests.txt 2>&1
echo "tests rc=$? t=$(( $(date +%s) - t0 ))"; tail -3 $OUT/gluon-halves-reuse-gpu-tests.txt
left=$(( ${BUDGET:-540} - $(date +%s) + t0 ))
GPU=h200 bash scripts/gpu_measure.sh $left \
  "gemm_llama-s86 sweep=gemm_llama 'sweep.groups.0.providers=[cublas,own-triton]' max_points=240"
