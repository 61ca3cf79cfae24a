# The ncu pair of the Gluon decode's merges on a lent GPU (GPU=h200 [KV=4096] bash
# scripts/decode_merge_ncu.sh; carry .whl and .cache): scripts/decode_merge_ncu.py at the first
# Gluon split pick of the ragged and the equal-length batch-16 runs at KV length $KV, under
# `ncu --set full --clock-control none` (clocks as the sweep runs them). The report, its raw
# counters and its details go to $OUT/ncu-kv$KV (so calls for two lengths chain in one command),
# and a short table is printed: each kernel's time, DRAM bytes, grid and SM cycles.
set -u
. scripts/device_env.sh >/dev/null || exit 1
export TRITON_CACHE_DIR=/tmp/tcache
KV=${KV:-4096}; D=$OUT/ncu-kv$KV; mkdir -p $D
RUNS="results/${GPU:-h200}/fmha_decode_serving-b16-ragged-s73 results/${GPU:-h200}/fmha_decode_serving-b16-equal-s72"
# (session 87) the committed runs it reads must be in the tree: `device_slim.py aside --keep` them
for r in $RUNS; do [ -f "$r/rows.parquet" ] || { echo "missing $r (device_slim.py aside --keep $r)"; exit 2; }; done
nvidia-smi --query-gpu=name,uuid,power.limit,driver_version --format=csv,noheader | tee $D/gpu.txt
timeout -k 10 ${LIMIT:-400} ncu --nvtx --nvtx-include "ncu/" --set full --clock-control none -f \
  -o $D/merge python3 scripts/decode_merge_ncu.py $RUNS --kv $KV > $D/ncu-run.txt 2>&1
echo "ncu rc=$?"; grep -v "^==PROF==" $D/ncu-run.txt | tail -8
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,launch__grid_size
M=$M,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__throughput.avg.pct_of_peak_sustained_elapsed
M=$M,sm__warps_active.avg.pct_of_peak_sustained_active,sm__cycles_active.avg,gpc__cycles_elapsed.max
M=$M,smsp__inst_executed.sum
ncu --import $D/merge.ncu-rep --page raw --csv --metrics $M > $D/merge-raw.csv
ncu --import $D/merge.ncu-rep --page details > $D/merge-details.txt
python3 - "$D/merge-raw.csv" <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
head, units, body = rows[0], rows[1], rows[2:]
keep = ["Kernel Name", "gpu__time_duration.sum", "dram__bytes_read.sum", "launch__grid_size",
        "sm__cycles_active.avg", "smsp__inst_executed.sum"]
idx = [head.index(k) for k in keep if k in head]
print(" | ".join(f"{head[i][:24]} {units[i]}".strip() for i in idx))
for r in body:
    print(" | ".join(r[i][:40] for i in idx))
PY
