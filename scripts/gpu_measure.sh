#!/usr/bin/env bash
# Run harness commands on a lent GPU machine (H100, H200, ...) within one call's time limit,
# resumably:
#   GPU=<name> bash scripts/gpu_measure.sh <seconds budget> "<run_id> [ceilings] <overrides...>" ...
# Each spec runs `harness run <overrides> results_dir=results/_scratch/$GPU run_id=<run_id>
# progress=false stop_after_s=<what is left of the budget>` (`harness ceilings` when its
# overrides start with `ceilings`). The budget sits under the lent call's own limit so that the
# harness, not the call's kill, ends a run cut short: it starts no point after stop_after_s
# and exits 75, the points already measured stay on disk (one file per point) and the tarballs
# below are still written; the same spec in the next call, with the folder carried (or `.cache`,
# where take_back.py packs an unfinished run for device_env.sh to unpack), measures
# only the missing points (on the same kernels/: a resume on changed kernel sources is refused,
# exit 2, unless the spec adds allow_mixed=true). A `timeout` 90 s past the budget (SIGINT,
# then SIGKILL 15 s later) is only a backstop for a point that overruns: in session 55 a tune
# pass that `timeout -s INT` ended left its point marked in flight, and the next run wrote that
# point as an error row.
# The tune cache and the CUTLASS libraries, where one was built here, come back too
# (tune-cache.tgz, cutlass.tar.xz), for scripts/take_back.py to put where the next call's device_env.sh picks them up. take_back.py
# also lists a run it got back unfinished in .cache/unfinished, and a spec whose run is listed
# there is skipped unless its folder is on the machine (carried, or left by the last call).
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
# DEVICE_ENV=0: the caller's python3 as it is (the CPU test of this script)
[ "${DEVICE_ENV:-1}" = 0 ] || . scripts/device_env.sh || exit 1
# The machine's copy of the tree has no git history of its own (session 74's runs through this
# script recorded a stale base commit, dirty): the rows name the commit device_carry.sh wrote.
[ -f .cache/gitid ] && export $(cat .cache/gitid)
budget=$1; shift
# A lent call that names one kind may come on another (session 93's call for an H200 came on an
# H100, into results/_scratch/h200): say so first. A resume there is refused by the harness (the
# run's GPU model differs); a new run is measured, and its folder must be moved by hand.
gpu_name=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
if [ -n "$gpu_name" ] && ! tr -d ' ' <<< "$gpu_name" | grep -qi "${GPU%x[0-9]*}"; then
  echo "warning: GPU=$GPU, but this machine's GPU is $gpu_name: its runs land in results/_scratch/$GPU; move them to that GPU's folder"
fi
R=results/_scratch/$GPU; L=$R/_logs; mkdir -p $L
t0=$(date +%s)
for spec in "$@"; do
  read -r run_id overrides <<< "$spec"
  cmd=run
  case $overrides in ceilings*) cmd=ceilings; overrides=${overrides#ceilings} ;; esac
  left=$(( budget - ($(date +%s) - t0) ))
  if [ $left -lt 20 ]; then echo "skip $run_id: out of time"; continue; fi
  # A run an earlier call stopped (take_back.py listed it in .cache/unfinished) resumes only from
  # its carried folder: started again here it would time what that call already measured.
  python3 scripts/take_back.py --check-resume $R/$run_id || { echo "skip $run_id: not carried"; continue; }
  # eval: the overrides keep their shell quoting ('providers=[a,b]') as written in the spec
  eval "timeout -k 15 -s INT $((left + 90)) python3 -m harness.cli $cmd $overrides results_dir=$R \
    run_id=$run_id progress=false stop_after_s=$left" > $L/$run_id.txt 2>&1
  echo "$run_id rc=$? (75: stopped at the budget) $(tail -1 $L/$run_id.txt)"
done
tar czf $OUT/results.tgz $R
tar czf $OUT/tune-cache.tgz -C "${HARNESS_CACHE_DIR:-/tmp/hcache}" tune 2>/dev/null
# The CUTLASS libraries come back only where this machine built one (scripts/pack_built_cutlass.sh).
bash scripts/pack_built_cutlass.sh
exit 0
