#!/usr/bin/env bash
# Run harness commands on a lent GPU machine (H100, H200, ...) within one call's time limit,
# resumably:
#   GPU=<name> bash scripts/gpu_measure.sh <seconds budget> "<run_id> [ceilings] <overrides...>" ...
# Each spec runs `harness run <overrides> results_dir=results/_scratch/$GPU run_id=<run_id>
# progress=false` (`harness ceilings` when its overrides start with `ceilings`). The budget sits
# under the lent call's own limit so that the script, not the call's kill, ends a run cut short:
# SIGINT stops it, the points already measured stay on disk (one file per point) and the tarball
# below is still written; the same spec in the next call, with the folder carried, measures only
# the missing points.
# GPU (h100, h200, h200x2: one name per machine kind) names the scratch folder and is required:
# a default would let a carried folder resume one GPU's run with another GPU's points.
# results/_scratch/ is git-ignored; its rows and logs (_logs/<run_id>.txt) come back as
# $OUT/results.tgz, and one line per run (exit status, the log's last line) is printed. Copy a
# finished run into results/$GPU/ and `harness compact` it there.
set -u
if [ -z "${GPU:-}" ]; then
  echo "harness: error: GPU: not set; allowed: a scratch folder name, e.g. GPU=h100, h200, h200x2" >&2
  exit 2
fi
if [ $# -lt 2 ] || ! [[ $1 =~ ^[0-9]+$ ]]; then
  echo "harness: error: arguments: '$*'; allowed: <seconds budget> \"<run_id> [ceilings] <overrides...>\" ..." >&2
  exit 2
fi
. scripts/device_env.sh || exit 1
budget=$1; shift
R=results/_scratch/$GPU; L=$R/_logs; mkdir -p $L
t0=$(date +%s)
for spec in "$@"; do
  read -r run_id overrides <<< "$spec"
  cmd=run
  case $overrides in ceilings*) cmd=ceilings; overrides=${overrides#ceilings} ;; esac
  left=$(( budget - ($(date +%s) - t0) ))
  if [ $left -lt 20 ]; then echo "skip $run_id: out of time"; continue; fi
  # eval: the overrides keep their shell quoting ('providers=[a,b]') as written in the spec
  eval "timeout -s INT $left python3 -m harness.cli $cmd $overrides results_dir=$R run_id=$run_id progress=false" > $L/$run_id.txt 2>&1
  echo "$run_id rc=$? $(tail -1 $L/$run_id.txt)"
done
tar czf $OUT/results.tgz $R
