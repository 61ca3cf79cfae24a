#!/usr/bin/env bash
# The owed runs of whichever GPU a lent call came on, in one call:
#   bash scripts/owed_call.sh <seconds budget>
# A call that names nvidia-h200 may come on an H100 (sessions 93 and 96), and starts fail often:
# this reads the machine's GPU model and runs that GPU's list, results/<gpu>/owed.specs (one
# gpu_measure.sh spec per line, in order; blank lines and # comments skipped), through
# scripts/gpu_measure.sh with GPU set to match, so no call is spent on the wrong list. A run the
# list names that an earlier call stopped resumes as gpu_measure.sh resumes it (the same command,
# .cache carried); a run finished and committed is taken off the list by hand.
set -u
if [ $# -ne 1 ] || ! [[ $1 =~ ^[0-9]+$ ]]; then
  echo "harness: error: arguments: '$*'; allowed: <seconds budget>" >&2
  exit 2
fi
name=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
case $name in
  "NVIDIA H200"*) gpu=h200 ;;
  "NVIDIA H100"*) gpu=h100 ;;
  *)
    echo "harness: error: GPU: '$name'; allowed: an H100 or H200 (results/<gpu>/owed.specs)" >&2
    exit 2
    ;;
esac
list=results/$gpu/owed.specs
specs=()
if [ -f "$list" ]; then
  # `|| [ -n "$line" ]`: a last line without a newline (a list edited by hand) still counts
  while IFS= read -r line || [ -n "$line" ]; do
    line=${line%$'\r'}
    # a comment is a line that starts with # or a # after a space: a # inside an override's
    # quotes (no space before it) stays in the spec
    [[ $line =~ ^[[:space:]]*# ]] && continue
    line=${line%%[[:space:]]#*}
    [[ $line =~ [^[:space:]] ]] && specs+=("$line")
  done < "$list"
fi
if [ ${#specs[@]} -eq 0 ]; then
  echo "harness: error: $list: no specs; allowed: one gpu_measure.sh spec per line" >&2
  exit 2
fi
echo "$name: $list, ${#specs[@]} spec(s)"
GPU=$gpu exec bash scripts/gpu_measure.sh "$1" "${specs[@]}"
