# Session 47: own Triton's paged decode (ab950d2's candidates) beside FlashInfer and
# FlashAttention-4 in one run (issue 21.3), batch 16 and 64. The wheels travel in two parts
# (scripts/wheel_parts.py): the call before this one carried .whl-parts/1 and ran only
# `python3 scripts/wheel_parts.py gather`; this one carries .whl-parts/2. results/ and reports/
# stay behind on the CPU box so that a part and the tree fit one call.
set -u
. scripts/device_env.sh || exit 1
python3 -c "import flash_attn.cute, flashinfer" || { echo "FA4 / FlashInfer not installed"; exit 0; }
export TRITON_INTERPRET=0 HARNESS_CACHE_DIR=/tmp/hcache TRITON_CACHE_DIR=/tmp/tcache FLASH_ATTENTION_CUTE_DSL_CACHE_ENABLED=1
export $(cat .cache/gitid)
R=results/_scratch/gpu; mkdir -p $R
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm,driver_version --format=csv,noheader | tee $OUT/gpu.txt
ID=${ID:-fmha_decode_paged-vendors}
timeout -s INT ${LIMIT:-540} python3 -m harness.cli run sweep=fmha_decode_paged \
  'sweep.groups.0.providers=[own-triton,flashinfer,flash-attn-4]' 'sweep.groups.0.product.batch=[16,64]' \
  results_dir=$R run_id=$ID progress=false > $OUT/sweep.txt 2>&1
echo "sweep rc=$?"; tail -52 $OUT/sweep.txt | cut -c1-150
tar czf $OUT/results.tgz $R/$ID
exit 0
