# Session 48, call 8: gemm_llama M 64 and 128 (16 shapes), cuBLAS and own Triton, one run, after
# the wide-K twins of the deep tile (the tune pass on; own Triton tuned afresh: its sources changed).
set -u
t0=$(date +%s); ID=gemm_llama-twins-m64m128
. scripts/device_env.sh || exit 1
export TRITON_INTERPRET=0 HARNESS_CACHE_DIR=/tmp/hcache TRITON_CACHE_DIR=/tmp/tcache
export $(cat .cache/gitid)
R=results/_scratch/gpu; L=$R/_logs; mkdir -p $L /tmp/hcache
case "$(nvidia-smi --query-gpu=name --format=csv,noheader)" in *H100*) tar xzf .cache/tune-h100.tgz -C /tmp/hcache;; esac
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm,driver_version --format=csv,noheader | tee $L/call8-gpu.txt
timeout -s INT $(( 370 - ($(date +%s) - t0) )) python3 -m harness.cli run sweep=gemm_llama 'sweep.groups.0.providers=[cublas,own-triton]' \
  'sweep.groups.0.product.m=[64,128]' results_dir=$R run_id=$ID progress=false > $L/$ID-call8.txt 2>&1
echo "$ID rc=$? t=$(( $(date +%s) - t0 )): $(grep -h 'tune pass' $L/$ID-call8.txt $R/$ID/_workers/*.log 2>/dev/null | tail -1) $(tail -1 $L/$ID-call8.txt)"
tar czf $OUT/results.tgz $R
python3 scripts/gemm_ratio_table.py $R/$ID 2>&1 | tail -5
exit 0
