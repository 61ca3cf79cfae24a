# Session 54: ncu of the N-split 128x320 tile against coop-128x256 and ping-pong 128x128 at
# 1024x10240x8192, bf16 nt (issue 20: why the N split loses ~17% per SM, results/h200/README.md
# session 52). --clock-control none, as session 45's ncu: the clocks the power cap allows, as in
# the sweeps (ncu reports the SM frequency of each). Reports to $OUT; a summary printed.
set -u
t0=$(date +%s)
. scripts/device_env.sh || exit 1
export TRITON_INTERPRET=0
S=results/h200/_logs/session54
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm,driver_version --format=csv,noheader | tee $OUT/gpu.txt
for c in sm90-coopn-128x320-c2x1 sm90-coop-128x256 sm90-pingpong-128x128; do
  python3 $S/coopn_probe.py $c > $OUT/build-$c.txt 2>&1 || { tail -5 $OUT/build-$c.txt; continue; }
  timeout 90 ncu --clock-control none --nvtx --nvtx-include "probe/" --set full -f -o $OUT/$c python3 $S/coopn_probe.py $c > $OUT/ncu-$c.txt 2>&1
  echo "$c rc=$? t=$(( $(date +%s) - t0 ))"; grep "max abs" $OUT/ncu-$c.txt
  ncu --import $OUT/$c.ncu-rep --page details --csv > $OUT/$c-details.csv 2>/dev/null
  ncu --import $OUT/$c.ncu-rep --page raw --csv > $OUT/$c-raw.csv 2>/dev/null
  grep -E '"(Duration|SM Frequency|Compute \(SM\) Throughput|Memory Throughput|Registers Per Thread|Achieved Occupancy|L2 Hit Rate|DRAM Throughput|Executed Ipc Active)"' $OUT/$c-details.csv | awk -F'","' '{print $(NF-2)" = "$NF}' | tr -d '"' | sort -u | head -12
done
echo "t=$(( $(date +%s) - t0 ))"
exit 0
