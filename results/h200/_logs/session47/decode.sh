# Session 47: the joint (tile x split count) paged-decode tuner (0ba67e9) on a lent GPU (issue
# 21.3): the probe at batch 16 with --beyond-model (the model's grid plus the deeper configs it
# rejects), then own Triton's paged-decode sweep points at batch 16 and 64 under the sweep's
# protocol (run fmha_decode_paged-joint).
set -u
. scripts/device_env.sh || exit 1
export TRITON_INTERPRET=0 HARNESS_CACHE_DIR=/tmp/hcache TRITON_CACHE_DIR=/tmp/tcache
export $(cat .cache/gitid)
R=results/_scratch/gpu; mkdir -p $R
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm,driver_version --format=csv,noheader | tee $OUT/gpu.txt
case "$(cat $OUT/gpu.txt)" in *H200*) CEIL=4650;; *) CEIL=3105;; esac
ID=${ID:-fmha_decode_paged-joint}
timeout -s INT 250 python3 scripts/decode_probe.py b16:kv4096:p256 b16:kv4096:p16 b16:kv16384:p16 --ceiling $CEIL --top 4 --beyond-model 2>&1 | tee $OUT/decode_probe.txt
timeout -s INT 300 python3 -m harness.cli run sweep=fmha_decode_paged 'sweep.groups.0.providers=[own-triton]' \
  'sweep.groups.0.product.batch=[16,64]' results_dir=$R run_id=$ID progress=false > $OUT/sweep.txt 2>&1
tail -22 $OUT/sweep.txt
tar czf $OUT/results.tgz $R/$ID
exit 0
