# Session 56 (one nvidia-h200 call): is the clustered 128x16 twin immune to the per-process state
# that moves own CUTLASS's unclustered swapped 128x16 tiles at N 28672, K 4096? In gemm_llama-s56
# the unclustered config tuned at 59.3-59.4 us at M 1 and 8 and was timed at 65.0 in the sweep
# (0.90x cuBLAS, the run's two worst points); session 44 saw 58.7-66.4 us over eight processes
# (_logs/session44/bimodal-table.txt), session 45 the clustered twin never slow in three grids.
# Eight fresh processes, one after another on one machine, each timing at M 1, 4, 8: cuBLAS, the
# tuned own CUTLASS (read from the carried tune cache: no tuning), and two pinned configs, the
# unclustered data-parallel 128x16 and its 2x1-clustered twin. Then `harness spread`.
set -u
t0=$(date +%s); C=${CALL:-call5}
. scripts/device_env.sh || exit 1
export TRITON_INTERPRET=0
export $(cat .cache/gitid)
R=results/_scratch/h200/cluster_spread; L=results/_scratch/h200/_logs; mkdir -p $R $L
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm,driver_version --format=csv,noheader | tee $L/$C-gpu.txt
P=own-cutlass-sm90-swapab-dp-128x16
for i in 1 2 3 4 5 6 7 8; do
  left=$(( ${BUDGET:-440} - ($(date +%s) - t0) ))
  [ $left -gt 45 ] || break
  timeout -k 10 -s INT $left python3 -m harness.cli run sweep=gemm_llama \
    "sweep.groups.0.providers=[cublas,own-cutlass,$P,$P-c2x1]" 'sweep.groups.0.product.m=[1,4,8]' \
    'sweep.groups.0.zip.n=[28672]' 'sweep.groups.0.zip.k=[4096]' \
    results_dir=$R run_id=proc-$i progress=false stop_after_s=$((left - 30)) > $L/cluster_spread-$i.txt 2>&1
  echo "proc-$i rc=$? t=$(( $(date +%s) - t0 ))"
done
tar czf $OUT/results.tgz results/_scratch/h200/cluster_spread $L
python3 -m harness.cli spread $R 2>&1 | head -40
python3 - <<'PY'
import glob, json, pandas as pd
rows = pd.concat(pd.read_parquet(f) for f in glob.glob('results/_scratch/h200/cluster_spread/proc-*/rows/*.parquet'))
rows['cfg'] = [json.loads(c).get('variant', '') if p == 'own-cutlass' else '' for p, c in zip(rows.provider, rows.provider_config)]
print(rows.pivot_table(index='run_id', columns=['m', 'provider'], values='latency_ms_median').mul(1000).round(1).to_string())
print(rows[rows.provider == 'own-cutlass'].groupby('m').cfg.first().to_string())
PY
exit 0
