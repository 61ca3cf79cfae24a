# What compile ahead (harness/compile_ahead.py) saves, on a lent GPU in one call: the same cold
# tune pass of own Triton's decode points run four times, ahead / inline / inline / ahead (ABBA,
# so a drift of the machine over the call does not favour one arm), each on its own empty tune
# cache and Triton cache, `tune_only=true` (nothing timed), `compile_workers=0` for inline.
# Prints the tune pass's and compile ahead's own lines per arm, then a table of wall seconds.
#   GPU=h200 bash scripts/compile_ahead_ab.sh          (carry .whl; ~6 min on an H200)
# POINTS: the sweep overrides that choose the points (default: the serving grid's 8 ragged
# batch-64 points at q_len 1, where session 68's cold pass spent 13 s a point); ARMS: the order.
set -u
: "${GPU:?GPU=h100|h200}"
t0=$(date +%s)
export TRITON_INTERPRET=0
[ -f .cache/gitid ] && export $(cat .cache/gitid)
. scripts/device_env.sh || exit 1
ID=${ID:-compile-ahead-ab-$(date +%Y%m%d)}
R=results/_scratch/$GPU; L=$R/_logs/$ID; mkdir -p $L
nvidia-smi --query-gpu=name,uuid,power.limit,driver_version --format=csv,noheader | tee $L/gpu.txt
echo "cores $(nproc), $(free -g | awk '/Mem/ {print $2}') GiB" | tee -a $L/gpu.txt
POINTS=${POINTS:-"sweep.groups.0.product.batch=[64] sweep.groups.0.product.ragged=[true] sweep.groups.0.product.q_len=[1]"}
table="arm workers wall_s"
i=0
for arm in ${ARMS:-ahead inline inline ahead}; do
  i=$((i + 1)); d=/tmp/ca-ab/$i-$arm; rm -rf $d; mkdir -p $d
  workers=""; label=auto
  [ "$arm" = inline ] && { workers="compile_workers=0"; label=0; }
  s=$(date +%s)
  # its own caches: HARNESS_TUNE_CACHE names the tune cache's folder, TRITON_CACHE_DIR Triton's
  HARNESS_TUNE_CACHE=$d/tune TRITON_CACHE_DIR=$d/triton timeout -k 10 300 python3 -m harness.cli \
    run sweep=fmha_decode_serving 'sweep.groups.0.providers=[own-triton]' $POINTS tune_only=true \
    results_dir=$d/r run_id=$ID-$i-$arm progress=false $workers > $L/$i-$arm.txt 2>&1
  rc=$?; w=$(( $(date +%s) - s ))
  echo "$i $arm rc=$rc wall ${w} s"; grep -hE "compile ahead|tune pass" $L/$i-$arm.txt | cut -c1-220
  table="$table
$i-$arm $label $w"
done
tar czf $OUT/results.tgz $R
echo "$table" | awk '{printf "%-12s %-8s %s\n", $1, $2, $3}'  # the image has no column(1)
echo "t=$(( $(date +%s) - t0 ))"
