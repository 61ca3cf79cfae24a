# Session 42, call 1 (a plain run: nvidia-h200 or an H100, named in call1-gpu.txt): the raster
# candidates' GPU check, then the whole gemm_llama grid (120 shapes) with cuBLAS, own CUTLASS and
# own Triton in one run, tuners' capped re-time and the power settle on (issue 20.1); resumed by call 2.
set -u
t0=$(date +%s)
. scripts/device_env.sh || exit 1
export TRITON_INTERPRET=0 HARNESS_CACHE_DIR=/tmp/hcache TRITON_CACHE_DIR=/tmp/tcache
export $(cat .cache/gitid)
R=results/_scratch/gpu; L=$R/_logs; mkdir -p $L
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm,driver_version --format=csv,noheader | tee $L/call1-gpu.txt
T=tests/cutlass/test_gpu_cutlass.py::test_gemm_config_matches_fp32
timeout 200 python3 -m pytest -q -n 0 -m gpu $(for i in 0 1 2 3; do for c in 128x256 256x128; do echo "$T[mnk$i-nt-sm90-coop-$c]"; done; done) > $L/raster_gpu_tests.txt 2>&1
rc=$?; echo "raster tests rc=$rc t=$(( $(date +%s) - t0 )): $(tail -1 $L/raster_gpu_tests.txt)"
[ $rc -eq 0 ] || { tail -30 $L/raster_gpu_tests.txt; exit 1; }
timeout -s INT $(( 560 - ($(date +%s) - t0) )) python3 -m harness.cli run sweep=gemm_llama 'sweep.groups.0.providers=[cublas,own-cutlass,own-triton]' \
  max_points=360 results_dir=$R run_id=gemm_llama-settled progress=false > $L/gemm_llama-settled-call1.txt 2>&1
echo "rc=$? t=$(( $(date +%s) - t0 )): $(tail -1 $L/gemm_llama-settled-call1.txt)"
tar cJf $OUT/cutlass-cache.tar.xz -C /tmp/cutlass-cache . 2>/dev/null
cp -r /tmp/hcache/tune $L/tune-cache-call1 2>/dev/null; tar czf $OUT/results.tgz $R
python3 scripts/gemm_ratio_table.py $R/gemm_llama-settled 2>&1 | tail -25
