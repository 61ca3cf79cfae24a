#!/usr/bin/env bash
# Issue 2 spine runs, then the own kernels against the vendor on main_gpu (a first look).
set -u
bash scripts/h200_spine.sh "${1:-}"
. scripts/device_env.sh || exit 1
harness run sweep=main_gpu results_dir=results/h200 run_id=main_gpu-first-look progress=false > $OUT/main_gpu.txt 2>&1
tar czf $OUT/results.tgz results/h200
cut -c1-170 $OUT/main_gpu.txt
