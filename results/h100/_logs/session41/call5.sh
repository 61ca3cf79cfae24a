# Session 41, call 5 on nvidia-h100-x1: gemm_llama M [512,1024] with cuBLAS, own Triton and own CUTLASS in
# one run, after the power settle (protocol.power_settle_ms): the A/B of call 3 (issue 20.1 / 20.2).
set -u
t0=$(date +%s)
. scripts/device_env.sh || exit 1
export TRITON_INTERPRET=0 HARNESS_CACHE_DIR=/tmp/hcache TRITON_CACHE_DIR=/tmp/tcache
export $(cat .cache/gitid)
R=results/_scratch/h100; L=$R/_logs; mkdir -p $L
nvidia-smi --query-gpu=name,uuid --format=csv,noheader | tee $L/call5-gpu.txt
timeout -s INT 230 python3 -m harness.cli run sweep=gemm_llama 'sweep.groups.0.providers=[cublas,own-cutlass,own-triton]' \
  'sweep.groups.0.product.m=[512,1024]' results_dir=$R run_id=gemm_llama-settled-mid512 progress=false > $L/gemm_llama-settled-mid512.txt 2>&1
echo "rc=$? t=$(( $(date +%s) - t0 )): $(tail -1 $L/gemm_llama-settled-mid512.txt)"
cp -r /tmp/hcache/tune $R/_logs/tune-cache-call5 2>/dev/null; tar czf $OUT/results.tgz $R
python3 scripts/gemm_ratio_table.py $R/gemm_llama-settled-mid512 2>&1 | tail -25
