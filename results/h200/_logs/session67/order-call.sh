# Session 67 (BUDGET=s): the longest-first order of the Gluon decode's work items, probed at
# batch 64, ragged, KV 4k (scripts/decode_order_probe.py: one Gluon config in item order and
# longest first, both checked against fp32, burst timer), then the Gluon decode's GPU test of
# many items per CTA (ordered launches against the same launch in item order, bit for bit).
set -u
t0=$(date +%s); B=${BUDGET:-200}
export TRITON_INTERPRET=0 TRITON_CACHE_DIR=/tmp/tcache
. scripts/device_env.sh || exit 1
export $(cat .cache/gitid)
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm,driver_version --format=csv,noheader | tee $OUT/order-gpu.txt
timeout -k 5 $((B * 55 / 100)) python3 scripts/decode_order_probe.py b64:kv4096:p16:h4 b64:kv4096:p16:h8 \
  > $OUT/order-probe.txt 2>&1; echo "probe rc=$? t=$(( $(date +%s) - t0 ))"
left=$(( B - ($(date +%s) - t0) ))
timeout -k 5 $left python3 -m pytest -q -m gpu tests/gpu/test_decode_gluon_gpu.py -p no:cacheprovider \
  -k many_work_items > $OUT/order-gpu-tests.txt 2>&1; echo "tests rc=$? t=$(( $(date +%s) - t0 ))"
tail -3 $OUT/order-gpu-tests.txt | cut -c1-200; cat $OUT/order-probe.txt | cut -c1-220
