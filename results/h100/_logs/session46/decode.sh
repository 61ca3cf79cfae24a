# Session 46: the decode candidates of this commit on a lent GPU: the probe at batch 16
# (the tuner's new pick beside the grid's best), then own Triton's paged-decode sweep points at
# batch 16 and 64 under the sweep's protocol.
set -u
. scripts/device_env.sh || exit 1
export TRITON_INTERPRET=0 HARNESS_CACHE_DIR=/tmp/hcache TRITON_CACHE_DIR=/tmp/tcache
export $(cat .cache/gitid)
R=results/_scratch/gpu; mkdir -p $R
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm,driver_version --format=csv,noheader | tee $OUT/gpu.txt
timeout -s INT 200 python3 scripts/decode_probe.py b16:kv4096:p256 b16:kv4096:p16 b16:kv16384:p16 --ceiling $CEIL --top 3 2>&1 | tee $OUT/decode_probe.txt
timeout -s INT 300 python3 -m harness.cli run sweep=fmha_decode_paged 'sweep.groups.0.providers=[own-triton]' \
  'sweep.groups.0.product.batch=[16,64]' results_dir=$R run_id=fmha_decode_paged-b16b64 progress=false > $OUT/sweep.txt 2>&1
tail -25 $OUT/sweep.txt
tar czf $OUT/results.tgz $R/fmha_decode_paged-b16b64
exit 0
