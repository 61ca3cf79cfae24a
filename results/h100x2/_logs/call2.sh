# Session 40, call 2 on nvidia-h100-x2: issue 20's decode GEMMs on GPU 0, issue 21's CuTe FMHAs on GPU 1, in parallel.
set -u
t0=$(date +%s)
. scripts/device_env.sh || exit 1
export NVSHMEM_DISABLE_NVLS=1 TRITON_INTERPRET=0 HARNESS_CACHE_DIR=/tmp/hcache TRITON_CACHE_DIR=/tmp/tcache
export $(cat .cache/gitid)
R=results/_scratch/h100; L=$R/_logs; mkdir -p $L
timeout 60 python3 -m pytest -q -m gpu -n 0 -p no:cacheprovider tests/collectives/test_collective_gpu.py > $L/collectives_gpu_tests.txt 2>&1
echo "collectives GPU tests: $(tail -1 $L/collectives_gpu_tests.txt) t=$(( $(date +%s) - t0 ))"
h() { local b=$1; shift; local id=$1; shift
  timeout -s INT $b python3 -m harness.cli run "$@" results_dir=$R run_id=$id progress=false > $L/$id.txt 2>&1
  echo "$id rc=$? t=$(( $(date +%s) - t0 )) s: $(tail -1 $L/$id.txt)"; }
( export CUDA_VISIBLE_DEVICES=0
  timeout 100 python3 -m pytest -q -m gpu -n 0 -p no:cacheprovider tests/cutlass/test_gpu_cutlass.py -k "swapab-dp and nt" > $L/cutlass_dp_gpu_tests.txt 2>&1
  echo "dp GPU tests: $(tail -1 $L/cutlass_dp_gpu_tests.txt) t=$(( $(date +%s) - t0 ))"
  h 420 gemm_llama-decode-dp sweep=gemm_llama 'sweep.groups.0.providers=[cublas,own-cutlass]' 'sweep.groups.0.product.m=[1,2,4,8,16,32,64]' ) &
( export CUDA_VISIBLE_DEVICES=1
  timeout 150 python3 -m pytest -q -m gpu -n 0 -p no:cacheprovider tests/cutlass/test_gpu_cutlass.py -k "fmha and not sm80" > $L/fa3_gpu_tests-r5.txt 2>&1
  echo "fmha GPU tests: $(tail -1 $L/fa3_gpu_tests-r5.txt) t=$(( $(date +%s) - t0 ))"
  h 150 fa3-ladder-r5 sweep=ladder 'providers=[own-cutlass-fa3,own-cutlass-fa3-no-overlap,own-cutlass-fa3-no-pingpong-no-overlap,own-cutlass-sm90,sdpa-cudnn]'
  h 200 fmha_prefill-fa3-r5 sweep=fmha_prefill 'providers=[sdpa-cudnn,own-cutlass-fa3]' ) &
wait
tar czf $OUT/results.tgz $R
python3 scripts/gemm_ratio_table.py $R/gemm_llama-decode-dp 2>&1 | tail -40
python3 - <<'PY'
from harness.store import read_rows
R = "results/_scratch/h100"
for run in ("fa3-ladder-r5", "fmha_prefill-fa3-r5"):
    try:
        df = read_rows(f"{R}/{run}")
        df = df[df.op == "attention"]
        print(run, df.groupby(["status"]).size().to_dict())
        print(df[["provider", "problem", "status", "tflops"]].sort_values(["problem", "provider"]).to_string(index=False)[:3000])
    except Exception as e:
        print(run, e)
PY
