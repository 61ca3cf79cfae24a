# Session 49, call 8: M 8192 (8 shapes), cuBLAS and own Triton, after CAPPED_NOISE (2f7889e):
# own Triton re-tunes these shapes (its sources changed); the carried cache serves nothing else.
set -u
. scripts/device_env.sh || exit 1
export TRITON_INTERPRET=0 HARNESS_CACHE_DIR=/tmp/hcache TRITON_CACHE_DIR=/tmp/tcache
export $(cat .cache/gitid)
R=results/_scratch/gpu; L=$R/_logs; ID=gemm_llama-noise-m8192; mkdir -p $L
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm,driver_version --format=csv,noheader | tee $L/call8-gpu.txt
timeout -s INT 500 python3 -m harness.cli run sweep=gemm_llama 'sweep.groups.0.providers=[cublas,own-triton]' \
  'sweep.groups.0.product.m=[8192]' results_dir=$R run_id=$ID progress=false > $L/$ID-call8.txt 2>&1
echo "rc=$?"; tail -1 $L/$ID-call8.txt; tar czf $OUT/results.tgz $R
python3 scripts/gemm_ratio_table.py $R/$ID 2>&1 | tail -14
