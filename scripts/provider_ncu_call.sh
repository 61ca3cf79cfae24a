# A lent-GPU call's Nsight Compute pass over providers of one op on one problem
# (scripts/provider_ncu_compare.py prepares, checks and launches them): the machine's environment,
# then one ncu report per profile, written to $OUT.
#   bash scripts/provider_ncu_call.sh "TAG OP key=value... PROVIDER..." ["TAG ..." ...]
# e.g. "c4k attention batch=1 q_heads=32 kv_heads=8 q_len=4096 kv_len=4096 causal=true
# dtype=fp16 own-triton flash-attn-4" (FA4 needs its wheels: scripts/decode_serving_call.sh's two
# parts, joined on the warm machine). Each profile's CSV and stderr come back as
# $OUT/ncu-TAG.csv / .err; the launch order (which kernels are whose) is printed. Only the
# launches after each provider's tuning and check are profiled (--profile-from-start off).
# Clocks are not locked and ncu flushes the caches before each kernel (ncu_call_lib.sh).
set -u
. scripts/ncu_call_lib.sh
for profile in "$@"; do
  set -- $profile
  tag=$1; shift
  ncu_profile "$tag" "--profile-from-start off --section SpeedOfLight --section Occupancy" \
    scripts/provider_ncu_compare.py "$@"
done
exit 0
