# Session 40, call 4 on nvidia-h100-x1: the per-rank kernels of Llama-3-70B TP-2 decode at batch 1, 64, 512 (issue 23.4's composed step on an H100).
set -u
t0=$(date +%s)
. scripts/device_env.sh || exit 1
export TRITON_INTERPRET=0 HARNESS_CACHE_DIR=/tmp/hcache TRITON_CACHE_DIR=/tmp/tcache
export $(cat .cache/gitid)
R=results/_scratch/h100; L=$R/_logs; mkdir -p $L
B='[1,64,512]'; T='[own-triton,torch-eager]'
timeout -s INT 270 python3 -m harness.cli run sweep=llama3_70b_tp2_decode \
  "sweep.groups.0.product.m=$B" 'sweep.groups.0.providers=[cublas,own-triton]' \
  "sweep.groups.1.product.batch=$B" 'sweep.groups.1.providers=[sdpa-cudnn,sdpa-flash,own-triton]' \
  "sweep.groups.2.product.m=$B" "sweep.groups.2.providers=$T" "sweep.groups.3.product.m=$B" "sweep.groups.3.providers=$T" \
  "sweep.groups.4.product.batch=$B" "sweep.groups.4.providers=$T" "sweep.groups.5.product.m=$B" "sweep.groups.5.providers=$T" \
  results_dir=$R run_id=llama3_70b_tp2_decode progress=false > $L/llama3_70b_tp2_decode.txt 2>&1
echo "rc=$? t=$(( $(date +%s) - t0 )): $(tail -1 $L/llama3_70b_tp2_decode.txt)"
nvidia-smi --query-gpu=name,uuid --format=csv,noheader
tar czf $OUT/results.tgz $R
