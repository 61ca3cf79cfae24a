# Session 42, call 6 on nvidia-h100-x1: fp8 e4m3 (per-tensor scales, bf16 out) at M 512-16384, the
# H100 rows session 39's run was cut before (issue 20.3): own CUTLASS, own Triton and cuBLASLt's
# two _scaled_mm rows in one run, with the capped re-time and the power settle; the tf32 group
# names hipblaslt only, so it skips.
set -u
t0=$(date +%s)
. scripts/device_env.sh || exit 1
export TRITON_INTERPRET=0 HARNESS_CACHE_DIR=/tmp/hcache TRITON_CACHE_DIR=/tmp/tcache
export $(cat .cache/gitid)
R=results/_scratch/gpu; L=$R/_logs; mkdir -p $L
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm,driver_version --format=csv,noheader | tee $L/call6-gpu.txt
python3 -m harness_kernels.cutlass.prebuild --gemm fp8_e4m3:nt --jobs 16 > $L/prebuild-fp8.txt 2>&1
echo "prebuild rc=$? t=$(( $(date +%s) - t0 ))"
timeout -s INT $(( 575 - ($(date +%s) - t0) )) python3 -m harness.cli run sweep=gemm_llama_lowp 'sweep.groups.1.providers=[hipblaslt]' \
  'sweep.groups.0.product.m=[512,1024,2048,4096,8192,16384]' results_dir=$R run_id=gemm_llama_lowp-fp8-large progress=false > $L/gemm_llama_lowp-fp8-large-call6.txt 2>&1
echo "rc=$? t=$(( $(date +%s) - t0 )): $(tail -1 $L/gemm_llama_lowp-fp8-large-call6.txt)"
tar cJf $OUT/cutlass-cache.tar.xz -C /tmp/cutlass-cache . 2>/dev/null
tar czf $OUT/results.tgz $R
python3 scripts/gemm_ratio_table.py $R/gemm_llama_lowp-fp8-large 2>&1 | tail -8
