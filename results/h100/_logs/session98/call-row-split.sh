# Session 98's third call (bash results/h100/_logs/session98/call-row-split.sh): the Gluon
# decode's row split (a unit's rows over 2 CTAs, each reading the whole KV range; no partials)
# against one CTA a unit and against a KV split of 2 with each merge, at batch 16, GQA 8, where
# 64 units leave 68 of 132 SMs idle; every launch checked against fp32 first. Then the Gluon
# decode's GPU test at two GQA-8 cases (each tile, each way, the row split among them).
set -u
. scripts/device_env.sh > /dev/null || exit 1
export TRITON_INTERPRET=0 TRITON_CACHE_DIR=/tmp/tcache
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm,driver_version --format=csv,noheader
timeout 200 python3 scripts/decode_split_probe.py b16:kv4096:h4:q1:p256 b16:kv16384:h4:q1:p256 \
  b16:kv4096:h4:q1:p16 b16:kv4096:h4:q1:p256:ragged b16:kv4096:h4:q8:p256 --splits 1,2 \
  --rounds 3 2>&1 | tee "$OUT/row_split_probe.txt"
timeout 60 python3 -m pytest -q -p no:randomly -p no:cacheprovider -o addopts="" -m gpu \
  tests/gpu/test_decode_gluon_gpu.py -k "p256-q1-g8 or p16-q4-g8" 2>&1 | tail -5 |
  tee "$OUT/row_split_gpu_tests.txt"
