#!/usr/bin/env bash
# Pack the machine's own CUTLASS libraries into $OUT/cutlass.tar.xz, only where this machine built
# one: a library newer than the `.from-<sum>` marker that scripts/device_env.sh leaves on unpacking
# the carried archive, or no carried archive at all. Packing 200 unchanged libraries takes about a
# minute, which in session 88 pushed a call past its 600 s limit with the archive cut short.
# Sourced or run by the call scripts (gpu_measure.sh, fa3_prefill_call.sh) as their last step.
C=${HARNESS_CUTLASS_CACHE:-/tmp/cutlass-cache}
m=$(ls "$C"/.from-* 2>/dev/null | head -1)
if [ -d "$C" ] && { [ -z "$m" ] || [ -n "$(find "$C" -newer "$m" -name '*.so' -print -quit)" ]; }; then
  tar cJf "$OUT/cutlass.tar.xz" -C "$C" . 2>/dev/null
fi
exit 0
