# Session 44, call 7 (a fresh nvidia-h200): is own CUTLASS's swapab-128x16 at N 28672 K 4096
# bimodal per process? The whole-grid runs timed one config 58.8 us in one run and 65.9-67.3 us
# in another (H200), with tight p10/p90 inside each. Eight separate processes (runs), each timing
# cuBLAS and own CUTLASS at M 1 and 4 from the tune cache call 3 wrote (no tuning here).
set -u
t0=$(date +%s); C=call7
. scripts/device_env.sh || exit 1
export TRITON_INTERPRET=0 HARNESS_CACHE_DIR=/tmp/hcache TRITON_CACHE_DIR=/tmp/tcache
export $(cat .cache/gitid)
R=results/_scratch/gpu; L=$R/_logs; mkdir -p $L /tmp/hcache
tar xzf .cache/tune-h200.tgz -C /tmp/hcache
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm,driver_version --format=csv,noheader | tee $L/$C-gpu.txt
for i in 1 2 3 4 5 6 7 8; do
  [ $(( $(date +%s) - t0 )) -lt 230 ] || break
  timeout -s INT 60 python3 -m harness.cli run sweep=gemm_llama 'sweep.groups.0.providers=[cublas,own-cutlass]' \
    'sweep.groups.0.product.m=[1,4]' 'sweep.groups.0.zip.n=[28672]' 'sweep.groups.0.zip.k=[4096]' \
    results_dir=$R run_id=bimodal-$i progress=false > $L/bimodal-$i-$C.txt 2>&1
  echo "bimodal-$i rc=$? t=$(( $(date +%s) - t0 ))"
done
tar czf $OUT/results.tgz $R
python3 - <<'PY'
import glob, pandas as pd
fs = [f for f in glob.glob('results/_scratch/gpu/bimodal-*/**/*.parquet', recursive=True)]
rows = pd.concat(pd.read_parquet(f) for f in fs)
print(rows.pivot_table(index='run_id', columns=['m', 'provider'], values='latency_ms_median').mul(1000).round(1).to_string())
PY
