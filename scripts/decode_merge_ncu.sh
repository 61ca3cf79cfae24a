# The ncu pair of the Gluon decode's merges on a lent GPU (GPU=h200 bash scripts/decode_merge_ncu.sh;
# carry .whl and .cache): scripts/decode_merge_ncu.py at the first Gluon split pick of the ragged
# and the equal-length batch-16 runs, KV 4k (KV=n: another length), under `ncu --set full --clock-control none` (clocks
# as the sweep runs them); the report and its raw counters go to $OUT, a short table is printed.
set -u
. scripts/device_env.sh >/dev/null || exit 1
export TRITON_CACHE_DIR=/tmp/tcache
RUNS="results/${GPU:-h200}/fmha_decode_serving-b16-ragged-s73 results/${GPU:-h200}/fmha_decode_serving-b16-equal-s72"
nvidia-smi --query-gpu=name,uuid,power.limit,driver_version --format=csv,noheader | tee $OUT/gpu.txt
timeout -k 10 ${LIMIT:-400} ncu --nvtx --nvtx-include "ncu/" --set full --clock-control none -f \
  -o $OUT/merge python3 scripts/decode_merge_ncu.py $RUNS --kv ${KV:-4096} > $OUT/ncu-run.txt 2>&1
echo "ncu rc=$?"; grep -v "^==PROF==" $OUT/ncu-run.txt | tail -8
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,launch__grid_size
M=$M,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__throughput.avg.pct_of_peak_sustained_elapsed
M=$M,sm__warps_active.avg.pct_of_peak_sustained_active,sm__cycles_active.avg,gpc__cycles_elapsed.max
ncu --import $OUT/merge.ncu-rep --page raw --csv --metrics $M > $OUT/merge-raw.csv
ncu --import $OUT/merge.ncu-rep --page details > $OUT/merge-details.txt
python3 - <<'PY'
import csv, os
rows = list(csv.reader(open(os.environ["OUT"] + "/merge-raw.csv")))
head, body = rows[0], rows[2:]
keep = ["Kernel Name", "gpu__time_duration.sum", "dram__bytes_read.sum", "launch__grid_size",
        "dram__throughput.avg.pct_of_peak_sustained_elapsed", "sm__cycles_active.avg",
        "gpc__cycles_elapsed.max"]
idx = [head.index(k) for k in keep if k in head]
print(" | ".join(rows[0][i][:24] for i in idx)); print(" | ".join(rows[1][i] for i in idx))
for r in body:
    print(" | ".join(r[i][:40] for i in idx))
PY
