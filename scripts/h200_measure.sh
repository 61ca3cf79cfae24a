#!/usr/bin/env bash
# Run harness sweeps on a lent GPU within one call's time limit, resumably.
#   bash scripts/h200_measure.sh <seconds budget> "<run_id> [ceilings] <overrides...>" ...
# A spec whose overrides start with `ceilings` runs `harness ceilings` (ceiling rows added), else
# `harness run`. Rows go to results/_scratch/$GPU (GPU=h200 unless set; git-ignored: carry it to the next call to resume a run cut
# short); rows and logs come back as $OUT/results.tgz; a short table per run is printed last.
set -u
. scripts/device_env.sh || exit 1
budget=$1; shift
R=results/_scratch/${GPU:-h200}; L=$R/_logs; mkdir -p $L
t0=$(date +%s)
for spec in "$@"; do
  read -r run_id overrides <<< "$spec"
  cmd=run
  case $overrides in ceilings*) cmd=ceilings; overrides=${overrides#ceilings} ;; esac
  left=$(( budget - ($(date +%s) - t0) ))
  if [ $left -lt 20 ]; then echo "skip $run_id: out of time"; continue; fi
  eval "timeout -s INT $left python3 -m harness.cli $cmd $overrides results_dir=$R run_id=$run_id progress=false" > $L/$run_id.txt 2>&1
  echo "$run_id rc=$? $(tail -1 $L/$run_id.txt)"
done
tar czf $OUT/results.tgz $R
