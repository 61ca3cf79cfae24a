# A lent-GPU call's Nsight Compute pass over GEMM configs (scripts/gemm_ncu_compare.py launches
# them): the machine's environment, then one ncu report per profile, written to $OUT.
#   bash scripts/gemm_ncu_call.sh "TAG M N K CONFIG..." ["TAG M N K CONFIG..." ...]
# e.g. "qkv256 256 2304 16384 128x128x128s3k3w8 128x256x64s4k7w8". Each profile's CSV and stderr
# come back as $OUT/ncu-TAG.csv / .err; the launch order (which kernel is which) is printed.
# Clocks are not locked and ncu flushes the caches before each kernel (ncu_call_lib.sh).
set -u
. scripts/ncu_call_lib.sh
for profile in "$@"; do
  set -- $profile
  tag=$1; shift
  ncu_profile "$tag" "--section SpeedOfLight" scripts/gemm_ncu_compare.py "$@"
done
exit 0
