# Session 47, call 2: the decode candidates of ab950d2 (Triton-calibrated shared-memory price;
# 128x6 and 64x10 offered) on a lent GPU (issue 21.3): the probe at batch 16 (its grid now to
# 12 stages, 4 warps), then own Triton's paged-decode sweep points at batch 16 and 64 under the
# sweep's protocol (run fmha_decode_paged-joint2).
set -u
. scripts/device_env.sh || exit 1
export TRITON_INTERPRET=0 HARNESS_CACHE_DIR=/tmp/hcache TRITON_CACHE_DIR=/tmp/tcache
export $(cat .cache/gitid)
R=results/_scratch/gpu; mkdir -p $R
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm,driver_version --format=csv,noheader | tee $OUT/gpu.txt
case "$(cat $OUT/gpu.txt)" in *H200*) CEIL=4650;; *) CEIL=3105;; esac
ID=${ID:-fmha_decode_paged-joint2}
timeout -s INT 270 python3 scripts/decode_probe.py b16:kv4096:p16 b16:kv16384:p16 b16:kv4096:p256 --ceiling $CEIL --top 4 2>&1 | tee $OUT/decode_probe.txt
timeout -s INT 270 python3 -m harness.cli run sweep=fmha_decode_paged 'sweep.groups.0.providers=[own-triton]' \
  'sweep.groups.0.product.batch=[16,64]' results_dir=$R run_id=$ID progress=false > $OUT/sweep.txt 2>&1
tail -22 $OUT/sweep.txt
tar czf $OUT/results.tgz $R/$ID
exit 0
