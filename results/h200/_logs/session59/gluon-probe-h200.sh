# Session 59, call 5 (GPU=h200; run from results/h100/_logs/session59/, moved here after): scripts/gluon_tile_probe.py on an H200 at the mid-band shapes
# where the H100 probe found the new wide and deep Gluon tiles faster (see call 1's log).
set -u
t0=$(date +%s)
export TRITON_INTERPRET=0 TRITON_CACHE_DIR=/tmp/tcache
. scripts/device_env.sh || exit 1
L=results/_scratch/$GPU/_logs; mkdir -p $L
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm,driver_version --format=csv,noheader | tee $L/gluon-probe-gpu.txt
timeout ${BUDGET:-150} python3 scripts/gluon_tile_probe.py 512x10240x8192 256x6144x4096 \
  128x6144x4096 256x4096x4096 --top 3 --stages 6 > $L/gluon-tile-probe.txt 2>&1
echo "probe rc=$? t=$(( $(date +%s) - t0 ))"
cp -r $L $OUT/logs
cut -c1-80 $L/gluon-tile-probe.txt
exit 0
