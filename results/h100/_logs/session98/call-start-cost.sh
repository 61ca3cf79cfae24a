# Session 98's second call (BUDGET=s bash results/h100/_logs/session98/call-start-cost.sh): the
# owed list of whichever GPU came (scripts/owed_call.sh), then where own decode's per-launch
# start cost lies (docs/decode_scheduling.md): batch 16, GQA 8, one split forced, at five KV
# lengths (a line in KV: intercept over the read's = the per-launch cost, slope = the streaming
# rate), and the dense twin (p0: no block table) beside pages of 256 and 16 at KV 64 and 4k.
set -u
bash scripts/owed_call.sh "${BUDGET:-240}"
. scripts/device_env.sh > /dev/null || exit 1
timeout 330 python3 scripts/decode_split_probe.py b16:kv64:h4:q1:p256 b16:kv512:h4:q1:p256 \
  b16:kv1024:h4:q1:p256 b16:kv4096:h4:q1:p256 b16:kv16384:h4:q1:p256 b16:kv64:h4:q1:p0 \
  b16:kv4096:h4:q1:p0 b16:kv64:h4:q1:p16 b16:kv4096:h4:q1:p16 --splits 1 --rounds 5 \
  2>&1 | tee "$OUT/decode_start_probe.txt"
